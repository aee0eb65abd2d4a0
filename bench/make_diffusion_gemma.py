#!/usr/bin/env python3
"""A random-weight DiffusionGemma checkpoint with the released model's layer dimensions
(google/diffusiongemma-26B-A4B-it: Gemma 4 26B-A4B's text stack) at reduced depth, for
bench/diffusion_gemma.py: speed does not depend on the weights' values, and nothing downloads.

    python3 bench/make_diffusion_gemma.py OUT [--layers 2] [--dtype float16] [--max-steps 48]

Every layer as released: hidden 2816, 16 query heads, sliding layers 8 KV heads of 256 (window 1024),
full layers 2 KV heads of 512 with keys doubling as values, a dense MLP 2112 wide beside 128 routed
experts 704 wide (8 per token), the 262,144-token vocabulary (a word-level tokenizer.json covering it),
256-token canvases, and its generation_config.json's denoising keys (48 steps at most). `--layers N` keeps N layers (the last full,
the others sliding, 5:1 as released); the default 2 is about 2.3 billion parameters, 4.5 GB in float16,
1 about 1.5 billion. Random weights never stop a canvas early: each runs max_denoising_steps steps, which
--max-steps lowers so that a CPU run fits (the per-step speed is what compares).
Needs numpy and safetensors only (the bench venv, or the reference venv). Written once: an existing
OUT with the same config is kept.
"""
import argparse
import json
import os

import numpy as np

HIDDEN, HEADS, HEAD_DIM, KV_HEADS = 2816, 16, 256, 8
GLOBAL_HEAD_DIM, GLOBAL_KV_HEADS = 512, 2
DENSE, EXPERTS, TOP_K, EXPERT_WIDTH = 2112, 128, 8, 704
VOCAB, WINDOW, CANVAS = 262_144, 1024, 256


def config(layers: int) -> dict:
    kinds = ["full_attention" if (i + 1) % 6 == 0 or i == layers - 1 else "sliding_attention" for i in range(layers)]
    text = {
        "model_type": "diffusion_gemma_text", "vocab_size": VOCAB, "hidden_size": HIDDEN, "intermediate_size": DENSE,
        "num_hidden_layers": layers, "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM, "layer_types": kinds, "sliding_window": WINDOW, "num_experts": EXPERTS,
        "top_k_experts": TOP_K, "moe_intermediate_size": EXPERT_WIDTH, "max_position_embeddings": 262_144,
        "rms_norm_eps": 1e-6, "hidden_activation": "gelu_pytorch_tanh", "pad_token_id": 0, "eos_token_id": [1, 106],
        "bos_token_id": 2, "tie_word_embeddings": True, "attention_bias": False,
        "per_layer_config": {str(i): {"head_dim": GLOBAL_HEAD_DIM, "num_key_value_heads": GLOBAL_KV_HEADS}
                             for i, k in enumerate(kinds) if k == "full_attention"},
        "rope_parameters": {
            "sliding_attention": {"rope_type": "default", "rope_theta": 10_000.0},
            "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1_000_000.0},
        },
    }
    return {"model_type": "diffusion_gemma", "architectures": ["DiffusionGemmaForBlockDiffusion"], "text_config": text,
            "canvas_length": CANVAS, "tie_word_embeddings": True, "image_token_id": 258_880,
            "boi_token_id": 255_999, "eoi_token_id": 258_882}


def tensors(cfg: dict, dtype, rng) -> dict:
    """transformers' names (the decoder's copy of the tied stack, as save_pretrained writes it)."""
    t = cfg["text_config"]
    out = {}

    def add(name, shape, scale=None):
        scale = scale if scale is not None else shape[-1] ** -0.5
        out[name] = (rng.standard_normal(shape, dtype=np.float32) * scale).astype(dtype)

    def norm(name, width):
        out[name] = (1.0 + 0.1 * rng.standard_normal(width, dtype=np.float32)).astype(dtype)

    add("model.decoder.embed_tokens.weight", (VOCAB, HIDDEN), 0.02)
    for i, kind in enumerate(t["layer_types"]):
        p = f"model.decoder.layers.{i}."
        full = kind == "full_attention"
        d, kv = (GLOBAL_HEAD_DIM, GLOBAL_KV_HEADS) if full else (HEAD_DIM, KV_HEADS)
        add(p + "self_attn.q_proj.weight", (HEADS * d, HIDDEN))
        add(p + "self_attn.k_proj.weight", (kv * d, HIDDEN))
        if not full:
            add(p + "self_attn.v_proj.weight", (kv * d, HIDDEN))
        add(p + "self_attn.o_proj.weight", (HIDDEN, HEADS * d))
        norm(p + "self_attn.q_norm.weight", d)
        norm(p + "self_attn.k_norm.weight", d)
        add(p + "mlp.gate_proj.weight", (DENSE, HIDDEN))
        add(p + "mlp.up_proj.weight", (DENSE, HIDDEN))
        add(p + "mlp.down_proj.weight", (HIDDEN, DENSE))
        add(p + "router.proj.weight", (EXPERTS, HIDDEN))
        norm(p + "router.scale", HIDDEN)
        norm(p + "router.per_expert_scale", EXPERTS)
        add(p + "experts.gate_up_proj", (EXPERTS, 2 * EXPERT_WIDTH, HIDDEN))
        add(p + "experts.down_proj", (EXPERTS, HIDDEN, EXPERT_WIDTH))
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm",
                  "pre_feedforward_layernorm_2", "post_feedforward_layernorm_1", "post_feedforward_layernorm_2"):
            norm(p + n + ".weight", HIDDEN)
        out[p + "layer_scalar"] = np.ones(1, dtype=dtype)
        out[f"model.encoder.language_model.layers.{i}.layer_scalar"] = np.ones(1, dtype=dtype)
    norm("model.decoder.norm.weight", HIDDEN)
    s = "model.decoder.self_conditioning."
    norm(s + "pre_norm.weight", HIDDEN)
    add(s + "gate_proj.weight", (DENSE, HIDDEN))
    add(s + "up_proj.weight", (DENSE, HIDDEN))
    add(s + "down_proj.weight", (HIDDEN, DENSE), 0.1 * DENSE ** -0.5)
    return out


def tokenizer(vocab: int) -> dict:
    """A word-level tokenizer.json covering every id (`<t5>` is id 5; 0, 1 and 2 are pad, end of turn
    and begin): prompts go in as ids, and any id a random model writes decodes."""
    names = {0: "<pad>", 1: "<eos>", 2: "<bos>"}
    words = {names.get(i, f"<t{i}>"): i for i in range(vocab)}
    special = [{"id": i, "content": n, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
                "special": True} for i, n in names.items()]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": special, "normalizer": None,
            "pre_tokenizer": {"type": "WhitespaceSplit"}, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": words, "unk_token": "<pad>"}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    parser.add_argument("--max-steps", type=int, default=48, help="max_denoising_steps (random weights never stop early)")
    args = parser.parse_args()
    cfg = config(args.layers)
    cfg["dtype"] = args.dtype
    cfg["bench_max_denoising_steps"] = args.max_steps  # part of what makes an existing folder reusable
    cfg["text_config"]["dtype"] = args.dtype
    path = os.path.join(args.out, "config.json")
    if os.path.exists(path) and json.load(open(path)) == cfg and os.path.exists(os.path.join(args.out, "model.safetensors")):
        print(args.out)
        return
    from safetensors.numpy import save_file
    os.makedirs(args.out, exist_ok=True)
    save_file(tensors(cfg, np.dtype(args.dtype), np.random.default_rng(0)), os.path.join(args.out, "model.safetensors"),
              metadata={"format": "pt"})
    with open(os.path.join(args.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 2, "eos_token_id": [1, 106], "pad_token_id": 0, "max_denoising_steps": args.max_steps,
                   "sampler_config": {"_cls_name": "EntropyBoundSamplerConfig", "entropy_bound": 0.1},
                   "t_min": 0.4, "t_max": 0.8, "stability_threshold": 1, "confidence_threshold": 0.005}, f, indent=2)
    with open(os.path.join(args.out, "tokenizer.json"), "w") as f:
        json.dump(tokenizer(VOCAB), f)
    with open(path, "w") as f:  # last: its presence means the folder is whole
        json.dump(cfg, f, indent=2)
    print(args.out)


if __name__ == "__main__":
    main()
