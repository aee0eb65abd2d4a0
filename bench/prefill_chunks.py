#!/usr/bin/env python3
"""Prefill time per chunk size as the context grows, on a hybrid model: what the prefill chunk
policy is chosen from (`runtime::generate::admit`, `defaults::PREFILL_CHUNK_TOKENS`).

    python3 bench/prefill_chunks.py [--model FOLDER] [--prompt 4096] [--chunks 128,256,512,1024,2048]
                                    [--binary PATH] [--repeat 3]

Runs `confab bench -vv` per chunk size on the same synthetic prompt (one warm-up run, one
measured), `--repeat` times round-robin over the sizes (so that a machine's changing load falls
on every size alike), keeping each band's best time, and reads the engine's `prefill chunk` lines: each chunk's tokens, where it starts and
how long it took (its forward and the evaluation of the state it leaves; the last chunk is only
queued, its time is in the time to first token). Prints prefill tok/s per chunk size in context
bands, and the whole prompt's time to first token.

The default model is a Qwen3.5-0.8B-shaped checkpoint cut to its first four layers (three gated
DeltaNet layers and one full-attention layer at the real widths, random weights):
`python3 bench/make_qwen3_5.py .deps/bench/qwen3_5-4layers --layers=4`.
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
LINE = re.compile(r"request\{id=(\d+)\}.*prefill chunk start=(\d+) tokens=(\d+) ms=(\d+) last=(\w+)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=os.path.join(ROOT, ".deps", "bench", "qwen3_5-4layers"))
    parser.add_argument("--prompt", type=int, default=4096)
    parser.add_argument("--chunks", default="128,256,512,1024,2048")
    parser.add_argument("--binary", default=os.path.join(TARGET, "debug", "confab"))
    parser.add_argument("--repeat", type=int, default=3, help="rounds over the chunk sizes; each band keeps its best")
    args = parser.parse_args()
    bands = [0]
    while bands[-1] * 2 < args.prompt:
        bands.append(max(512, bands[-1] * 2))
    bands.append(args.prompt)
    bands = sorted(set(bands))
    header = " | ".join(f"{a}–{b}" for a, b in zip(bands, bands[1:]))
    print(f"prefill tok/s by context band (positions before the chunk), {args.prompt}-token prompt; TTFT: the whole prompt")
    print(f"| chunk | {header} | TTFT s |")
    print("|---:|" + "---:|" * (len(bands) - 1) + "---:|")
    chunks = [int(c) for c in args.chunks.split(",")]
    # (chunk, band) -> best (tokens, ms); chunk -> best TTFT
    best: dict[tuple[int, int], tuple[int, int]] = {}
    ttft: dict[int, float] = {}
    failed: dict[int, str] = {}
    for _ in range(args.repeat):
        for chunk in chunks:
            cmd = [args.binary, "bench", "-vv", "--model", args.model, "--prompt-tokens", str(args.prompt), "--gen-tokens", "1",
                   "--chunk", str(chunk), "--json"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                failed[chunk] = str(run.stderr.strip().splitlines()[-1:])
                continue
            report = json.loads(run.stdout)
            lines = [tuple(int(x) if x.isdigit() else x for x in m.groups()) for m in LINE.finditer(run.stderr)]
            measured_id = max(l[0] for l in lines)  # the warm-up is request 1
            for band, (a, b) in enumerate(zip(bands, bands[1:])):
                inside = [l for l in lines if l[0] == measured_id and l[4] == "false" and a <= l[1] < b]
                tokens, ms = sum(l[2] for l in inside), sum(l[3] for l in inside)
                if ms and (chunk, band) not in best or ms and ms / tokens < best[(chunk, band)][1] / best[(chunk, band)][0]:
                    best[(chunk, band)] = (tokens, ms)
            ttft[chunk] = min(ttft.get(chunk, float("inf")), report["time_to_first_token_ms"] / 1e3)
    for chunk in chunks:
        if chunk not in ttft:
            print(f"| {chunk} | failed: {failed.get(chunk)} |", flush=True)
            continue
        per_band = [f"{best[(chunk, band)][0] / best[(chunk, band)][1] * 1e3:.0f}" if (chunk, band) in best else "-"
                    for band in range(len(bands) - 1)]
        print(f"| {chunk} | " + " | ".join(per_band) + f" | {ttft[chunk]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
