#!/usr/bin/env python3
"""Reference for quantized keys/values on the default model at 1,500 tokens: mlx-lm 0.32.2's
`QuantizedKVCache` on SmolLM2-135M-Instruct's float32 weights (the Q4_1 GGUF dequantized).

    /opt/confab-ref/bin/python tests/reference/make_kv_quant_smollm2.py [GGUF]

Needs mlx[cpu] 0.32.2, mlx-lm 0.32.2, gguf and numpy (no torch). Steps:
  1. The GGUF's tensors dequantized by `gguf` (float32) and written as a Hugging Face folder in
     a temporary directory (not committed: 540 MB): llama.cpp's names mapped back, its
     row permutation of q_proj and k_proj undone, config.json in transformers-4 keys
     (`rope_theta`: mlx-lm 0.32.2 reads no other) from the GGUF's metadata. MLX dequantizes
     Q4_1 the same way (scale · q + bias in float32, the product exact), so Confab's
     `--dtype float32` load of the GGUF holds the same weights.
  2. A check of that folder: mlx-lm's full-precision first-step logits on the first chat of
     make_smollm2_reference.py against transformers' (fixtures/smollm2_logits.npy).
  3. A chat prompt of at most PROMPT_TOKENS tokens (a generated text about numbered rooms in
     the model's chat template, tokenized with the GGUF's vocabulary as `confab
     export-tokenizer` writes it: transformers' GGUF tokenizer needs torch, and the ids are
     only the input both sides are given; CONFAB_BIN names the binary, target/debug/confab by
     default), fed in one call, then STEPS argmax steps, eos ignored, with a KVCache (`full`)
     and a QuantizedKVCache of 8 and 4 bits in groups of 64 from the first token (what
     `generate_step(..., kv_bits=b, kv_group_size=64, quantized_kv_start=0)` does).

  4. The same runs on the same weights in the GGUF's layout (q_proj and k_proj rows interleaved
     as llama.cpp stores them, traditional RoPE: what Confab computes on the GGUF): the same
     function with another summation order in attention. How far that moves mlx-lm's own
     results is how sensitive each precision is to summation order at this length.

Writes fixtures/kv_quant_smollm2.json (prompt ids, per run the greedy ids, the top-1 minus
top-2 gap at each step, and `gguf_layout`: that run's ids and its first logits' largest
difference from the standard layout's) and fixtures/kv_quant_smollm2_<run>.logits.npy (the
first step's float32 logits, standard layout).
"""
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
DEFAULT = os.path.expanduser("~/.local/share/confab/models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf")
PROMPT_TOKENS = 1500
STEPS = 16
RUNS = {"full": None, "kv8g64": (8, 64), "kv4g64": (4, 64)}

NAMES = {
    "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj", "attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
}


def field(reader, key):
    f = reader.fields[key]
    value = f.parts[f.data[0]]
    return value.tobytes().decode() if f.types and f.types[0].name == "STRING" else value.item()


def permute(w, heads):
    """llama.cpp's converter's row order for q_proj and k_proj (rotary halves interleaved)."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def to_gguf_layout(folder, config):
    """The folder's q_proj and k_proj rows as the GGUF holds them, with traditional RoPE."""
    import mlx.core as mx

    path = folder / "model.safetensors"
    weights = {k: np.array(v) for k, v in mx.load(str(path)).items()}
    for name, w in weights.items():
        if name.endswith("q_proj.weight"):
            weights[name] = permute(w, config["num_attention_heads"])
        elif name.endswith("k_proj.weight"):
            weights[name] = permute(w, config["num_key_value_heads"])
    mx.save_safetensors(str(path), {k: mx.array(v) for k, v in weights.items()})
    (folder / "config.json").write_text(json.dumps({**config, "rope_traditional": True}, indent=1))


def unpermute(w, heads):
    """llama.cpp's converter interleaves the two rotary halves of each head's rows; put them back."""
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_folder(gguf_path, out):
    import gguf
    import mlx.core as mx

    reader = gguf.GGUFReader(gguf_path)
    arch = field(reader, "general.architecture")
    assert arch == "llama", arch
    heads = field(reader, "llama.attention.head_count")
    kv_heads = field(reader, "llama.attention.head_count_kv")
    weights = {}
    for t in reader.tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        w = w.reshape([int(d) for d in reversed(t.shape)])
        parts = t.name.split(".")
        if t.name == "token_embd.weight":
            name = "model.embed_tokens.weight"
        elif t.name == "output_norm.weight":
            name = "model.norm.weight"
        elif t.name == "output.weight":
            name = "lm_head.weight"
        else:
            assert parts[0] == "blk", t.name
            if parts[2] == "attn_q":
                w = unpermute(w, heads)
            elif parts[2] == "attn_k":
                w = unpermute(w, kv_heads)
            name = f"model.layers.{parts[1]}.{NAMES[parts[2]]}.weight"
        weights[name] = mx.array(w)
    mx.save_safetensors(str(out / "model.safetensors"), weights)
    vocab = len(reader.fields["tokenizer.ggml.tokens"].data)
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": field(reader, "llama.embedding_length"),
        "intermediate_size": field(reader, "llama.feed_forward_length"),
        "num_hidden_layers": field(reader, "llama.block_count"),
        "num_attention_heads": heads, "num_key_value_heads": kv_heads,
        "rms_norm_eps": field(reader, "llama.attention.layer_norm_rms_epsilon"),
        "rope_theta": field(reader, "llama.rope.freq_base"),
        "max_position_embeddings": field(reader, "llama.context_length"),
        "vocab_size": vocab, "tie_word_embeddings": "lm_head.weight" not in weights,
        "hidden_act": "silu", "torch_dtype": "float32",
    }
    (out / "config.json").write_text(json.dumps(config, indent=1))
    return config


def prompt_text():
    """A long, plain text with facts to keep track of, and a question about them."""
    colours = ["red", "blue", "green", "yellow", "white", "black", "orange", "purple"]
    things = ["a lamp", "a clock", "a map", "a chair", "a book", "a plant", "a mirror", "a drum"]
    lines = []
    for n in range(1, 200):
        lines.append(f"Room {n} has {colours[n * 3 % 8]} walls and {things[n * 5 % 8]} by the window.")
    return "Here is a list of rooms in a large house.\n" + " ".join(lines) + "\nWhich rooms have a drum? Answer briefly."


def tokenize(gguf_path, tokens):
    import subprocess

    from tokenizers import Tokenizer

    confab = os.environ.get("CONFAB_BIN", os.path.join(HERE, "..", "..", "target", "debug", "confab"))
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([confab, "export-tokenizer", "--model", gguf_path, "--out", out], check=True)
        tok = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    text = prompt_text()
    while True:
        prompt = f"<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n"
        ids = tok.encode(prompt, add_special_tokens=False).ids
        if len(ids) <= tokens:
            return ids, prompt
        # Drop rooms from the end of the list until the prompt fits.
        head, _, question = text.rpartition("\n")
        text = head.rsplit(" Room ", 1)[0] + "\n" + question


def mlx_run(model, ids, quantization):
    import mlx.core as mx
    from mlx_lm.models.cache import KVCache, QuantizedKVCache

    if quantization is None:
        cache = [KVCache() for _ in model.layers]
    else:
        bits, group = quantization
        cache = [QuantizedKVCache(group_size=group, bits=bits) for _ in model.layers]
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    first = np.array(logits.astype(mx.float32))
    new, gaps = [], []
    for _ in range(STEPS):
        l = np.array(logits.astype(mx.float32))
        top = np.sort(l)[-2:]
        gaps.append(float(top[1] - top[0]))
        new.append(int(l.argmax()))
        logits = model(mx.array([[new[-1]]]), cache=cache)[0, -1]
    return {"greedy_ids": new, "gaps": gaps, "min_gap": min(gaps)}, first


def main():
    import mlx.core as mx
    from mlx_lm import __version__ as mlx_lm_version
    from mlx_lm.utils import load_model

    gguf_path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        config = write_folder(gguf_path, folder)
        model, _ = load_model(folder)
        mx.eval(model.parameters())

        chat = json.load(open(os.path.join(FIXTURES, "smollm2_greedy.json")))["chats"][0]
        want = np.load(os.path.join(FIXTURES, "smollm2_logits.npy"))
        got = np.array(model(mx.array([chat["prompt_ids"]]))[0, -1].astype(mx.float32))
        diff = float(np.abs(got - want).max())
        print(f"the folder against transformers (first chat): first logits max |diff| {diff:.2e}")
        assert diff < 1e-3, "the dequantized folder does not compute what transformers does"

        ids, prompt = tokenize(gguf_path, PROMPT_TOKENS)
        print(f"prompt: {len(ids)} tokens")
        runs, firsts = {}, {}
        for name, q in RUNS.items():
            run, first = mlx_run(model, ids, q)
            if q is not None:
                run.update({"bits": q[0], "group_size": q[1]})
            runs[name] = run
            np.save(os.path.join(FIXTURES, f"kv_quant_smollm2_{name}.logits.npy"), first.astype(np.float32))
            print(f"{name}: min gap {run['min_gap']:.3f}, ids {run['greedy_ids']}")
            firsts[name] = first

        to_gguf_layout(folder, config)
        model, _ = load_model(folder)
        mx.eval(model.parameters())
        for name, q in RUNS.items():
            run, first = mlx_run(model, ids, q)
            diff = float(np.abs(first - firsts[name]).max())
            runs[name]["gguf_layout"] = {"greedy_ids": run["greedy_ids"], "min_gap": run["min_gap"],
                                         "first_logits_max_diff": diff}
            same = sum(a == b for a, b in zip(run["greedy_ids"], runs[name]["greedy_ids"]))
            print(f"{name} in the GGUF's layout: first logits max |diff| {diff:.2e}, {same}/{STEPS} ids the same")
    compute = (f"mlx-lm {mlx_lm_version} (mlx {mx.__version__}) on the CPU, float32 weights (the Q4_1 GGUF "
               "dequantized by gguf) and activations; every layer's cache a QuantizedKVCache (or KVCache for "
               "`full`) from the first token; the prompt in one call, then a plain argmax loop, eos ignored")
    ref = {"compute": compute, "model": os.path.basename(gguf_path), "prompt": prompt, "prompt_ids": ids,
           "steps": STEPS, "runs": runs}
    with open(os.path.join(FIXTURES, "kv_quant_smollm2.json"), "w") as f:
        json.dump(ref, f, indent=None, ensure_ascii=False)


if __name__ == "__main__":
    main()
