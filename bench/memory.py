#!/usr/bin/env python3
"""Memory, measured: what a token of keys/values costs at each precision, the longest chat the
default model serves under a 1 GB budget, and a server under more long prompts than its budget
holds at once. Confab beside mlx-lm 0.32.2 where there is a counterpart.

    python3 bench/memory.py [--part bytes,longest,load] [--prompt 512] [--gen 32]
                            [--budget 1GB] [--precisions float32,16-bit,8-bit,4-bit] [--clients 8] [--fits 4] [--load-words 1000]
                            [--folders DIR] [--python PY] [--binary PATH] [--no-mlx-lm]

bytes: `confab bench` (the default GGUF, float32 activations on a CPU) at full precision, 16-bit
  (`--dtype bfloat16`), `--kv-bits 8` and `--kv-bits 4`, beside bench/mlx_lm_bench.py on the
  same weights (DIR/smollm2-f32 and smollm2-bf16 from bench/make_models.py). Keys/values: what
  the layers hold at the end (`Done`'s usage; mlx-lm: its cache's nbytes), per token over the
  positions held; peak: MLX's peak memory and the process's peak RSS (`wait4`).
longest: each precision at the model's whole context (prompt = context - gen, one cold run) under
  `--memory-budget 1GB`: answered or refused, what admission reserved (its log line: the state
  at its longest and a chunk's activations), MLX's peak against the weights alone (a 1-token
  run's peak less its keys/values), so the activation estimate (`model::memory::prefill_activation_bytes`) is set beside
  what the chunk took; how many such chats fit at once.
load: `confab serve` under a budget that holds --fits of the long requests (read from a first
  request's reservation), --clients streamed at once; every request must be answered, the
  server alive, its peak RSS (VmHWM) at most its RSS after loading plus the budget; p50/p95
  time to first token, beside `mlx_lm.server` under the same load (no budget there).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402  (the load's client and server helpers)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
# (name, confab's arguments, mlx-lm's folder, mlx-lm's kv bits)
PRECISIONS = [
    ("float32", [], "smollm2-f32", None),
    ("16-bit", ["--dtype", "bfloat16"], "smollm2-bf16", None),
    ("8-bit", ["--kv-bits", "8"], "smollm2-f32", 8),
    ("4-bit", ["--kv-bits", "4"], "smollm2-f32", 4),
]
RESERVED = re.compile(r"memory reserved state_bytes=(\d+) activation_bytes=(\d+) budget_bytes=(\d+)")


def measured(cmd):
    """Runs `cmd`: (stdout, stderr, peak RSS in bytes, exit code)."""
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = [], []
    readers = [threading.Thread(target=lambda s, b: b.append(s.read()), args=(process.stdout, out)),
               threading.Thread(target=lambda s, b: b.append(s.read()), args=(process.stderr, err))]
    for r in readers:
        r.start()
    for r in readers:
        r.join()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return out[0], err[0], usage.ru_maxrss * 1024, process.returncode


def confab(binary, prompt, gen, extra, warm_up=True):
    cmd = [binary, "bench", "-v", "--prompt-tokens", str(prompt), "--gen-tokens", str(gen), "--json", *extra]
    if not warm_up:
        cmd.append("--no-warm-up")
    out, err, rss, code = measured(cmd)
    reserved = RESERVED.search(err)
    if code != 0:
        last = err.strip().splitlines()[-1] if err.strip() else ""
        return {"error": last, "rss": rss, "reserved": reserved and tuple(map(int, reserved.groups()))}
    report = json.loads(out)
    report["rss"] = rss
    report["reserved"] = tuple(map(int, reserved.groups())) if reserved else None
    return report


def mlx_lm(python, folder, prompt, gen, kv_bits):
    cmd = [python, os.path.join(ROOT, "bench", "mlx_lm_bench.py"), folder, str(prompt), str(gen)]
    if kv_bits:
        cmd.append(str(kv_bits))
    out, err, rss, code = measured(cmd)
    if code != 0:
        raise SystemExit(f"mlx-lm failed: {err[-500:]}")
    report = json.loads(out.strip().splitlines()[-1])
    report["rss"] = rss
    return report


def mb(b):
    return f"{b / 1e6:,.1f}"


def part_bytes(args):
    positions = args.prompt + args.gen
    print(f"## Bytes per token: {args.prompt} + {args.gen} tokens (keys/values held at the end; peaks of the whole run)")
    # Both grow their buffers 256 positions at a time: a token's own cost is over the positions held.
    held = -(-positions // 256) * 256
    print(f"bytes/token: over the {held} positions the buffers hold")
    print("| precision | confab keys/values MB | bytes/token | MLX peak MB | peak RSS MB | mlx-lm keys/values MB | bytes/token | MLX peak MB | peak RSS MB | bytes ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = {}
    for name, extra, folder, bits in PRECISIONS:
        ours = confab(args.binary, args.prompt, args.gen, extra)
        if "error" in ours:
            raise SystemExit(f"confab {name}: {ours['error']}")
        theirs = None if args.no_mlx_lm else mlx_lm(args.python, os.path.join(args.folders, folder), args.prompt, args.gen, bits)
        rows[name] = ours
        cells = [name, mb(ours["keys_values_bytes"]), f"{ours['keys_values_bytes'] / held:,.0f}",
                 mb(ours["peak_memory_gb"] * 1e9), mb(ours["rss"])]
        if theirs:
            cells += [mb(theirs["keys_values_bytes"]), f"{theirs['keys_values_bytes'] / held:,.0f}",
                      mb(theirs["peak_memory_gb"] * 1e9), mb(theirs["rss"]),
                      f"{ours['keys_values_bytes'] / theirs['keys_values_bytes']:.3f}×"]
        else:
            cells += ["-"] * 5
        print("| " + " | ".join(cells) + " |", flush=True)
    return rows


def part_longest(args):
    context = args.context
    budget = args.budget
    print(f"\n## The longest chat under --memory-budget {budget}: the whole context ({context} positions: "
          f"{context - args.gen} prompt + {args.gen} generated), 512-token chunks")
    print("| precision | answered | reserved: state MB + chunk MB (estimate) | MLX peak MB | weights MB | chunk measured MB | peak RSS MB | such chats at once |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, extra, _, _ in [p for p in PRECISIONS if p[0] in args.precisions.split(",")]:
        # A one-token run holds the weights, one 256-position step of keys/values and next to nothing else.
        alone = confab(args.binary, 1, 1, extra, warm_up=False)
        weights = alone["peak_memory_gb"] * 1e9 - alone["keys_values_bytes"]
        run = confab(args.binary, context - args.gen, args.gen, [*extra, "--memory-budget", budget], warm_up=False)
        state, activations, budget_bytes = run["reserved"] or (0, 0, 0)
        at_once = (budget_bytes - activations) // state if state else 0
        if "error" in run:
            print(f"| {name} | no: {run['error']} | {mb(state)} + {mb(activations)} | - | {mb(weights)} | - | {mb(run['rss'])} | {at_once} |", flush=True)
            continue
        peak = run["peak_memory_gb"] * 1e9
        chunk = peak - weights - run["keys_values_bytes"]
        print(f"| {name} | yes | {mb(state)} + {mb(activations)} | {mb(peak)} | {mb(weights)} | {mb(chunk)} | {mb(run['rss'])} | {at_once} |", flush=True)


def vm_hwm(pid):
    """The process's peak resident set, bytes (and its current one)."""
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    kb = lambda k: int(fields[k].strip().split()[0]) * 1024
    return kb("VmHWM"), kb("VmRSS")


def part_load(args):
    model_path = os.path.join(args.folders, "smollm2-f32")
    base = [args.binary, "serve", "--model", model_path, "--port", "0", "--no-prefix-cache"]
    pattern = r"at (http://\S+)"
    # One request's reservation, under the default budget.
    probe = serve.Server("confab", base, pattern, None)
    try:
        model = probe.models[0]["id"]
        serve.stream_one(probe.base, model, serve.prompt(10**6, args.load_words), args.max_tokens, args.timeout)
        time.sleep(0.5)
        state, activations, _ = map(int, RESERVED.findall(open(probe.log.name).read())[-1])
    finally:
        probe.stop()
    budget = args.fits * state + activations + state // 2
    print(f"\n## {args.clients} clients with long prompts ({args.load_words} words, {args.max_tokens} tokens each) "
          f"under a budget that holds {args.fits}: {mb(budget)} MB ({args.fits} × {mb(state)} MB of state + "
          f"{mb(activations)} MB for a chunk + half a state)")
    server = serve.Server("confab", [*base, "--memory-budget", str(budget)], pattern, None)
    try:
        serve.stream_one(server.base, model, serve.prompt(10**6 + 1, 8), 4, args.timeout)  # warm-up
        _, loaded = vm_hwm(server.process.pid)
        row = serve.level(server, model, args.clients, 1, args.max_tokens, args.timeout, 0, [args.load_words])
        hwm, _ = vm_hwm(server.process.pid)
        alive = server.process.poll() is None
        log = open(server.log.name).read()
    finally:
        server.stop()
    waits = re.findall(r"a request waits for memory", log)
    waited = [int(w) for w in re.findall(r"waited_ms=(\d+)", log) if int(w) > 0]
    ok = row["requests"] == args.clients and not row["errors"] and alive and hwm <= loaded + budget
    print(f"confab: {row['requests']}/{args.clients} answered, {len(row['errors'])} errors, server alive: {alive}; "
          f"{len(waits)} waited for memory (longest {max(waited, default=0) / 1e3:.1f} s); "
          f"peak RSS {mb(hwm)} MB against {mb(loaded)} MB after loading + {mb(budget)} MB budget = {mb(loaded + budget)} MB; "
          f"TTFT p50 {row['ttft_p50_s']:.1f} s, p95 {row['ttft_p95_s']:.1f} s; {row['tokens']} tokens in {row['wall_s']:.1f} s"
          + (f"; first error: {row['errors'][0]}" if row["errors"] else ""), flush=True)
    if not args.no_mlx_lm:
        port = 18000 + os.getpid() % 1000
        theirs = serve.Server("mlx_lm.server", [args.python, "-m", "mlx_lm", "server", "--model", model_path, "--port", str(port),
                                                "--log-level", "WARNING"], None, port)
        try:
            serve.stream_one(theirs.base, model_path, serve.prompt(10**6 + 2, 8), 4, args.timeout)
            _, their_loaded = vm_hwm(theirs.process.pid)
            their = serve.level(theirs, model_path, args.clients, 1, args.max_tokens, args.timeout, 100, [args.load_words])
            their_hwm, _ = vm_hwm(theirs.process.pid)
        finally:
            theirs.stop()
        print(f"mlx_lm.server: {their['requests']}/{args.clients} answered; peak RSS {mb(their_hwm)} MB ({mb(their_loaded)} MB "
              f"after loading); TTFT p50 {their['ttft_p50_s']:.1f} s, p95 {their['ttft_p95_s']:.1f} s; "
              f"{their['tokens']} tokens in {their['wall_s']:.1f} s", flush=True)
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", default="bytes,longest,load")
    parser.add_argument("--prompt", type=int, default=512)
    parser.add_argument("--gen", type=int, default=32)
    parser.add_argument("--context", type=int, default=8192, help="the default model's context")
    parser.add_argument("--budget", default="1GB")
    parser.add_argument("--precisions", default=",".join(p[0] for p in PRECISIONS), help="for --part longest")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--fits", type=int, default=4)
    parser.add_argument("--load-words", type=int, default=1000)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--folders", default=os.path.join(ROOT, ".deps", "bench"), help="bench/make_models.py's output")
    parser.add_argument("--python", default=os.path.join(ROOT, ".deps", "bench", "venv", "bin", "python"), help="with mlx-lm 0.32.2")
    parser.add_argument("--binary", default=os.path.join(TARGET, "debug", "confab"))
    parser.add_argument("--no-mlx-lm", action="store_true")
    args = parser.parse_args()
    parts = args.part.split(",")
    if "bytes" in parts:
        part_bytes(args)
    if "longest" in parts:
        part_longest(args)
    if "load" in parts and not part_load(args):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
