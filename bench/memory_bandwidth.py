#!/usr/bin/env python3
"""The machine's memory-read limit, the bound on a decode step (which reads every weight once):
builds bench/memory_bandwidth.c with the system C compiler and runs it (a streaming sum of a
1 GiB buffer, one thread and two, best of 5 passes each), then prints, for the given weight
bytes per token, the decode tok/s that limit allows.

    python3 bench/memory_bandwidth.py [--weight-mb 115.0] [--runs 3]

The default is SmolLM2-135M-Instruct's GGUF as the CPU kernel reads it per decode step: the
Q4_1 linear layers (106.2 M weights, 4 bits each and a float32 scale and bias per 32: 79.6 MB)
and the Q8_0 tied output head (28.3 M weights, 8 bits each and the same per 32: 35.4 MB).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weight-mb", type=float, default=115.0, help="MB (10^6 bytes) read per decode step")
    parser.add_argument("--runs", type=int, default=3, help="runs of the program; the median is shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "memory_bandwidth")
        subprocess.run(["cc", "-O3", "-pthread", os.path.join(HERE, "memory_bandwidth.c"), "-o", exe], check=True)
        runs = [json.loads(subprocess.run([exe], check=True, capture_output=True, text=True).stdout) for _ in range(args.runs)]
    for key, what in (("one_thread_gbs", "one thread"), ("two_threads_gbs", "two threads")):
        values = [r[key] for r in runs]
        gbs = statistics.median(values)
        print(f"{what}: {gbs:.2f} GB/s (runs: {', '.join(f'{v:.2f}' for v in values)}) → decode limit "
              f"{gbs * 1e3 / args.weight_mb:.1f} tok/s at {args.weight_mb:.1f} MB a step")


if __name__ == "__main__":
    main()
