"""Structured output on `confab serve`: conformance over generated JSON Schemas, and what
constrained decoding costs.

1. Conformance: 200+ JSON Schemas, generated below from a fixed seed (nested objects, arrays
   with minItems/maxItems, enums, const, patterns, anyOf/oneOf, $ref/$defs, numeric bounds,
   required/optional properties, additionalProperties false, as OpenAI's strict mode asks of
   every object), each sent as
   `response_format: json_schema` (strict) at temperature 0. Every reply must parse
   (json.loads) and validate (the `jsonschema` package). A schema the server refuses (400
   naming the feature) is counted apart, with the message.
2. Overhead: decode tokens per second (streamed, first token to last, per request) with and
   without `response_format`, the same prompts and max_tokens, at batch 1 (one client) and
   batch 8 (eight concurrent clients). Constrained replies include the tokens the grammar
   forced, which cost no sampling (and, for a row stepping alone, no forward pass).

Run (after `cargo build -p confab-cli`; the venv comes from scripts/setup.sh):
    .deps/server/venv/bin/python bench/structured.py [--model PATH] [--schemas 200] [--max-tokens 160]
Environment: CARGO_TARGET_DIR (where the built `confab` is).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import openai

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "server"))
from test_openai import default_model  # noqa: E402  (the same rules for where the model is)

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
    def __init__(self, model: pathlib.Path):
        confab = TARGET / "debug" / "confab"
        if not confab.is_file():
            sys.exit(f"{confab} is not built; run cargo build -p confab-cli")
        self.home = pathlib.Path(tempfile.mkdtemp(prefix="confab-bench-"))
        self.log = open(self.home / "stderr.log", "w")
        self.process = subprocess.Popen([str(confab), "serve", "--port", "0", "--model", str(model)],
                                        env=dict(os.environ, CONFAB_HOME=str(self.home)), stdout=subprocess.PIPE, stderr=self.log, text=True)
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


def ask(client: openai.OpenAI, model: str, prompt: str, max_tokens: int, schema: dict | None):
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


def throughput(client, model, cases, max_tokens, concurrency, constrained):
    """Streams each request; decode speed is tokens after the first over the time from the
    first token to the last (prefill left out: constrained replies are shorter, and their
    prompts the same). Returns (mean decode tok/s per request, tokens, wall seconds)."""
    def one(case):
        _, schema = case
        kwargs = {}
        if constrained:
            kwargs["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
        stream = client.chat.completions.create(model=model, messages=[{"role": "user", "content": prompt_for(schema)}], max_tokens=max_tokens,
                                                temperature=0, stream=True, stream_options={"include_usage": True}, **kwargs)
        first = last = None
        tokens = 0
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                last = time.perf_counter()
                first = first or last
            if chunk.usage:
                tokens = chunk.usage.completion_tokens
        rate = (tokens - 1) / (last - first) if first and last and last > first and tokens > 1 else None
        return tokens, rate
    began = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        results = list(pool.map(one, cases))
    wall = time.perf_counter() - began
    rates = [r for _, r in results if r]
    return sum(rates) / max(len(rates), 1), sum(t for t, _ in results), wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=pathlib.Path, default=None)
    parser.add_argument("--schemas", type=int, default=220)
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--overhead-requests", type=int, default=16, help="requests per overhead measurement")
    parser.add_argument("--overhead-tokens", type=int, default=48)
    parser.add_argument("--skip-conformance", action="store_true")
    args = parser.parse_args()
    model_path = args.model or default_model()
    cases = schemas(args.schemas)
    server = Server(model_path)
    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=600)
    try:
        print(f"model {server.model}; {len(cases)} schemas; max_tokens {args.max_tokens}", flush=True)
        if not args.skip_conformance:
            began = time.perf_counter()
            passed, refused, failed = conformance(client, server.model, cases, args.max_tokens)
            answered = len(cases) - len(refused)
            print(f"conformance: {passed}/{answered} replies valid ({100.0 * passed / max(answered, 1):.1f}%), "
                  f"{len(refused)} schemas refused with 400, in {time.perf_counter() - began:.0f} s")
            for kind, message, param in refused:
                print(f"  refused ({kind}, param={param}): {message[:200]}")
            for kind, reason, text, error in failed:
                print(f"  invalid ({kind}, finish_reason={reason}): {text!r}: {error}")

        # Overhead: the same requests, free and constrained, served one at a time and 8 at once.
        sample = [c for c in cases if c[0] in ("flat", "nested", "array", "$ref", "numeric bounds")][: args.overhead_requests]
        throughput(client, server.model, sample[:2], 8, 1, True)  # warm up
        for concurrency in (1, 8):
            free, free_tokens, free_wall = throughput(client, server.model, sample, args.overhead_tokens, concurrency, False)
            constrained, c_tokens, c_wall = throughput(client, server.model, sample, args.overhead_tokens, concurrency, True)
            print(f"batch {concurrency}: decode per request: free {free:.1f} tok/s ({free_tokens} tokens, {free_wall:.1f} s wall), "
                  f"constrained {constrained:.1f} tok/s ({c_tokens} tokens, {c_wall:.1f} s wall): "
                  f"{100.0 * (free / constrained - 1.0):+.1f}% time per token")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
