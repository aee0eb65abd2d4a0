#!/usr/bin/env python3
"""Prompt lookup's proposal policies replayed on recorded greedy replies: for each editing task,
the default model's plain greedy reply (`confab generate --json --temperature 0`) and its
prompt (the chat template applied by the tokenizer of bench/run.py's float32 SmolLM2 folder);
then, step by step, what each policy would propose, how many of those the reply keeps, and a
pass cost per width. Prints the speed-up over plain decoding each policy would reach:

- latest: the latest earlier occurrence of the last 3 (else 2) tokens, 3 tokens proposed (about
  what the draft schedule capped by a CPU's pass costs proposed);
- agreement: the occurrence agreeing with the reply furthest back, as many tokens as it agrees,
  up to 15 (Confab's `look_up`);
- oracle: the agreement's source, exactly as many tokens as the reply will keep.

Both replay a row's rests (8 plain steps once its moving acceptance falls below 0.2). Pass
costs: `cpu`, 14.5 + 5.4 ms per position (the default model on this repository's 2-core CI VM,
measured from traces), and `flat`, 20 + 0.4 ms per position (a GPU, where a pass of a few
positions costs about a step). A model, not a measurement: bench/speculative.py measures.

    python3 bench/lookup_replay.py [--confab target/release/confab]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speculative  # noqa: E402

COSTS = {"cpu": lambda width: 14.5 + 5.4 * width, "flat": lambda width: 20.0 + 0.4 * width}
MOST, AGREEMENT_COUNTED = 15, 64


def agreement(tokens, end):
    n = 0
    while n < min(end, AGREEMENT_COUNTED) and tokens[end - 1 - n] == tokens[len(tokens) - 1 - n]:
        n += 1
    return n


def occurrences(tokens, n):
    tail = tokens[-n:]
    return [end for end in range(n, len(tokens)) if tokens[end - n:end] == tail]


def latest(tokens, _reply, _i):
    for n in (3, 2):
        ends = occurrences(tokens, n) if len(tokens) > n else []
        if ends:
            return tokens[ends[-1]:ends[-1] + 3]
    return []


def furthest(tokens):
    for n in (3, 2):
        ends = occurrences(tokens, n) if len(tokens) > n else []
        if ends:
            return max((agreement(tokens, end), end) for end in ends)
    return None


def by_agreement(tokens, _reply, _i):
    found = furthest(tokens)
    return tokens[found[1]:found[1] + min(MOST, found[0])] if found else []


def oracle(tokens, reply, i):
    found = furthest(tokens)
    if not found:
        return []
    proposal = tokens[found[1]:found[1] + MOST]
    kept = 0
    while kept < len(proposal) and i + kept < len(reply) and proposal[kept] == reply[i + kept]:
        kept += 1
    return proposal[:kept]


def replay(prompt, reply, policy, cost):
    tokens, i, spent, rate, resting = list(prompt) + [reply[0]], 1, 0.0, 1.0, 0
    while i < len(reply):
        proposal = [] if resting else policy(tokens, reply, i)
        resting = max(0, resting - 1)
        kept = 0
        while kept < len(proposal) and i + kept < len(reply) and proposal[kept] == reply[i + kept]:
            kept += 1
        spent += cost(len(proposal) + 1)
        if proposal:
            rate = 0.7 * rate + 0.3 * kept / len(proposal)
            if rate < 0.2:
                resting, rate = 8, 0.2
        tokens += reply[i:i + kept + 1]
        i += kept + 1
    return cost(1) * (len(reply) - 1) / spent


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--confab", default=os.path.join(ROOT, "target", "release", "confab"))
    args = parser.parse_args()
    from transformers import AutoTokenizer  # bench/run.py's venv has it
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(ROOT, ".deps", "bench", "smollm2-f32"))
    tasks = [("text", speculative.EDIT_500, 600), ("code", speculative.EDIT_CODE_500, 800)]
    policies = [("latest", latest), ("agreement", by_agreement), ("oracle", oracle)]
    print(f"{'task':<5} {'tokens':>6} {'costs':<5} " + " ".join(f"{name:>10}" for name, _ in policies))
    for name, prompt, max_tokens in tasks:
        reply = speculative.generate(args.confab, None, prompt, max_tokens, False)["ids"]
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True)
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        for costs, cost in COSTS.items():
            ratios = [replay(ids, reply, policy, cost) for _, policy in policies]
            print(f"{name:<5} {len(reply):>6} {costs:<5} " + " ".join(f"{r:>9.2f}x" for r in ratios))


if __name__ == "__main__":
    main()
