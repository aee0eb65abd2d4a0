#!/usr/bin/env python3
"""`confab serve` against `mlx_lm.server` 0.32.2 under the same load, in one run: 1, 4 and 8
concurrent streaming clients, mixed prompt lengths, on the same weights (float32 SmolLM2 from
bench/make_models.py, what both compute in on a CPU), over loopback. Prints, per server and
level, the aggregate output tokens/s and p50/p95 time to first token, and the ratios.

    python3 bench/serve.py [--clients 1,4,8] [--requests 3] [--max-tokens 128]

Bounded: each client sends --requests streamed completions, one after another; every request
has a timeout and the whole run a --budget in seconds. With 3 requests each client sends one
prompt of each length, so every level carries the same mix (with fewer, one client would send
only the short ones and the levels would not compare); 128 tokens is a short chat reply. Needs `python3 bench/run.py` to have
made .deps/bench (its venv with mlx-lm, the checkpoints) and a release `confab`.

Every prompt starts with a number no other request uses, so neither server's prompt cache
turns the load into cache hits. Greedy, so both write the same tokens.
"""
import argparse
import http.client
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WORK = os.path.join(ROOT, ".deps", "bench")
PY = os.path.join(WORK, "venv", "bin", "python")
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
CONFAB = os.path.join(TARGET, "release", "confab")
# Mixed prompt lengths (in words, about as many tokens): short chats and a long pasted text.
PROMPT_WORDS = [24, 96, 400]
WORDS = "the river runs past old stone walls where children play and merchants call out prices".split()


def prompt(serial: int, words: int) -> str:
    body = " ".join(WORDS[(serial + i) % len(WORDS)] for i in range(words))
    return f"Request {serial}. {body}. Now continue the story:"


class Server:
    def __init__(self, name: str, command: list[str], ready_pattern: str | None, port: int | None):
        self.name = name
        self.log = tempfile.NamedTemporaryFile("w+", prefix=f"bench-serve-{name}-", suffix=".log", delete=False)
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.log, text=True)
        if ready_pattern:
            line = self.process.stdout.readline()
            match = re.search(ready_pattern, line)
            if not match:
                self.stop()
                raise SystemExit(f"{name} did not start: {line!r}; log in {self.log.name}")
            self.base = match.group(1)
        else:
            self.base = f"http://127.0.0.1:{port}/v1"
        deadline = time.time() + 300
        while True:
            try:
                with urllib.request.urlopen(self.base + "/models", timeout=5) as r:
                    raw = r.read()
                # mlx_lm.server answers 200 with an empty body when its cache folder lists nothing.
                self.models = json.loads(raw)["data"] if raw.strip() else []
                break
            except OSError:
                if time.time() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise SystemExit(f"{name} did not answer; log in {self.log.name}")
                time.sleep(0.5)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def stream_one(base: str, model: str, text: str, max_tokens: int, timeout: float) -> tuple[float, int]:
    """One streamed completion: (seconds to the first text, completion tokens)."""
    host, port = re.match(r"http://([^:/]+):(\d+)", base).groups()
    connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
    body = json.dumps({"model": model, "prompt": text, "max_tokens": max_tokens, "temperature": 0,
                       "stream": True, "stream_options": {"include_usage": True}})
    started = time.perf_counter()
    connection.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        raise RuntimeError(f"{response.status}: {response.read()[:300]!r}")
    first, chunks, usage = None, 0, None
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            break
        event = json.loads(data)
        if event.get("usage"):
            usage = event["usage"]["completion_tokens"]
        for choice in event.get("choices") or []:
            if choice.get("text"):
                chunks += 1
                if first is None:
                    first = time.perf_counter() - started
    connection.close()
    return (first if first is not None else time.perf_counter() - started), (usage if usage is not None else chunks)


def percentile(ordered: list[float], q: float) -> float:
    """The nearest-rank q-quantile of an ascending list (NaN for an empty one)."""
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else float("nan")


def level(server: Server, model: str, clients: int, requests: int, max_tokens: int, timeout: float, serial0: int,
          words: list[int] = PROMPT_WORDS) -> dict:
    """`clients` streaming at once, each sending `requests` prompts in turn (of `words` words, cycled)."""
    ttfts, tokens, errors = [], [], []
    lock = threading.Lock()

    def client(index: int):
        for r in range(requests):
            serial = serial0 + index * requests + r
            text = prompt(serial, words[(index + r) % len(words)])
            try:
                ttft, n = stream_one(server.base, model, text, max_tokens, timeout)
                with lock:
                    ttfts.append(ttft)
                    tokens.append(n)
            except Exception as e:  # noqa: BLE001 — reported, not fatal
                with lock:
                    errors.append(str(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    ttfts.sort()
    return {"clients": clients, "requests": len(ttfts), "errors": errors, "tokens": sum(tokens), "wall_s": wall,
            "tok_s": sum(tokens) / wall if wall else 0.0, "ttft_p50_s": percentile(ttfts, 0.5),
            "ttft_p95_s": percentile(ttfts, 0.95)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=os.path.join(WORK, "smollm2-f32"))
    parser.add_argument("--confab", default=CONFAB)
    parser.add_argument("--clients", default="1,4,8")
    parser.add_argument("--requests", type=int, default=3, help="per client, one after another (3: one of each prompt length)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--timeout", type=float, default=300, help="per request, seconds")
    parser.add_argument("--budget", type=float, default=1200, help="the whole run, seconds")
    parser.add_argument("--only", choices=["confab", "mlx-lm"])
    args = parser.parse_args()
    levels = [int(c) for c in args.clients.split(",")]
    for path, what in ((args.model, "the benchmark checkpoint"), (PY, "the bench venv"), (args.confab, "a release confab")):
        if not os.path.exists(path):
            raise SystemExit(f"{what} is missing ({path}); run python3 bench/run.py once (or cargo build --release -p confab-cli)")

    servers = []
    if args.only != "mlx-lm":
        servers.append(("confab", [args.confab, "serve", "--model", args.model, "--port", "0", "--no-prefix-cache"],
                        r"at (http://\S+)", None, None))
    if args.only != "confab":
        port = 18000 + os.getpid() % 1000
        servers.append(("mlx_lm.server", [PY, "-m", "mlx_lm", "server", "--model", args.model, "--port", str(port),
                                          "--log-level", "WARNING"], None, port, args.model))
    started = time.time()
    results: dict[str, list[dict]] = {}
    serial = 0
    for name, command, pattern, port, model_field in servers:
        server = Server(name, command, pattern, port)
        try:
            model = model_field or server.models[0]["id"]
            stream_one(server.base, model, prompt(10**6, 8), 4, args.timeout)  # warm-up: first graphs, allocations
            results[name] = []
            for clients in levels:
                if time.time() - started > args.budget:
                    print(f"budget of {args.budget:.0f} s spent; stopping", file=sys.stderr)
                    break
                row = level(server, model, clients, args.requests, args.max_tokens, args.timeout, serial)
                serial += clients * args.requests
                results[name].append(row)
                print(f"{name:14} {clients} clients: {row['tok_s']:7.1f} tok/s aggregate ({row['tokens']} tokens in "
                      f"{row['wall_s']:.1f} s), TTFT p50 {row['ttft_p50_s']:.2f} s, p95 {row['ttft_p95_s']:.2f} s"
                      + (f", {len(row['errors'])} errors: {row['errors'][0]}" if row["errors"] else ""), flush=True)
        finally:
            server.stop()

    print()
    print("| clients | " + " | ".join(f"{n} tok/s | {n} TTFT p50/p95 (s)" for n in results) + " | tok/s ratio |")
    print("|---" * (2 * len(results) + 2) + "|")
    for i, clients in enumerate(levels):
        rows = [results[n][i] for n in results if i < len(results[n])]
        if len(rows) != len(results):
            break
        cells = " | ".join(f"{r['tok_s']:.1f} | {r['ttft_p50_s']:.2f} / {r['ttft_p95_s']:.2f}" for r in rows)
        ratio = f"{rows[0]['tok_s'] / rows[1]['tok_s']:.2f}×" if len(rows) == 2 and rows[1]["tok_s"] else "-"
        print(f"| {clients} | {cells} | {ratio} |")
    for name, rows in results.items():
        if len(rows) >= 2 and rows[0]["tok_s"]:
            print(f"{name}: {rows[-1]['clients']} clients give {rows[-1]['tok_s'] / rows[0]['tok_s']:.2f}× one client's tok/s")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
