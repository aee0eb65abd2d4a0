#!/usr/bin/env python3
"""`confab serve` against `mlx_lm.server` 0.32.2 under concurrent load, in one run: the same
weights (the default model's float32 folder from bench/make_models.py), the same libmlx and BLAS,
loopback only, bounded in requests and time. Prints each server's figures and their ratios.

    python3 bench/serve.py [--clients 1,4,8] [--requests 3] [--max-tokens 64] [--only confab]

Each client streams chat completions one after another (`--requests` each) with prompts of
mixed lengths (about 30, 250 and 900 tokens, rotating), greedy, `max_tokens` fixed. Every prompt
starts with its own request number, so neither server's prompt cache turns the load into cache
hits: this measures batching. For each number of concurrent clients:

- aggregate output tok/s: completion tokens of all requests / wall time of the level;
- time to first token (first content chunk), p50 and p95 over the level's requests.

Targets (issue 13): at 8 clients, aggregate tok/s ≥ 3× one client's and ≥ 1.2× mlx_lm.server's,
with p95 time to first token no worse than its. Needs `target/release/confab` and the bench venv
(`python3 bench/run.py --quick` sets both up once).
"""
import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WORK = os.path.join(ROOT, ".deps", "bench")
PY = os.path.join(WORK, "venv", "bin", "python")
CONFAB = os.path.join(ROOT, "target", "release", "confab")
MODEL = os.path.join(WORK, "smollm2-f32")

# Sentences to build prompts of a given rough length (about 14 tokens each).
FILLER = ("The river carried the boats past the old mill, where the miller counted sacks of grain. ",
          "A lighthouse keeper wrote the weather in a ledger every evening before lighting the lamp. ",
          "In the market square, children traded marbles while their parents argued about prices. ")
PROMPT_SENTENCES = (2, 18, 64)  # about 30, 250 and 900 tokens


def prompt(request: int) -> str:
    n = PROMPT_SENTENCES[request % len(PROMPT_SENTENCES)]
    body = "".join(FILLER[(request + i) % len(FILLER)] for i in range(n))
    return f"Request {request}. {body}\nSummarise the text above in one sentence."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A server process on loopback, started and waited for; stopped on exit."""

    def __init__(self, name: str, argv: list, port: int):
        self.name, self.port = name, port
        self.log = open(os.path.join(WORK, f"serve-{name}.log"), "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 180
        while time.time() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{name} exited with {self.proc.returncode}; see {self.log.name}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/v1/models")
                conn.getresponse()  # any answer: listening (mlx_lm.server's list needs a hub cache)
                return
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        sys.exit(f"{name} did not answer on port {port} within 180 s; see {self.log.name}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def stream_chat(port: int, model: str, text: str, max_tokens: int) -> dict:
    """One streamed chat completion: time to first content, completion tokens, total time."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": text}],
                       "max_tokens": max_tokens, "temperature": 0.0, "stream": True,
                       "stream_options": {"include_usage": True}})
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:300]!r}")
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
            usage = event["usage"]
        for choice in event.get("choices") or []:
            if (choice.get("delta") or {}).get("content"):
                chunks += 1
                if first is None:
                    first = time.perf_counter() - start
    conn.close()
    tokens = usage["completion_tokens"] if usage else chunks
    return {"ttft": first if first is not None else time.perf_counter() - start,
            "tokens": tokens, "seconds": time.perf_counter() - start}


def load_level(port: int, model: str, clients: int, requests: int, max_tokens: int,
               first_request: int, time_limit: float) -> dict:
    """`clients` threads, each streaming `requests` chats in turn; stops issuing at the limit."""
    results, errors = [], []
    lock = threading.Lock()
    deadline = time.perf_counter() + time_limit

    def client(c: int) -> None:
        for r in range(requests):
            if time.perf_counter() > deadline:
                return
            number = first_request + c * requests + r
            try:
                result = stream_chat(port, model, prompt(number), max_tokens)
            except Exception as e:  # noqa: BLE001 - reported, not fatal to the level
                with lock:
                    errors.append(str(e))
                return
            with lock:
                results.append(result)

    start = time.perf_counter()
    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    ttfts = sorted(r["ttft"] for r in results)
    p95 = ttfts[min(len(ttfts) - 1, int(round(0.95 * (len(ttfts) - 1))))] if ttfts else float("nan")
    return {"clients": clients, "requests": len(results), "errors": errors,
            "tokens": sum(r["tokens"] for r in results), "wall": wall,
            "tok_s": sum(r["tokens"] for r in results) / wall,
            "ttft_p50": statistics.median(ttfts) if ttfts else float("nan"), "ttft_p95": p95}


def served_model(port: int, fallback: str) -> str:
    """The first model the server lists; mlx_lm.server lists only its hub cache, so for it the
    folder it was started with."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/v1/models")
    response = conn.getresponse()
    try:
        return json.loads(response.read())["data"][0]["id"] if response.status == 200 else fallback
    except (ValueError, KeyError, IndexError):
        return fallback


def run_server(name: str, argv: list, args) -> list:
    port = int(argv[argv.index("--port") + 1])
    server = Server(name, argv, port)
    try:
        model_name = served_model(port, args.model)
        stream_chat(port, model_name, prompt(0), 8)  # warm-up: weights paged in, kernels built
        levels = []
        for i, clients in enumerate(args.clients):
            level = load_level(port, model_name, clients, args.requests, args.max_tokens,
                               first_request=1000 * (i + 1), time_limit=args.time_limit)
            levels.append(level)
            print(f"  {name:>10} {clients:>2} clients: {level['requests']:>3} requests, {level['tokens']:>5} tokens "
                  f"in {level['wall']:6.1f} s = {level['tok_s']:6.1f} tok/s; TTFT p50 {level['ttft_p50']:.2f} s, "
                  f"p95 {level['ttft_p95']:.2f} s" + (f"; {len(level['errors'])} errors: {level['errors'][0]}" if level['errors'] else ""),
                  flush=True)
        return levels
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", default="1,4,8", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--requests", type=int, default=3, help="requests per client at each level")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--time-limit", type=float, default=300, help="seconds per level before no new request")
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--only", choices=["confab", "mlx-lm"])
    args = parser.parse_args()
    for need in ([CONFAB] if args.only != "mlx-lm" else []) + ([PY] if args.only != "confab" else []) + [args.model]:
        if not os.path.exists(need):
            sys.exit(f"{need} is missing: run `python3 bench/run.py --quick` once (it builds and sets up both)")

    print(f"model {args.model}; clients {args.clients}, {args.requests} requests each, "
          f"max_tokens {args.max_tokens}, greedy, prompts of ~30/250/900 tokens", flush=True)
    ours = theirs = None
    if args.only != "mlx-lm":
        ours = run_server("confab", [CONFAB, "serve", "--model", args.model, "--port", str(free_port())], args)
    if args.only != "confab":
        theirs = run_server("mlx_lm", [PY, "-m", "mlx_lm", "server", "--model", args.model, "--port", str(free_port()),
                                       "--log-level", "WARNING"], args)

    if ours:
        one = ours[0]["tok_s"]
        for level in ours[1:]:
            print(f"confab scaling: {level['clients']} clients {level['tok_s'] / one:.2f}x one client's tok/s")
    if ours and theirs:
        for a, b in zip(ours, theirs):
            print(f"{a['clients']:>2} clients: tok/s confab/mlx_lm {a['tok_s'] / b['tok_s']:.2f}x; "
                  f"TTFT p95 mlx_lm/confab {b['ttft_p95'] / a['ttft_p95']:.2f}x (above 1: confab sooner)")


if __name__ == "__main__":
    main()
