#!/usr/bin/env python3
"""gpt-oss decode on the CPU with its experts MXFP4-packed: MLX's path (CONFAB_CPU_KERNELS=0:
`gather_qmm` in `mxfp4` mode, MLX's matmuls elsewhere) against ours (Confab's CPU kernels: the
experts through `cpu_linear`'s MXFP4 reader, see crates/engine/src/model/layers/mxfp4_experts.rs),
the same binary and checkpoint, alternating, in one run; prints both and the ratio.

    /opt/confab-ref/bin/python bench/mxfp4_experts.py [--confab target/release/confab] [--repeats 3]

The checkpoint is random (speed does not depend on the weights' values) at gpt-oss-20b's widths
(hidden 2880, expert width 2880, 64 query and 8 KV heads of 64, 4 experts a token) with reduced
depth (2 layers, sliding then full) and 8 experts a layer (gpt-oss-20b has 32; a token's work is
the same, the file smaller), the tiny fixture's 384-token vocabulary and tokenizer. Written once
under target/bench/gpt_oss_mxfp4 (about 0.5 GB). Needs numpy and safetensors (the reference venv).
The switch also turns off the attention and dense-linear kernels, so the ratio is the whole
model's on the CPU, of which the experts are most of the work read per token.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess

import numpy as np
from safetensors.numpy import save_file

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
FIXTURE = os.path.join(ROOT, "tests", "reference", "fixtures", "tiny", "gpt_oss_mxfp4")
HIDDEN, EXPERT, EXPERTS, TOP_K, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 2880, 2880, 8, 4, 64, 8, 64, 384
LAYERS = ["sliding_attention", "full_attention"]


def make(out: str) -> None:
    if os.path.exists(os.path.join(out, "model.safetensors")):
        return
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)

    def dense(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    def mxfp4(rows, inputs):
        blocks = rng.integers(0, 256, (EXPERTS, rows, inputs // 32, 16), dtype=np.uint8)
        scales = rng.integers(118, 124, (EXPERTS, rows, inputs // 32), dtype=np.uint8)
        return blocks, scales

    t = {"model.embed_tokens.weight": dense(VOCAB, HIDDEN), "lm_head.weight": dense(VOCAB, HIDDEN),
         "model.norm.weight": np.ones(HIDDEN, np.float32)}
    for i in range(len(LAYERS)):
        p = f"model.layers.{i}"
        t[f"{p}.input_layernorm.weight"] = np.ones(HIDDEN, np.float32)
        t[f"{p}.post_attention_layernorm.weight"] = np.ones(HIDDEN, np.float32)
        for name, rows, cols in [("q", HEADS * HEAD_DIM, HIDDEN), ("k", KV_HEADS * HEAD_DIM, HIDDEN),
                                 ("v", KV_HEADS * HEAD_DIM, HIDDEN), ("o", HIDDEN, HEADS * HEAD_DIM)]:
            t[f"{p}.self_attn.{name}_proj.weight"] = dense(rows, cols)
            t[f"{p}.self_attn.{name}_proj.bias"] = dense(rows)
        t[f"{p}.self_attn.sinks"] = dense(HEADS)
        t[f"{p}.mlp.router.weight"] = dense(EXPERTS, HIDDEN)
        t[f"{p}.mlp.router.bias"] = dense(EXPERTS)
        e = f"{p}.mlp.experts"
        t[f"{e}.gate_up_proj_blocks"], t[f"{e}.gate_up_proj_scales"] = mxfp4(2 * EXPERT, HIDDEN)
        t[f"{e}.gate_up_proj_bias"] = dense(EXPERTS, 2 * EXPERT)
        t[f"{e}.down_proj_blocks"], t[f"{e}.down_proj_scales"] = mxfp4(HIDDEN, EXPERT)
        t[f"{e}.down_proj_bias"] = dense(EXPERTS, HIDDEN)
    with open(os.path.join(FIXTURE, "config.json")) as f:
        config = json.load(f)
    config.update(hidden_size=HIDDEN, intermediate_size=EXPERT, num_local_experts=EXPERTS, num_experts_per_tok=TOP_K,
                  num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, layer_types=LAYERS,
                  num_hidden_layers=len(LAYERS), sliding_window=128, max_position_embeddings=4096)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for name in ["generation_config.json", "tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(os.path.join(FIXTURE, name), out)
    save_file(t, os.path.join(out, "model.safetensors"))


def run(confab: str, model: str, kernels: str, prompt: int, gen: int) -> dict:
    env = dict(os.environ, CONFAB_CPU_KERNELS=kernels)
    out = subprocess.run([confab, "bench", "--model", model, "--prompt-tokens", str(prompt), "--gen-tokens", str(gen),
                          "--dtype", "bfloat16", "--json"], check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--confab", default=os.path.join(ROOT, "target", "release", "confab"))
    ap.add_argument("--model", default=os.path.join(ROOT, "target", "bench", "gpt_oss_mxfp4"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--prompt-tokens", type=int, default=32)
    ap.add_argument("--gen-tokens", type=int, default=32)
    args = ap.parse_args()
    make(args.model)
    decode = {"0": [], "1": []}
    prefill = {"0": [], "1": []}
    for _ in range(args.repeats):
        for kernels in ["0", "1"]:
            r = run(args.confab, args.model, kernels, args.prompt_tokens, args.gen_tokens)
            decode[kernels].append(r["decode_tokens_per_s"])
            prefill[kernels].append(r["prefill_tokens_per_s"])
    med = {k: statistics.median(v) for k, v in decode.items()}
    pre = {k: statistics.median(v) for k, v in prefill.items()}
    print(f"gpt-oss MXFP4 experts on the CPU ({len(LAYERS)} layers, hidden {HIDDEN}, {EXPERTS} experts, top {TOP_K}, "
          f"bfloat16; {args.prompt_tokens}-token prompt, {args.gen_tokens} generated; median of {args.repeats})")
    print(f"  decode tok/s   MLX {med['0']:8.2f}   ours {med['1']:8.2f}   ratio {med['1'] / med['0']:.2f}x")
    print(f"  prefill tok/s  MLX {pre['0']:8.2f}   ours {pre['1']:8.2f}   ratio {pre['1'] / pre['0']:.2f}x")


if __name__ == "__main__":
    main()
