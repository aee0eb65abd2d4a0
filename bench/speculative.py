#!/usr/bin/env python3
"""Speculative decoding by prompt lookup against plain decoding, on the default model: decode
tokens/s of `confab generate --json --temperature 0` with and without `--prompt-lookup`, side by
side, on a quoting task, an editing task (code with a name changed) and a free question (where
lookups rarely hit: the overhead). Runs alternate (plain, lookup, plain, ...) so that a machine
getting busier or quieter shows in both; prints medians, the acceptance rate, and the ratio.
It also checks that both give the same reply (greedy speculative decoding must not change it).

    bench/speculative.py [--runs 5] [--max-tokens 160] [--release | --confab BINARY] [--model PATH] [--tasks quote,edit,free]

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


# The release figures' editing task (bench/run.py --speculative): a text of about 500 tokens
# rewritten with two small changes, where a reply copies most of its prompt.
EDIT_TEXT = (
    "The committee met on Tuesday to review the budget for the coming year. After a long discussion, the members "
    "agreed to increase funding for the library by ten percent, to repair the roof of the community hall before "
    "winter, and to hire two more staff for the after-school programme. The treasurer warned that these changes "
    "would leave little room for unexpected costs, so the committee asked her to report on the reserves at the next "
    "meeting in March. Several residents attended the meeting and spoke about the state of the roads in the northern "
    "part of the town. They described potholes that had gone unrepaired for months, broken street lights near the "
    "school, and a bus shelter that had been damaged in a storm. The chair thanked them for coming and promised that "
    "the roads would be the first item on the agenda in March. A representative of the sports club asked whether the "
    "club could use the community hall on Saturday mornings while its own building was being renovated. The members "
    "agreed, on the condition that the club would clean the hall after each session and pay a small fee to cover "
    "heating. The secretary read a letter from the regional council about a new grant for energy efficiency. The "
    "grant would cover half the cost of insulating public buildings, and applications had to be submitted by the end "
    "of April. The committee decided to apply for the grant for the library and the community hall, and asked the "
    "secretary to prepare the application with the help of a local builder. Before the meeting closed, the chair "
    "reminded everyone that the annual fair would take place in June, and that volunteers were needed to organise "
    "the stalls, the music and the food. Anyone willing to help was asked to give their name to the secretary by the "
    "end of the month. The meeting ended at nine o'clock, and the members agreed to meet again on the first Tuesday "
    "of March to hear the treasurer's report and to discuss the roads."
)
EDIT_500 = ("Rewrite the text below with \"Tuesday\" changed to \"Thursday\" and \"ten percent\" changed to "
            "\"twelve percent\". Keep everything else exactly as it is, and reply with the text only.\n\n" + EDIT_TEXT)


# The same for code: a Python module of about 480 tokens with a variable renamed. SmolLM2-135M
# copies it (and then explains it), where it shortens the text above to a third.
EDIT_CODE = (
    'import csv\n'
    'import statistics\n'
    '\n'
    '\n'
    'def read_scores(path):\n'
    '    scores = []\n'
    '    with open(path, newline="") as handle:\n'
    '        reader = csv.DictReader(handle)\n'
    '        for row in reader:\n'
    '            name = row["name"].strip()\n'
    '            if not name:\n'
    '                continue\n'
    '            try:\n'
    '                score = float(row["score"])\n'
    '            except ValueError:\n'
    '                continue\n'
    '            scores.append((name, score))\n'
    '    return scores\n'
    '\n'
    '\n'
    'def summarize(scores):\n'
    '    if not scores:\n'
    '        return {"count": 0, "mean": 0.0, "best": None, "worst": None}\n'
    '    values = [score for _, score in scores]\n'
    '    best = max(scores, key=lambda item: item[1])\n'
    '    worst = min(scores, key=lambda item: item[1])\n'
    '    return {\n'
    '        "count": len(values),\n'
    '        "mean": statistics.mean(values),\n'
    '        "median": statistics.median(values),\n'
    '        "best": best[0],\n'
    '        "worst": worst[0],\n'
    '    }\n'
    '\n'
    '\n'
    'def group_by_initial(scores):\n'
    '    groups = {}\n'
    '    for name, score in scores:\n'
    '        initial = name[0].upper()\n'
    '        groups.setdefault(initial, []).append(score)\n'
    '    return {initial: statistics.mean(values) for initial, values in sorted(groups.items())}\n'
    '\n'
    '\n'
    'def format_report(summary, groups):\n'
    '    lines = []\n'
    '    lines.append(f"Students: {summary[\'count\']}")\n'
    '    lines.append(f"Mean score: {summary[\'mean\']:.2f}")\n'
    '    lines.append(f"Median score: {summary[\'median\']:.2f}")\n'
    '    lines.append(f"Best: {summary[\'best\']}")\n'
    '    lines.append(f"Worst: {summary[\'worst\']}")\n'
    '    lines.append("")\n'
    '    lines.append("By initial:")\n'
    '    for initial, mean in groups.items():\n'
    '        lines.append(f"  {initial}: {mean:.2f}")\n'
    '    return "\\n".join(lines)\n'
    '\n'
    '\n'
    'def main(path):\n'
    '    scores = read_scores(path)\n'
    '    summary = summarize(scores)\n'
    '    groups = group_by_initial(scores)\n'
    '    print(format_report(summary, groups))\n'
    '\n'
    '\n'
    'if __name__ == "__main__":\n'
    '    main("scores.csv")\n'
)
EDIT_CODE_500 = ("Rewrite this Python module with the variable `scores` renamed to `results`. Reply with the code only.\n\n"
                 "```python\n" + EDIT_CODE + "```")


def generate(binary, model, prompt, max_tokens, lookup, draft=None):
    cmd = [str(binary), "generate", "--json", "--no-prefix-cache", "--temperature", "0",
           "--max-tokens", str(max_tokens), "--prompt", prompt]
    if model:
        cmd += ["--model", model]
    if lookup:
        cmd.append("--prompt-lookup")
    if draft:
        cmd += ["--draft-model", draft]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def rate(usage_or_run):
    """accepted/proposed (share), from confab's usage or mlx_lm_speculative.py's line."""
    accepted = usage_or_run.get("draft_accepted", usage_or_run.get("accepted", 0))
    proposed = usage_or_run.get("draft_proposed", usage_or_run.get("proposed", 0))
    return f"{accepted}/{proposed} ({accepted / proposed:.0%})" if proposed else "0/0"


def lookup_row(binary, label, prompt, runs, max_tokens):
    """Prompt lookup against plain decoding on `prompt` (the default model), alternating; medians."""
    plain, lookup, reference, last = [], [], None, None
    for _ in range(runs):
        for speculative in (False, True):
            out = generate(binary, None, prompt, max_tokens, speculative)
            if reference is None:
                reference = out["ids"]
            elif out["ids"] != reference:
                sys.exit(f"{label}: the reply with prompt lookup differs from plain decoding")
            (lookup if speculative else plain).append(out["timings"]["decode_tokens_per_s"])
            last = out if speculative else last
    p, s = statistics.median(plain), statistics.median(lookup)
    print(f"  prompt lookup, {label} (default model), {len(reference)} tokens: plain {p:.1f} tok/s | "
          f"lookup {s:.1f} tok/s | {s / p:.2f}x (target 2x) | accepted {rate(last['usage'])}", flush=True)


def release_rows(binary, python, f32, q4, runs, max_tokens=600):
    """bench/run.py --speculative: (1) prompt lookup against plain decoding on the editing tasks
    (text and code), the default model (target ≥ 2×); (2) the 4-bit copy drafting for the float32 model, Confab
    against mlx-lm 0.32.2's `draft_model` on the same pair and prompt (target ≥ 1.3× mlx-lm's
    speculative tok/s), acceptance printed for both. Runs alternate; medians."""
    print(f"speculative decoding, {binary}: greedy, {max_tokens} tokens at most, median of {runs} runs, alternating")
    lookup_row(binary, "editing ~500 tokens of text", EDIT_500, runs, max_tokens)
    lookup_row(binary, "editing ~500 tokens of code", EDIT_CODE_500, runs, max_tokens + 200)

    prompt_file = os.path.join(os.path.dirname(q4), "speculative-edit-prompt.txt")
    with open(prompt_file, "w") as f:
        f.write(EDIT_500)
    ours, theirs, alone, ours_run, theirs_run = [], [], [], None, None
    mlx_lm_side = os.path.join(ROOT, "bench", "mlx_lm_speculative.py")
    for _ in range(runs):
        ours_run = generate(binary, f32, EDIT_500, max_tokens, False, draft=q4)
        ours.append(ours_run["timings"]["decode_tokens_per_s"])
        alone.append(generate(binary, f32, EDIT_500, max_tokens, False)["timings"]["decode_tokens_per_s"])
        out = subprocess.run([python, mlx_lm_side, f32, q4, prompt_file, str(max_tokens)], check=True, capture_output=True,
                             text=True).stdout
        theirs_run = json.loads(out.strip().splitlines()[-1])
        theirs.append(theirs_run["decode_tokens_per_s"])
    o, t, a = statistics.median(ours), statistics.median(theirs), statistics.median(alone)
    same = "same reply" if ours_run["ids"] == theirs_run["ids"] else "replies differ"
    print(f"  draft model ({os.path.basename(q4)} drafting for {os.path.basename(f32)}), editing: confab {o:.1f} tok/s "
          f"(plain {a:.1f}, {o / a:.2f}x) | mlx-lm --draft-model {t:.1f} tok/s | {o / t:.2f}x mlx-lm (target 1.3x) | "
          f"accepted: confab {rate(ours_run['usage'])}, mlx-lm {rate(theirs_run)} | {same}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--release", action="store_true", help="use target/release/confab")
    parser.add_argument("--model", help="a model path (default: the default model)")
    parser.add_argument("--confab", help="the confab binary to measure (say main's, for a before/after figure)")
    parser.add_argument("--tasks", default="quote,edit,free", help="the tasks to run, comma-separated")
    args = parser.parse_args()
    binary = pathlib.Path(args.confab) if args.confab else TARGET / ("release" if args.release else "debug") / "confab"
    if not binary.exists():
        sys.exit(f"{binary} is missing: cargo build {'--release ' if args.release else ''}-p confab-cli")
    print(f"{binary}; {args.runs} runs each, alternating; greedy, {args.max_tokens} tokens at most")
    print(f"{'task':<6} {'tokens':>6} {'plain tok/s':>12} {'lookup tok/s':>13} {'accepted':>14} {'ratio':>6}")
    for name, prompt in [t for t in TASKS if t[0] in args.tasks.split(",")]:
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
