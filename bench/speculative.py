#!/usr/bin/env python3
"""Speculative decoding by prompt lookup against plain decoding, on the default model: decode
tokens/s of `confab generate --json --temperature 0` with and without `--prompt-lookup`, side by
side, on a quoting task, an editing task (code with a name changed) and a free question (where
lookups rarely hit: the overhead). Runs alternate (plain, lookup, plain, ...) so that a machine
getting busier or quieter shows in both; prints medians, the acceptance rate, and the ratio.
It also checks that both give the same reply (greedy speculative decoding must not change it).

    bench/speculative.py [--runs 5] [--max-tokens 160] [--release] [--model PATH]

Needs `cargo build -p confab-cli` (or `--release` after `cargo build --release -p confab-cli`).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")

QUOTE = ("Repeat this text exactly, with nothing before or after it:\n\n"
         "The committee met on Tuesday to review the budget for the coming year. After a long discussion, "
         "the members agreed to increase funding for the library by ten percent, to repair the roof of the "
         "community hall before winter, and to hire two more staff for the after-school programme. The "
         "treasurer warned that these changes would leave little room for unexpected costs, so the committee "
         "asked her to report on the reserves at the next meeting in March.")
EDIT = ("Rewrite this Python function with the variable `total` renamed to `running_sum`. Reply with the code only.\n\n"
        "```python\n"
        "def average(values):\n"
        "    total = 0\n"
        "    count = 0\n"
        "    for value in values:\n"
        "        if value is None:\n"
        "            continue\n"
        "        total += value\n"
        "        count += 1\n"
        "    if count == 0:\n"
        "        return 0.0\n"
        "    return total / count\n"
        "```")
FREE = "Write a short story about a lighthouse keeper who finds a message in a bottle."
TASKS = [("quote", QUOTE), ("edit", EDIT), ("free", FREE)]


def generate(binary, model, prompt, max_tokens, lookup):
    cmd = [str(binary), "generate", "--json", "--no-prefix-cache", "--temperature", "0",
           "--max-tokens", str(max_tokens), "--prompt", prompt]
    if model:
        cmd += ["--model", model]
    if lookup:
        cmd.append("--prompt-lookup")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--release", action="store_true", help="use target/release/confab")
    parser.add_argument("--model", help="a model path (default: the default model)")
    args = parser.parse_args()
    binary = TARGET / ("release" if args.release else "debug") / "confab"
    if not binary.exists():
        sys.exit(f"{binary} is missing: cargo build {'--release ' if args.release else ''}-p confab-cli")
    print(f"{binary.parent.name} build; {args.runs} runs each, alternating; greedy, {args.max_tokens} tokens at most")
    print(f"{'task':<6} {'tokens':>6} {'plain tok/s':>12} {'lookup tok/s':>13} {'accepted':>14} {'ratio':>6}")
    for name, prompt in TASKS:
        plain, lookup, accepted, proposed = [], [], 0, 0
        reference = None
        for _ in range(args.runs):
            for speculative in (False, True):
                out = generate(binary, args.model, prompt, args.max_tokens, speculative)
                if reference is None:
                    reference = out["ids"]
                elif out["ids"] != reference:
                    sys.exit(f"{name}: the reply {'with' if speculative else 'without'} prompt lookup differs")
                (lookup if speculative else plain).append(out["timings"]["decode_tokens_per_s"])
                if speculative:
                    accepted += out["usage"]["draft_accepted"]
                    proposed += out["usage"]["draft_proposed"]
        p, s = statistics.median(plain), statistics.median(lookup)
        rate = f"{accepted / args.runs:.0f}/{proposed / args.runs:.0f}" if proposed else "0/0"
        print(f"{name:<6} {len(reference):>6} {p:>12.1f} {s:>13.1f} {rate:>14} {s / p:>5.2f}x")
    print("accepted: proposed tokens the model agreed with, per run (accepted/proposed)")


if __name__ == "__main__":
    main()
