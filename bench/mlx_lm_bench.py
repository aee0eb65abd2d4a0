#!/usr/bin/env python3
"""mlx-lm's side of the benchmark: its own model code and generation loop (generate_step,
prefill in steps of 2048, pipelined decode), timed the way its stream_generate reports speed.

    mlx_lm_bench.py MODEL_DIR PROMPT_TOKENS GEN_TOKENS [KV_BITS]  → one JSON line

With KV_BITS (4 or 8), keys and values are quantized in groups of 64 from the first token
(`quantized_kv_start=0`, as `confab --kv-bits` does), and the line also gives the cache's bytes.

The prompt is the same synthetic token sequence `confab bench` uses (a fixed LCG), one warm-up
run first, end-of-sequence ignored.
"""
import json
import sys
import time

import mlx.core as mx
from mlx_lm.generate import generate_step
from pathlib import Path

from mlx_lm.utils import load_model


def synthetic_prompt(length: int, vocab: int) -> list:
    """Same sequence as crates/cli/src/commands/bench.rs: synthetic_prompt."""
    state, out = 0x2545F4914F6CDD1D, []
    for _ in range(length):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append((state >> 33) % vocab)
    return out


def run(model, prompt, gen_tokens, kv_bits=None):
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    quantize = {"kv_bits": kv_bits, "kv_group_size": 64, "quantized_kv_start": 0} if kv_bits else {}
    mx.reset_peak_memory()
    tic = time.perf_counter()
    n = 0
    steps = generate_step(mx.array(prompt), model, max_tokens=gen_tokens, prompt_cache=cache, **quantize)
    for n, (token, _) in enumerate(steps):
        if n == 0:
            prompt_time = time.perf_counter() - tic
            tic = time.perf_counter()
    gen_time = time.perf_counter() - tic
    return {"prefill_tokens_per_s": len(prompt) / prompt_time, "decode_tokens_per_s": n / gen_time,
            "time_to_first_token_ms": prompt_time * 1e3, "peak_memory_gb": mx.get_peak_memory() / 1e9,
            "keys_values_bytes": sum(c.nbytes for c in cache)}


def main() -> None:
    path, prompt_tokens, gen_tokens = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    kv_bits = int(sys.argv[4]) if len(sys.argv) > 4 else None
    model, config = load_model(Path(path))
    # Vision-language configs (Qwen3.5) keep the text model's size under text_config.
    vocab = config.get("vocab_size") or config["text_config"]["vocab_size"]
    prompt = synthetic_prompt(prompt_tokens, vocab)
    run(model, prompt, gen_tokens, kv_bits)  # warm-up
    print(json.dumps(run(model, prompt, gen_tokens, kv_bits)))


if __name__ == "__main__":
    main()
