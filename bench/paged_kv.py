#!/usr/bin/env python3
"""Paged keys/values, before and after: a regenerate and an edit of a long conversation (and the
next message after the regenerate), with the prefix cache's keys/values in shared pages (now)
and kept whole (`--contiguous-kv`, as before paging), on the default model (float32 activations
on a CPU).

    python3 bench/paged_kv.py [--history 4000] [--turn 40] [--gen 64] [--repeat 3] [--binary PATH] [--model PATH] [--kv-bits 8]

Each run is `confab bench-session --branches`: a first turn of --history tokens, its regenerate
(the same prompt: all but its last token reused), an edit --turn tokens before its end, and the
regenerated reply continued by a --turn-token message. Per step:
  resume copied: bytes of cached keys/values the request copied to start (pages assembled into
    its buffer; before paging, the cached buffers it shared, which MLX copies whole at the first
    write) — from the engine's `prefix cache hit` log line;
  keep copied: bytes copied to keep its state when it ended (pages cut past the shared ones),
    and the cache's memory after it (each shared page once) — the `prefix cache kept` line;
  time to first token and decode speed (medians over --repeat runs, the two modes alternating).
There is no reference implementation to set beside it: mlx-lm's prompt cache keeps one
contiguous cache per prompt (a branch is a deep copy), which is the `before` column's behaviour.
"""
import argparse
import json
import os
import re
import statistics
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
STEPS = ["warm-up", "first", "regenerate", "edit", "next message"]
HIT = re.compile(r"prefix cache (hit|miss).*?(?:copied_bytes=(\d+))?$")
KEPT = re.compile(r"prefix cache kept a conversation copied_bytes=(\d+) copy_ms=([\d.]+) held_bytes=(\d+)")


def run(args, contiguous):
    cmd = [args.binary, "bench-session", "--branches", "--json", "-vv", "--history", str(args.history),
           "--turn", str(args.turn), "--gen", str(args.gen)]
    if args.model:
        cmd += ["--model", args.model]
    if args.kv_bits:
        cmd += ["--kv-bits", str(args.kv_bits)]
    if contiguous:
        cmd.append("--contiguous-kv")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    steps = {s["step"]: s for s in json.loads(done.stdout)}
    hits = [m for m in (HIT.search(line) for line in done.stderr.splitlines() if "prefix cache hit" in line or "prefix cache miss" in line) if m]
    kept = [KEPT.search(line) for line in done.stderr.splitlines() if "prefix cache kept" in line]
    if len(hits) != len(STEPS) or len(kept) != len(STEPS):
        raise SystemExit(f"expected {len(STEPS)} requests in the log, found {len(hits)} lookups and {len(kept)} keeps")
    for name, hit, keep in zip(STEPS, hits, kept):
        if name in steps:
            steps[name]["resume_copied"] = int(hit.group(2) or 0)
            steps[name]["keep_copied"] = int(keep.group(1))
            steps[name]["keep_ms"] = float(keep.group(2))
            steps[name]["held"] = int(keep.group(3))
    return steps


def mb(b):
    return f"{b / 1e6:.1f} MB"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, default=4000)
    parser.add_argument("--turn", type=int, default=40)
    parser.add_argument("--gen", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--binary", default=os.path.join(TARGET, "release", "confab"))
    parser.add_argument("--model", help="a model folder or file (default: the default model)")
    parser.add_argument("--kv-bits", type=int, choices=[4, 8], help="keys/values quantized (as `confab --kv-bits`)")
    args = parser.parse_args()
    runs = {"before": [], "after": []}
    for i in range(args.repeat):
        # Alternating which goes first, so that a drift in the machine's load favours neither.
        for contiguous in ([False, True] if i % 2 == 0 else [True, False]):
            runs["before" if contiguous else "after"].append(run(args, contiguous=contiguous))

    def median(mode, step, field):
        return statistics.median(r[step][field] for r in runs[mode])

    print(f"{args.history}-token conversation, {args.turn}-token edit/message, {args.gen} generated; "
          f"medians of {args.repeat} runs each, alternating (before: --contiguous-kv)")
    print(f"{'step':>13} | {'reused':>6} | {'resume copied before → after':>30} | {'keep copied before → after':>28} "
          f"| {'cache memory before → after':>29} | {'first token ms before → after':>30} | decode tok/s before → after")
    for step in STEPS[1:]:
        b, a = runs["before"][0][step], runs["after"][0][step]
        ttft_b, ttft_a = median("before", step, "time_to_first_token_ms"), median("after", step, "time_to_first_token_ms")
        dec_b, dec_a = median("before", step, "decode_tokens_per_s"), median("after", step, "decode_tokens_per_s")
        print(f"{step:>13} | {a['reused_tokens']:>6} | {mb(b['resume_copied']):>12} → {mb(a['resume_copied']):>12}   "
              f"| {mb(b['keep_copied']):>11} → {mb(a['keep_copied']):>11}   | {mb(b['held']):>12} → {mb(a['held']):>12}   "
              f"| {ttft_b:>9.0f} → {ttft_a:>6.0f} ({ttft_a / ttft_b:.2f}x)    | {dec_b:>6.1f} → {dec_a:>6.1f} ({dec_a / dec_b:.2f}x)")
        assert a["reused_tokens"] == b["reused_tokens"], "both modes reuse the same prefix"


if __name__ == "__main__":
    main()
