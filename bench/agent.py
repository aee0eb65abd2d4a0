#!/usr/bin/env python3
"""An agent's session replayed turn by turn: Confab's three endpoints (Chat Completions,
Anthropic's Messages, OpenAI's Responses) against `mlx_lm.server` 0.32.2,
in one run, on the same weights (float32 SmolLM2 from bench/make_models.py, 8,192 tokens of
context). The recorded session defines four tools; each turn appends the agent's tool call and
the tool's result (a short page of code) to the history and resends all of it, as coding agents do,
growing past 8,000 tokens. Per turn: prompt tokens, the tokens the server's cache served, the
share of the previous turn's prompt that came from the cache, time to the first token, and decode
tokens per second.

    python3 bench/agent.py [--turns 20] [--max-tokens 8] [--only confab|mlx-lm] [--structured-rounds 3]

Targets (issue 35): from turn 2 on, at least 95% of the tokens shared with the previous turn
come from the cache, and time to first token stays flat as the conversation grows. Then, on a
pair of Confab servers (the second with grammar jump off), what structured output costs: the
time per forward pass with `response_format` (grammar jump off: the token mask alone) over
without it, at batch 1 and 8 (at most 10% more), and the forward passes grammar jump saves on
schema-heavy replies. bench/structured.py measures it (its docstring says what the figures
mean); --structured-rounds 0 leaves it out. Needs
`python3 bench/run.py` to have made .deps/bench (its venv with mlx-lm, the checkpoints) and a
release `confab` (cargo build --release -p confab-cli).
"""
import argparse
import http.client
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve import CONFAB, PY, WORK, Server  # noqa: E402  (the same servers as bench/serve.py)
import structured  # noqa: E402  (the overhead of constrained decoding, measured once, there)

TOOLS = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file of the repository.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "list_dir", "description": "List a folder of the repository.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
    {"type": "function", "function": {"name": "run_tests", "description": "Run the test suite and return its output.",
                                      "parameters": {"type": "object", "properties": {"filter": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "write_file", "description": "Write a file of the repository.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
                                                     "required": ["path", "text"]}}},
]
SYSTEM = ("You are a careful coding agent working in a Rust repository. Use the tools to read code, run the tests and "
          "write fixes. Explain each step briefly before calling a tool.")


def tool_result(turn: int) -> str:
    """A short page of code, different every turn (about 360 tokens): with the call, a turn adds
    about 400 tokens, so 20 turns end just under SmolLM2's 8,192."""
    lines = []
    for i in range(7):
        lines.append(f"pub fn step_{turn}_{i}(input: &[u32]) -> u64 {{ input.iter().map(|v| u64::from(*v) * {i + turn}).sum() }}")
    return "\n".join(lines)


def session(turns: int) -> list[list[dict]]:
    """The messages each turn sends: the history so far, ending with the newest tool result."""
    history = [{"role": "system", "content": SYSTEM},
               {"role": "user", "content": "The tests fail after the last refactor. Find out why and fix it."}]
    sends = []
    for turn in range(turns):
        sends.append([dict(m) for m in history])
        name = TOOLS[turn % len(TOOLS)]["function"]["name"]
        arguments = {"path": f"src/module_{turn}.rs"} if name != "run_tests" else {"filter": f"module_{turn}"}
        if name == "write_file":
            arguments["text"] = f"// fixed in turn {turn}"
        call_id = f"call_{turn:04d}"
        history.append({"role": "assistant", "content": f"Step {turn + 1}: I will call {name}.",
                        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
        history.append({"role": "tool", "tool_call_id": call_id, "content": tool_result(turn)})
    return sends


def anthropic_messages(messages: list[dict]) -> tuple[str, list[dict]]:
    """The same history in the Messages API's shape."""
    system, out = "", []
    for m in messages:
        if m["role"] == "system":
            system = m["content"]
        elif m["role"] == "assistant":
            blocks = [{"type": "text", "text": m["content"]}]
            for call in m.get("tool_calls", []):
                blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"],
                               "input": json.loads(call["function"]["arguments"])})
            out.append({"role": "assistant", "content": blocks})
        elif m["role"] == "tool":
            out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}]})
        else:
            out.append({"role": "user", "content": m["content"]})
    return system, out


def responses_input(messages: list[dict]) -> tuple[str, list[dict]]:
    """The same history as the Responses API's instructions and input items."""
    instructions, items = "", []
    for m in messages:
        if m["role"] == "system":
            instructions = m["content"]
        elif m["role"] == "assistant":
            items.append({"role": "assistant", "content": m["content"]})
            for call in m.get("tool_calls", []):
                items.append({"type": "function_call", "call_id": call["id"], "name": call["function"]["name"],
                              "arguments": call["function"]["arguments"]})
        elif m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        else:
            items.append({"role": "user", "content": m["content"]})
    return instructions, items


def post_stream(base: str, path: str, body: dict, timeout: float, headers: dict | None = None):
    """Streams one request: yields (seconds since sent, event) for each server-sent event."""
    host, port = re.match(r"http://([^:/]+):(\d+)", base).groups()
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    started = time.perf_counter()
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status}: {response.read()[:300]!r}")
    for raw in response:
        line = raw.decode().strip()
        if line.startswith("data:") and line[5:].strip() != "[DONE]":
            yield time.perf_counter() - started, json.loads(line[5:])
    connection.close()


def chat_turn(base: str, model: str, messages: list[dict], max_tokens: int, timeout: float) -> dict:
    body = {"model": model, "messages": messages, "tools": TOOLS, "max_tokens": max_tokens, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    ttft, last, usage = None, None, {}
    for at, event in post_stream(base, "/v1/chat/completions", body, timeout):
        if event.get("usage"):
            usage = event["usage"]
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls"):
                ttft = at if ttft is None else ttft
                last = at
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    return {"ttft": ttft, "prompt": usage.get("prompt_tokens"), "cached": cached, "tok_s": decode_rate(ttft, last, usage.get("completion_tokens"))}


def messages_turn(base: str, model: str, messages: list[dict], max_tokens: int, timeout: float) -> dict:
    system, history = anthropic_messages(messages)
    tools = [{"name": t["function"]["name"], "description": t["function"]["description"], "input_schema": t["function"]["parameters"]}
             for t in TOOLS]
    body = {"model": model, "system": system, "messages": history, "tools": tools, "max_tokens": max_tokens,
            "temperature": 0, "stream": True}
    ttft, last, prompt, cached, generated = None, None, None, None, None
    for at, event in post_stream(base, "/v1/messages", body, timeout, {"anthropic-version": "2023-06-01"}):
        if event.get("type") == "message_start":
            # Anthropic's input_tokens leaves out the tokens read from the cache.
            usage = event["message"]["usage"]
            cached = usage.get("cache_read_input_tokens") or 0
            prompt = usage["input_tokens"] + cached
        if event.get("type") == "message_delta":
            generated = event["usage"]["output_tokens"]
        if event.get("type") == "content_block_delta":
            ttft = at if ttft is None else ttft
            last = at
    return {"ttft": ttft, "prompt": prompt, "cached": cached, "tok_s": decode_rate(ttft, last, generated)}


def responses_turn(base: str, model: str, messages: list[dict], max_tokens: int, timeout: float) -> dict:
    # The whole history each turn, kept nowhere (store false), as agents on this API resend it.
    instructions, items = responses_input(messages)
    tools = [{"type": "function", **t["function"]} for t in TOOLS]
    body = {"model": model, "instructions": instructions, "input": items, "tools": tools, "max_output_tokens": max_tokens,
            "temperature": 0, "stream": True, "store": False}
    ttft, last, usage = None, None, {}
    for at, event in post_stream(base, "/v1/responses", body, timeout):
        kind = event.get("type", "")
        if kind.endswith(".delta"):
            ttft = at if ttft is None else ttft
            last = at
        if kind in ("response.completed", "response.incomplete"):
            usage = event["response"]["usage"]
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens")
    return {"ttft": ttft, "prompt": usage.get("input_tokens"), "cached": cached, "tok_s": decode_rate(ttft, last, usage.get("output_tokens"))}


def decode_rate(first: float | None, last: float | None, generated: int | None) -> float | None:
    """Tokens per second after the first, from the first streamed piece to the last (a call
    streams whole, so a reply that is one call has no rate)."""
    if first is None or last is None or not generated or generated < 2 or last <= first:
        return None
    return (generated - 1) / (last - first)


def replay(name: str, turn_fn, base: str, model: str, sends: list[list[dict]], max_tokens: int, timeout: float) -> list[dict]:
    rows = []
    for i, messages in enumerate(sends):
        row = turn_fn(base, model, messages, max_tokens, timeout)
        previous = rows[-1]["prompt"] if rows else None
        row["reuse"] = (row["cached"] / previous) if previous and row["cached"] is not None else None
        rows.append(row)
        reuse = f"{row['reuse']:.1%}" if row["reuse"] is not None else "-"
        print(f"{name:22} turn {i + 1:2}: prompt {row['prompt'] or 0:5} tokens, cached {row['cached'] if row['cached'] is not None else '-':>5}, "
              f"of the previous prompt {reuse:>6}, TTFT {row['ttft'] or float('nan'):.3f} s, "
              f"decode {row.get('tok_s') or float('nan'):.1f} tok/s", flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=os.path.join(WORK, "smollm2-f32"))
    parser.add_argument("--confab", default=CONFAB)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--only", choices=["confab", "mlx-lm"])
    parser.add_argument("--structured-rounds", type=int, default=3, help="rounds of the structured-output overhead (0: none)")
    parser.add_argument("--structured-requests", type=int, default=16)
    parser.add_argument("--structured-tokens", type=int, default=48)
    args = parser.parse_args()
    for path, what in ((args.model, "the benchmark checkpoint"), (PY, "the bench venv"), (args.confab, "a release confab")):
        if not os.path.exists(path):
            raise SystemExit(f"{what} is missing ({path}); run python3 bench/run.py once (or cargo build --release -p confab-cli)")
    sends = session(args.turns)
    results: dict[str, list[dict]] = {}
    if args.only != "mlx-lm":
        # Each endpoint on a server of its own with an empty cache (its disk tier included), so
        # that one replay's cached prefixes do not serve the next.
        endpoints = (("confab chat/completions", chat_turn), ("confab messages", messages_turn), ("confab responses", responses_turn))
        for name, turn_fn in endpoints:
            os.environ["CONFAB_HOME"] = tempfile.mkdtemp(prefix="bench-agent-")
            server = Server("confab", [args.confab, "serve", "--model", args.model, "--port", "0"], r"at (http://\S+)", None)
            try:
                results[name] = replay(name, turn_fn, server.base, server.models[0]["id"], sends, args.max_tokens, args.timeout)
            finally:
                server.stop()
                shutil.rmtree(os.environ.pop("CONFAB_HOME"), ignore_errors=True)
    structured_runs = None
    if args.only != "mlx-lm" and args.structured_rounds > 0:
        # Two servers: the second with grammar jump off, for the mask's cost alone.
        servers, homes = [], []
        try:
            for jump in ("1", "0"):
                homes.append(tempfile.mkdtemp(prefix="bench-agent-"))
                os.environ.update(CONFAB_HOME=homes[-1], CONFAB_GRAMMAR_JUMP=jump)
                servers.append(Server("confab", [args.confab, "serve", "--model", args.model, "--port", "0"], r"at (http://\S+)", None))
            print("confab structured output: free, constrained, constrained with grammar jump off", flush=True)
            structured_runs = structured.overhead(servers[0].base, servers[1].base, servers[0].models[0]["id"],
                                                  structured.overhead_cases(args.structured_requests), args.structured_tokens,
                                                  args.structured_rounds, log=lambda line: print(line, flush=True))
        finally:
            for server in servers:
                server.stop()
            for home in homes:
                shutil.rmtree(home, ignore_errors=True)
            os.environ.pop("CONFAB_HOME", None)
            os.environ.pop("CONFAB_GRAMMAR_JUMP", None)
    if args.only != "confab":
        port = 18000 + os.getpid() % 1000
        server = Server("mlx_lm.server", [PY, "-m", "mlx_lm", "server", "--model", args.model, "--port", str(port), "--log-level", "WARNING"],
                        None, port)
        try:
            results["mlx_lm.server"] = replay("mlx_lm.server", chat_turn, server.base, args.model, sends, args.max_tokens, args.timeout)
        finally:
            server.stop()

    print()
    print("| endpoint | prompt tokens, last turn | cache share of the previous prompt, turns 2+ (min / median) | TTFT turn 1 (s) | TTFT turns 2+ (median s) | TTFT last turn (s) | decode tok/s (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, rows in results.items():
        shares = [r["reuse"] for r in rows[1:] if r["reuse"] is not None]
        later = [r["ttft"] for r in rows[1:] if r["ttft"] is not None]
        rates = [r["tok_s"] for r in rows if r.get("tok_s")]
        share = f"{min(shares):.1%} / {statistics.median(shares):.1%}" if shares else "not reported"
        rate = f"{statistics.median(rates):.1f}" if rates else "-"
        print(f"| {name} | {rows[-1]['prompt']} | {share} | {rows[0]['ttft']:.3f} | {statistics.median(later):.3f} | {rows[-1]['ttft']:.3f} | {rate} |")
    if "confab chat/completions" in results and "mlx_lm.server" in results:
        ours = statistics.median(r["ttft"] for r in results["confab chat/completions"][1:])
        theirs = statistics.median(r["ttft"] for r in results["mlx_lm.server"][1:])
        print(f"\nmedian TTFT, turns 2+: mlx_lm.server / confab = {theirs / ours:.2f}×")
    if structured_runs:
        print("\nconfab structured output (response_format json_schema): free, constrained, constrained with grammar jump off:")
        structured.print_overhead(structured_runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
