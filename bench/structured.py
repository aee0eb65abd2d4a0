"""Structured output on `confab serve`: conformance over generated JSON Schemas, and what
constrained decoding costs.

1. Conformance: 200+ JSON Schemas, generated below from a fixed seed (nested objects, arrays
   with minItems/maxItems, enums, const, patterns, anyOf/oneOf, $ref/$defs, numeric bounds,
   required/optional properties, additionalProperties false, as OpenAI's strict mode asks of
   every object), each sent as
   `response_format: json_schema` (strict) at temperature 0. Every reply must parse
   (json.loads) and validate (the `jsonschema` package). A schema the server refuses (400
   naming the feature) is counted apart, with the message.
2. Overhead (issue 35: at most 10% at batch 1 and 8, and the forward passes grammar jump
   saves on schema-heavy replies): the same prompts and max_tokens, streamed, at batch 1 (one
   client) and batch 8 (eight concurrent clients), three ways: free (no `response_format`),
   constrained, and constrained with grammar jump off (a second server, started with
   CONFAB_GRAMMAR_JUMP=0). The three alternate, their order turning from round to round (the
   machine's load drifts); each figure is the median over the rounds, min-max after it.
   A constrained reply's tokens per second mix two things, told apart here:
   - the mask's cost: time per forward pass, constrained with jump off (every token sampled
     under its mask, one pass each) over free, paired within each round: "mask overhead".
     A reply's decode passes are its tokens after the first less the passes grammar jump saved
     (Confab reports them in `usage.completion_tokens_details`); its decode time runs from its
     first streamed token to its last.
   - grammar jump: forced tokens per reply (fed without sampling) and forward passes saved (per
     reply, and as a share of its tokens). A row stepping alone feeds its forced tokens with the
     sampled token before them in one pass, which is wider (costlier on a CPU) than a one-token
     pass; in a batch they ride along one per step and save passes only where a reply ends on
     them. The time per pass with jump on shows what the wider passes cost.
   Decode tokens per second per request (first token to last, forced tokens counted) are given
   for all three: constrained with jump on over free is the whole of it.

Run (after `cargo build -p confab-cli`, or with --release after `cargo build --release -p
confab-cli`, which is what the issue's figures are; the venv comes from scripts/setup.sh):
    .deps/server/venv/bin/python bench/structured.py [--model PATH] [--schemas 200] [--max-tokens 160]
    .deps/server/venv/bin/python bench/structured.py --release --skip-conformance --rounds 5 [--batches 1,8]
Environment: CARGO_TARGET_DIR (where the built `confab` is: $CARGO_TARGET_DIR/{debug,release}/confab).
`bench/agent.py` reports the same overhead (its `overhead` and `print_overhead`, below).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import pathlib
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

# The overhead needs only the standard library (bench/agent.py runs it under any python3);
# conformance needs the server venv's jsonschema and openai, imported where it runs.

ROOT = pathlib.Path(__file__).resolve().parents[1]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")

# --- Schemas -------------------------------------------------------------------------------

WORDS = ["name", "title", "city", "color", "code", "label", "owner", "status", "kind", "tag",
         "brand", "model", "country", "street", "author", "genre", "team", "role", "unit", "note"]
NUMS = ["age", "count", "price", "score", "year", "rank", "size", "weight", "level", "total"]
ENUMS = [["red", "green", "blue"], ["small", "medium", "large"], ["cat", "dog", "bird", "fish"],
         ["draft", "published", "archived"], ["low", "high"], [1, 2, 3, 5, 8], ["north", "south", "east", "west"]]
# Bounded, as schemas for a model should be: an unbounded `[a-z]+` lets a small model spell on
# until max_tokens.
PATTERNS = [r"^[A-Z]{3}-[0-9]{3}$", r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$", r"^[a-z]{2,10}@[a-z]{2,8}\.com$",
            r"^#[0-9a-f]{6}$", r"^v[0-9]\.[0-9]\.[0-9]$", r"^[A-Z][a-z]{2,8}$", r"^\+[0-9]{2} [0-9]{6}$"]


def string_schema(rng: random.Random) -> dict:
    pick = rng.random()
    if pick < 0.3:
        return {"type": "string", "pattern": rng.choice(PATTERNS)}
    if pick < 0.45:
        return {"type": "string", "enum": [e for e in rng.choice(ENUMS) if isinstance(e, str)] or ["a", "b"]}
    return {"type": "string", "minLength": rng.choice([0, 1, 2]), "maxLength": rng.choice([8, 12, 20, 30])}


def number_schema(rng: random.Random) -> dict:
    lo = rng.choice([0, 1, -10, 100, 1900])
    hi = lo + rng.choice([5, 10, 100, 1000])
    pick = rng.random()
    if pick < 0.4:
        return {"type": "integer", "minimum": lo, "maximum": hi}
    if pick < 0.7:
        # Exclusive bounds on integers: on decimals, a reply like 1900.000000000000001 is above
        # 1900 as the grammar reads it, and equal to it as a float64 validator reads it.
        return {"type": "integer", "exclusiveMinimum": lo, "exclusiveMaximum": hi}
    return {"type": "number", "minimum": lo, "maximum": hi}


def leaf(rng: random.Random) -> dict:
    pick = rng.random()
    if pick < 0.4:
        return string_schema(rng)
    if pick < 0.75:
        return number_schema(rng)
    if pick < 0.85:
        return {"type": "boolean"}
    if pick < 0.93:
        return {"enum": rng.choice(ENUMS)}
    return {"const": rng.choice(["v1", 42, True, "fixed"])}


def obj(rng: random.Random, depth: int, props: int | None = None) -> dict:
    n = props or rng.randint(1, 4)
    names = rng.sample(WORDS + NUMS, n)
    properties = {}
    for name in names:
        if depth > 0 and rng.random() < 0.3:
            properties[name] = obj(rng, depth - 1)
        elif rng.random() < 0.2:
            properties[name] = array(rng, depth - 1)
        else:
            properties[name] = leaf(rng)
    required = [n for n in names if rng.random() < 0.7] or names[:1]
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def array(rng: random.Random, depth: int) -> dict:
    lo = rng.choice([0, 1, 2])
    items = obj(rng, 0, rng.randint(1, 2)) if depth > 0 and rng.random() < 0.4 else leaf(rng)
    return {"type": "array", "items": items, "minItems": lo, "maxItems": lo + rng.choice([1, 2, 3])}


def any_of(rng: random.Random) -> dict:
    return {"type": "object", "properties": {"value": {"anyOf": [string_schema(rng), number_schema(rng), {"type": "null"}]}},
            "required": ["value"], "additionalProperties": False}


def one_of(rng: random.Random) -> dict:
    # Branches llguidance can prove disjoint (different types, or a different `kind` const).
    if rng.random() < 0.5:
        branches = [{"type": "string", "maxLength": 12}, {"type": "integer", "minimum": 0, "maximum": 99}]
    else:
        branches = [
            {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "integer", "minimum": 1, "maximum": 9}},
             "required": ["kind", "radius"], "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "integer", "minimum": 1, "maximum": 9}},
             "required": ["kind", "side"], "additionalProperties": False},
        ]
    return {"type": "object", "properties": {"shape": {"oneOf": branches}}, "required": ["shape"], "additionalProperties": False}


def with_refs(rng: random.Random) -> dict:
    item = obj(rng, 0, rng.randint(1, 3))
    return {
        "$defs": {"item": item, "tag": string_schema(rng)},
        "type": "object",
        "properties": {"main": {"$ref": "#/$defs/item"}, "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}, "maxItems": 2}},
        "required": ["main", "tags"],
        "additionalProperties": False,
    }


def numeric(rng: random.Random) -> dict:
    names = rng.sample(NUMS, 3)
    return {"type": "object", "properties": {n: number_schema(rng) for n in names}, "required": names[: rng.randint(1, 3)],
            "additionalProperties": False}


def schemas(count: int, seed: int = 35) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    makers = [
        ("flat", lambda: obj(rng, 0)),
        ("nested", lambda: obj(rng, 2, rng.randint(2, 3))),
        ("array", lambda: {"type": "object", "properties": {"items": array(rng, 1)}, "required": ["items"], "additionalProperties": False}),
        ("top-level array", lambda: array(rng, 1)),
        ("enum", lambda: {"type": "object", "properties": {"choice": {"enum": rng.choice(ENUMS)}}, "required": ["choice"],
                          "additionalProperties": False}),
        ("const", lambda: {"type": "object", "properties": {"version": {"const": rng.choice(["1.0", 2, "beta"])}, "ok": {"type": "boolean"}},
                           "required": ["version", "ok"], "additionalProperties": False}),
        ("pattern", lambda: {"type": "object", "properties": {"id": {"type": "string", "pattern": rng.choice(PATTERNS)}}, "required": ["id"],
                             "additionalProperties": False}),
        ("anyOf", lambda: any_of(rng)),
        ("oneOf", lambda: one_of(rng)),
        ("$ref", lambda: with_refs(rng)),
        ("numeric bounds", lambda: numeric(rng)),
    ]
    out = []
    for i in range(count):
        kind, make = makers[i % len(makers)]
        out.append((kind, make()))
    return out


# --- The server ----------------------------------------------------------------------------


class Server:
    def __init__(self, model: pathlib.Path, profile: str = "debug", env: dict | None = None):
        confab = TARGET / profile / "confab"
        if not confab.is_file():
            sys.exit(f"{confab} is not built; run cargo build {'--release ' if profile == 'release' else ''}-p confab-cli")
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="confab-bench-"))
        self.log = open(self.home / "stderr.log", "w")
        self.process = subprocess.Popen([str(confab), "serve", "--port", "0", "--model", str(model)],
                                        env=dict(os.environ, CONFAB_HOME=str(self.home), **(env or {})), stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"model `([^`]+)` at (http://\S+)", line)
        if not match:
            self.stop()
            sys.exit(f"confab serve did not start: {line!r}\n{(self.home / 'stderr.log').read_text()}")
        self.model, self.base_url = match.group(1), match.group(2)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=60)


def ask(client, model: str, prompt: str, max_tokens: int, schema: dict | None):
    kwargs = {}
    if schema is not None:
        kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
    began = time.perf_counter()
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt}],
                                           max_tokens=max_tokens, temperature=0, **kwargs)
    return reply, time.perf_counter() - began


def prompt_for(schema: dict) -> str:
    return "Reply with one JSON value that fits this schema, with realistic values:\n" + json.dumps(schema)


def conformance(client, model, cases, max_tokens):
    import jsonschema
    import openai

    passed, refused, failed = 0, [], []
    for i, (kind, schema) in enumerate(cases):
        try:
            reply, _ = ask(client, model, prompt_for(schema), max_tokens, schema)
        except openai.BadRequestError as e:
            refused.append((kind, e.body.get("message") if isinstance(e.body, dict) else str(e), e.body.get("param") if isinstance(e.body, dict) else None))
            continue
        text = reply.choices[0].message.content
        try:
            jsonschema.validate(json.loads(text), schema)
            passed += 1
        except (json.JSONDecodeError, jsonschema.ValidationError) as e:
            failed.append((kind, reply.choices[0].finish_reason, text[:120], str(e).splitlines()[0][:160]))
        if (i + 1) % 25 == 0:
            print(f"  {i + 1}/{len(cases)}: {passed} valid, {len(failed)} invalid, {len(refused)} refused", flush=True)
    return passed, refused, failed


def response_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def overhead_cases(requests: int) -> list[tuple[str, dict]]:
    """Schema-heavy requests for the overhead: objects with several keys, nesting, arrays, refs."""
    return [c for c in schemas(220) if c[0] in ("flat", "nested", "array", "$ref", "numeric bounds")][:requests]


def stream_reply(base_url: str, model: str, schema: dict, max_tokens: int, constrained: bool, timeout: float = 600) -> dict:
    """One streamed chat request: its tokens, the grammar's forced tokens and the passes grammar
    jump saved (from the usage chunk), and the seconds from its first content to its last."""
    host, port, path = re.match(r"http://([^:/]+):(\d+)(/.*)?$", base_url).groups()
    body = {"model": model, "messages": [{"role": "user", "content": prompt_for(schema)}], "max_tokens": max_tokens,
            "temperature": 0, "stream": True, "stream_options": {"include_usage": True}}
    if constrained:
        body["response_format"] = response_format(schema)
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    connection.request("POST", (path or "/v1").rstrip("/") + "/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"chat/completions: {response.status}: {response.read()[:300]!r}")
    first = last = None
    usage = {}
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        event = json.loads(line[5:])
        if any((c.get("delta") or {}).get("content") for c in event.get("choices") or []):
            last = time.perf_counter()
            first = first or last
        usage = event.get("usage") or usage
    connection.close()
    details = usage.get("completion_tokens_details") or {}
    return {"tokens": usage.get("completion_tokens", 0), "forced": details.get("forced_tokens", 0),
            "saved": details.get("forward_passes_saved", 0), "decode_s": (last - first) if first else 0.0}


def overhead_run(base_url: str, model: str, cases, max_tokens: int, concurrency: int, constrained: bool) -> dict:
    """Every case once, `concurrency` at a time. Per pass: the decode time of all replies over
    their decode passes (tokens after the first, less those fed without a pass of their own)."""
    with ThreadPoolExecutor(concurrency) as pool:
        replies = list(pool.map(lambda case: stream_reply(base_url, model, case[1], max_tokens, constrained), cases))
    timed = [r for r in replies if r["tokens"] > 1 and r["decode_s"] > 0]
    passes = sum(r["tokens"] - 1 - r["saved"] for r in timed)
    return {
        "ms_per_pass": 1e3 * sum(r["decode_s"] for r in timed) / max(passes, 1),
        "tok_s": statistics.mean((r["tokens"] - 1) / r["decode_s"] for r in timed) if timed else 0.0,
        "tokens": statistics.mean(r["tokens"] for r in replies),
        "forced": statistics.mean(r["forced"] for r in replies),
        "saved": statistics.mean(r["saved"] for r in replies),
    }


MODES = ("free", "jump off", "constrained")


def overhead(base_url: str, jumpless_url: str, model: str, cases, max_tokens: int = 48, rounds: int = 3, batches=(1, 8), log=print) -> dict:
    """Free and constrained runs of the same cases at each batch size on `base_url`, and
    constrained ones on `jumpless_url` (the same model served with CONFAB_GRAMMAR_JUMP=0), the
    three in a rotating order. Returns {batch: {mode: [run per round]}}."""
    for url in (base_url, jumpless_url):
        overhead_run(url, model, cases[:2], 8, 1, True)  # warm up: load, grammar compiler, caches
    runs = {batch: {mode: [] for mode in MODES} for batch in batches}
    for round_ in range(rounds):
        for batch in batches:
            for mode in MODES[round_ % 3:] + MODES[: round_ % 3]:
                url = jumpless_url if mode == "jump off" else base_url
                run = overhead_run(url, model, cases, max_tokens, batch, mode != "free")
                runs[batch][mode].append(run)
                log(f"  round {round_ + 1} batch {batch} {mode:11}: {run['ms_per_pass']:.2f} ms/pass, {run['tok_s']:.1f} tok/s, "
                    f"{run['tokens']:.1f} tokens, {run['forced']:.1f} forced, {run['saved']:.1f} passes saved per reply")
    return runs


def print_overhead(runs: dict, log=print):
    """Two tables: time per pass (the mask's cost), then tokens per second and the jump's savings."""
    def spread(values, fmt):
        values = list(values)
        return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))} to {fmt.format(max(values))})"

    def ratio(by, over, under):
        return [100.0 * (o["ms_per_pass"] / u["ms_per_pass"] - 1.0) for o, u in zip(by[over], by[under])]

    log("| batch | ms/pass free | ms/pass constrained, jump off | mask overhead per pass | ms/pass constrained (jump on) | jump-on pass over free |")
    log("|---:|---:|---:|---:|---:|---:|")
    for batch, by in runs.items():
        ms = {mode: [r["ms_per_pass"] for r in by[mode]] for mode in MODES}
        log(f"| {batch} | {spread(ms['free'], '{:.2f}')} | {spread(ms['jump off'], '{:.2f}')} | {spread(ratio(by, 'jump off', 'free'), '{:+.1f}%')} | "
            f"{spread(ms['constrained'], '{:.2f}')} | {spread(ratio(by, 'constrained', 'free'), '{:+.1f}%')} |")
    log("")
    log("| batch | tok/s free | tok/s constrained, jump off | tok/s constrained (jump on) | tokens / constrained reply | forced / reply | passes saved / reply | passes saved / tokens |")
    log("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for batch, by in runs.items():
        con = by["constrained"]
        log(f"| {batch} | {spread((r['tok_s'] for r in by['free']), '{:.1f}')} | {spread((r['tok_s'] for r in by['jump off']), '{:.1f}')} | "
            f"{spread((r['tok_s'] for r in con), '{:.1f}')} | {statistics.median(r['tokens'] for r in con):.1f} | "
            f"{statistics.median(r['forced'] for r in con):.1f} | {statistics.median(r['saved'] for r in con):.1f} | "
            f"{100.0 * statistics.median(r['saved'] / max(r['tokens'], 1e-9) for r in con):.0f}% |")
    log("(medians over rounds, min to max in brackets; overheads paired per round; target: mask overhead <= +10%; "
        "tok/s per request, forced tokens counted)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=pathlib.Path, default=None)
    parser.add_argument("--release", action="store_true", help="serve with the release build (the issue's figures)")
    parser.add_argument("--schemas", type=int, default=220)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--overhead-requests", type=int, default=16, help="requests per overhead measurement")
    parser.add_argument("--overhead-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=3, help="overhead rounds (free and constrained alternate)")
    parser.add_argument("--batches", default="1,8", help="concurrent clients of the overhead runs, comma-separated")
    parser.add_argument("--skip-conformance", action="store_true")
    args = parser.parse_args()
    if args.model is None:
        sys.path.insert(0, str(ROOT / "tests" / "server"))
        from test_openai import default_model  # the same rules for where the model is

        args.model = default_model()
    cases = schemas(args.schemas)
    server = Server(args.model, "release" if args.release else "debug")
    try:
        print(f"model {server.model} ({'release' if args.release else 'debug'} build); {len(cases)} schemas; max_tokens {args.max_tokens}", flush=True)
        if not args.skip_conformance:
            import openai

            client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=600)
            began = time.perf_counter()
            passed, refused, failed = conformance(client, server.model, cases, args.max_tokens)
            answered = len(cases) - len(refused)
            print(f"conformance: {passed}/{answered} replies valid ({100.0 * passed / max(answered, 1):.1f}%), "
                  f"{len(refused)} schemas refused with 400, in {time.perf_counter() - began:.0f} s")
            for kind, message, param in refused:
                print(f"  refused ({kind}, param={param}): {message[:200]}")
            for kind, reason, text, error in failed:
                print(f"  invalid ({kind}, finish_reason={reason}): {text!r}: {error}")

        print(f"overhead: {args.overhead_requests} requests per run, max_tokens {args.overhead_tokens}, {args.rounds} rounds", flush=True)
        jumpless = Server(args.model, "release" if args.release else "debug", {"CONFAB_GRAMMAR_JUMP": "0"})
        try:
            runs = overhead(server.base_url, jumpless.base_url, server.model, overhead_cases(args.overhead_requests), args.overhead_tokens,
                            args.rounds, tuple(int(b) for b in args.batches.split(",")), log=lambda line: print(line, flush=True))
        finally:
            jumpless.stop()
        print_overhead(runs)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
