#!/usr/bin/env python3
"""Benchmark checkpoints made from the default model's GGUF, so Confab and mlx-lm run the same
weights: mlx-lm 0.32.2 has no GGUF loader.

    make_models.py GGUF OUT_DIR CONFAB_BINARY

Writes OUT_DIR/{smollm2-f32, smollm2-bf16, smollm2-4bit}: Hugging Face folders (config.json in
transformers-4 keys, which mlx-lm reads; tokenizer.json exported by `confab export-tokenizer`). The
f32 weights are the GGUF's dequantized in float32, Q/K rows put back in Hugging Face's order
(llama.cpp permutes them for its RoPE). bf16 is that cast; 4-bit is mlx-lm's own quantization
(group 64, float32 scales). Cached: an existing folder is kept.
"""
import json
import os
import subprocess
import sys

import mlx.core as mx
import mlx.nn as nn
from mlx.utils import tree_flatten

RENAMES = {"attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
           "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
           "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm"}


def unpermute(w: mx.array, heads: int) -> mx.array:
    """Undo llama.cpp's Q/K row permutation (interleaved pairs → halves)."""
    out, inp = w.shape
    return w.reshape(heads, out // heads // 2, 2, inp).swapaxes(1, 2).reshape(out, inp)


def f32_weights(gguf: str):
    w, meta = mx.load(gguf, return_metadata=True)
    num = lambda k: meta[k].item()
    heads, kv_heads = num("llama.attention.head_count"), num("llama.attention.head_count_kv")

    def tensor(stem: str) -> mx.array:
        if stem + ".scales" not in w:
            return w[stem + ".weight"].astype(mx.float32)
        bits = w[stem + ".weight"].shape[1] // w[stem + ".scales"].shape[1]
        return mx.dequantize(w[stem + ".weight"], w[stem + ".scales"].astype(mx.float32),
                             w[stem + ".biases"].astype(mx.float32), group_size=32, bits=bits)

    out = {"model.embed_tokens.weight": tensor("token_embd"), "model.norm.weight": tensor("output_norm")}
    for i in range(num("llama.block_count")):
        for g, h in RENAMES.items():
            t = tensor(f"blk.{i}.{g}")
            if g == "attn_q":
                t = unpermute(t, heads)
            elif g == "attn_k":
                t = unpermute(t, kv_heads)
            out[f"model.layers.{i}.{h}.weight"] = t
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": num("llama.embedding_length"), "intermediate_size": num("llama.feed_forward_length"),
        "num_hidden_layers": num("llama.block_count"), "num_attention_heads": heads,
        "num_key_value_heads": kv_heads, "rms_norm_eps": num("llama.attention.layer_norm_rms_epsilon"),
        "rope_theta": num("llama.rope.freq_base"), "max_position_embeddings": num("llama.context_length"),
        "vocab_size": out["model.embed_tokens.weight"].shape[0], "tie_word_embeddings": True,
        "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "float32",
    }
    return out, config


def write(folder: str, weights: dict, config: dict, tokenizer_dir: str) -> None:
    os.makedirs(folder, exist_ok=True)
    mx.save_safetensors(os.path.join(folder, "model.safetensors"), weights, metadata={"format": "mlx"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
    for name in os.listdir(tokenizer_dir):
        with open(os.path.join(tokenizer_dir, name), "rb") as src, open(os.path.join(folder, name), "wb") as dst:
            dst.write(src.read())


def main() -> None:
    gguf, out_dir, confab = sys.argv[1], sys.argv[2], sys.argv[3]
    names = ["smollm2-f32", "smollm2-bf16", "smollm2-4bit"]
    if all(os.path.exists(os.path.join(out_dir, n, "config.json")) for n in names):
        return
    tok_dir = os.path.join(out_dir, "tokenizer")
    subprocess.run([confab, "export-tokenizer", "--model", gguf, "--out", tok_dir], check=True)

    weights, config = f32_weights(gguf)
    write(os.path.join(out_dir, "smollm2-f32"), weights, config, tok_dir)
    write(os.path.join(out_dir, "smollm2-bf16"), {k: v.astype(mx.bfloat16) for k, v in weights.items()},
          {**config, "torch_dtype": "bfloat16"}, tok_dir)

    from mlx_lm.models import llama
    from mlx_lm.utils import quantize_model
    model = llama.Model(llama.ModelArgs.from_dict(config))
    model.load_weights(list(weights.items()))
    model, q_config = quantize_model(model, dict(config), group_size=64, bits=4)
    write(os.path.join(out_dir, "smollm2-4bit"), dict(tree_flatten(model.parameters())), q_config, tok_dir)


if __name__ == "__main__":
    main()
