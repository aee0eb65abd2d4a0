#!/usr/bin/env python3
"""Keys/values memory and decode speed at a long context: full precision against --kv-bits 8 and
--kv-bits 4 (group 64), the same `confab bench` workload (a synthetic prompt, greedy, eos ignored),
interleaved, side by side with the ratios to full precision.

    python3 bench/kv_quant.py [--prompt 4096] [--gen 64] [--repeats 2] [--model PATH] [--binary PATH]
                              [--mlx-lm FOLDER [--python PY]]

With --mlx-lm (a float32 Hugging Face folder of the same weights, e.g. `.deps/bench/smollm2-f32`
from bench/run.py's setup), mlx-lm 0.32.2 runs beside each precision (bench/mlx_lm_bench.py with
`kv_bits`, group 64, `quantized_kv_start=0`), and its cache's `nbytes` is printed beside ours.

Keys/values: what the full-attention layers hold at the end (`Done`'s state bytes: buffers grown
in steps of 256 positions), and per token (that over the positions held). Peak: MLX's peak
memory during the run (weights, keys/values, activations). Decode and prefill tok/s: the best of
the repeats. The default model is the app's (SmolLM2-135M-Instruct, float32 activations on a CPU);
the binary is `$CARGO_TARGET_DIR/debug/confab` (the dev profile is optimised) unless given.
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
PRECISIONS = [("full", []), ("8-bit", ["--kv-bits", "8"]), ("4-bit", ["--kv-bits", "4"])]


def bench(binary, model, prompt, gen, extra):
    cmd = [binary, "bench", "--prompt-tokens", str(prompt), "--gen-tokens", str(gen), "--json", *extra]
    if model:
        cmd += ["--model", model]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def mlx_lm(python, folder, prompt, gen, extra):
    cmd = [python, os.path.join(ROOT, "bench", "mlx_lm_bench.py"), folder, str(prompt), str(gen), *extra[1:]]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])


def best_of(r):
    return {"kv": r[-1]["keys_values_bytes"], "decode": max(x["decode_tokens_per_s"] for x in r),
            "prefill": max(x["prefill_tokens_per_s"] for x in r), "peak": min(x["peak_memory_gb"] for x in r)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt", type=int, default=4096)
    parser.add_argument("--gen", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--model", default="")
    parser.add_argument("--binary", default=os.path.join(TARGET, "debug", "confab"))
    parser.add_argument("--mlx-lm", default="", help="a float32 folder of the same weights for mlx-lm's side")
    parser.add_argument("--python", default=os.path.join(ROOT, ".deps", "bench", "venv", "bin", "python"))
    args = parser.parse_args()
    runs = {name: [] for name, _ in PRECISIONS}
    theirs = {name: [] for name, _ in PRECISIONS}
    for _ in range(args.repeats):
        for name, extra in PRECISIONS:
            runs[name].append(bench(args.binary, args.model, args.prompt, args.gen, extra))
            if args.mlx_lm:
                theirs[name].append(mlx_lm(args.python, args.mlx_lm, args.prompt, args.gen, extra))
    positions = args.prompt + args.gen
    best = {name: best_of(r) for name, r in runs.items()}
    full = best["full"]
    print(f"prompt {args.prompt} + {args.gen} generated, best of {args.repeats}; ratios to full precision")
    print(f"{'':6} {'keys/values MB':>15} {'bytes/token':>12} {'decode tok/s':>14} {'prefill tok/s':>15} {'peak MB':>9}")
    for name, b in best.items():
        print(f"{name:6} {b['kv'] / 1e6:9.1f} ({b['kv'] / full['kv']:.2f}x) {b['kv'] / positions:12.0f} "
              f"{b['decode']:7.1f} ({b['decode'] / full['decode']:.2f}x) {b['prefill']:8.1f} ({b['prefill'] / full['prefill']:.2f}x) "
              f"{b['peak'] * 1e3:9.0f}", flush=True)
    if args.mlx_lm:
        print("mlx-lm 0.32.2 (its cache's nbytes at the end; ratios to Confab at the same precision)")
        for name, r in theirs.items():
            t, ours = best_of(r), best[name]
            print(f"{name:6} {t['kv'] / 1e6:9.1f} ({ours['kv'] / t['kv']:.2f}x) {t['kv'] / positions:12.0f} "
                  f"{t['decode']:7.1f} ({ours['decode'] / t['decode']:.2f}x) {t['prefill']:8.1f} "
                  f"({ours['prefill'] / t['prefill']:.2f}x) {t['peak'] * 1e3:9.0f}", flush=True)


if __name__ == "__main__":
    main()
