#!/usr/bin/env python3
"""Confab with MLX's attention (before: CONFAB_CPU_ATTENTION=0, otherwise the same binary),
Confab with its CPU attention kernel (after), and mlx-lm 0.32.2, interleaved, one run each,
float32 SmolLM2-135M; prints tokens/s and the ratios to mlx-lm.

    python3 bench/cpu_attention.py [PROMPTS [GEN_TOKENS]]   (default 1024,4096 and 64)

Uses bench/run.py's setup (venv, checkpoints, release build) and its two runners.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402


def main() -> None:
    prompts = [int(n) for n in (sys.argv[1] if len(sys.argv) > 1 else "1024,4096").split(",")]
    gen = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    run.setup()
    f32 = os.path.join(run.WORK, "smollm2-f32")
    for n in prompts:
        os.environ["CONFAB_CPU_ATTENTION"] = "0"
        before = run.confab(f32, n, "float32", gen)
        del os.environ["CONFAB_CPU_ATTENTION"]
        after = run.confab(f32, n, "float32", gen)
        theirs = run.mlx_lm(f32, n, gen)
        for key, what in (("prefill_tokens_per_s", "prefill tok/s"), ("decode_tokens_per_s", "decode tok/s")):
            b, a, t = before[key], after[key], theirs[key]
            print(f"prompt {n:>5} {what:<14} before {b:7.1f} ({b / t:.2f}x) | after {a:7.1f} ({a / t:.2f}x) | mlx-lm {t:7.1f}",
                  flush=True)
        print(f"prompt {n:>5} peak MB        before {before['peak_memory_gb'] * 1e3:7.0f} | after "
              f"{after['peak_memory_gb'] * 1e3:7.0f} | mlx-lm {theirs['peak_memory_gb'] * 1e3:7.0f}", flush=True)


if __name__ == "__main__":
    main()
