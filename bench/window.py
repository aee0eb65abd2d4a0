#!/usr/bin/env python3
"""What the window costs the engine: Enter -> first token and streamed tokens/s in the real app
window (under Xvfb, driven through WebDriver as in tests/e2e) against `confab generate` on the
same model, prompt, seed and sampling settings, side by side in one run; prints the ratios.

For each prompt (a short question, and a long reply with code and math) and each run:
  cli     `confab generate --json` with a fresh CONFAB_HOME (a cold prefix cache): from handing
          the request to the engine to its first token (the template, tokenizing and the engine's
          own time to first token, which is printed beside it), and decode tokens/s.
  window  a fresh launch with a fresh CONFAB_HOME (a cold prefix cache), settings set, then the
          prompt sent with Enter. Measured in the page (a MutationObserver, performance.now()):
          Enter -> the reply's first text on screen, and (generated tokens - 1) / (last text
          change - first text) for the stream. The engine's own numbers inside the app (the
          reply's stats line) and the CPU seconds the web process spent are printed beside them.

    bench/window.py [--runs 3] [--long-runs 1] [--no-long] [--server-client]

--server-client also turns on the app's local server and keeps a client streaming a long reply
from it through each window run: the gaps between that client's tokens before Enter and while
the window's reply is written (median, p95, longest) show whether the window holds up the engine
(it must not: the engine never waits for a client; each step now serves both rows).

Needs the e2e tools (scripts/setup.sh) and debug builds of both: `cd ui && npm run build`,
`cargo build -p confab-app -p confab-cli`. Re-runs itself in the e2e venv and under xvfb-run.
"""
import argparse
import json
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEPS = pathlib.Path(os.environ.get("CONFAB_DEPS_DIR") or ROOT / ".deps")
VENV_PY = DEPS / "e2e" / "venv" / "bin" / "python"
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")

SHORT = "What is the capital of France?"
# Asks for code and math; at these settings SmolLM2-135M writes about 2,000 tokens (mostly prose).
LONG = ("Write a detailed tutorial on numerical integration: explain the trapezoidal rule and Simpson's rule "
        "with LaTeX formulas like $$\\int_a^b f(x)\\,dx$$, then give Python code for each with examples, "
        "and a table comparing their errors.")
# The app's chat defaults (crates/engine/src/defaults.rs) and a fixed seed, given to both.
SAMPLING = {"temperature": 0.3, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "repetition_penalty": 1.0, "seed": 7}

# Records, from Enter on, when the newest reply's text first shows and when it last changed;
# resolves once the reply has stopped streaming and shows its stats.
WATCH_JS = """
const done = arguments[arguments.length - 1];
const composer = document.querySelector('[data-testid="composer-input"]');
const before = document.querySelectorAll('[data-testid="message"][data-role="assistant"]').length;
const out = {enter: null, first: null, last: null, changes: 0};
let length = 0;
const check = () => {
  const replies = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  if (replies.length <= before) return;
  const reply = replies[replies.length - 1];
  // The reply's markdown, not the "Writing…" shown before its first token.
  const content = reply.querySelector('[data-testid="message-content"] .markdown');
  const now = performance.now();
  const n = content ? content.textContent.length : 0;
  if (reply.dataset.status === 'streaming') {
    if (n > 0 && out.first === null) out.first = now;
    if (n !== length) { length = n; out.last = now; out.changes++; }
    return;
  }
  const stats = reply.querySelector('[data-testid="reply-stats"]');
  if (!stats) return;
  if (out.first === null) out.first = now;
  // The finished reply's text, when more came after the last draw while it streamed.
  if (out.last === null || n !== length) { out.last = now; out.changes++; }
  observer.disconnect();
  out.stats = stats.textContent;
  out.status = reply.dataset.status;
  done(out);
};
const observer = new MutationObserver(check);
observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
out.enter = performance.now();
out.origin = performance.timeOrigin;
composer.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', code: 'Enter', bubbles: true, cancelable: true}));
"""


def reexec(script: str = __file__) -> None:
    """`script` again, in the e2e venv, then under Xvfb (as bench/startup.py)."""
    if pathlib.Path(sys.prefix).resolve() != VENV_PY.parent.parent.resolve():
        if not VENV_PY.exists():
            sys.exit(f"window: no e2e venv at {VENV_PY}; run scripts/setup.sh")
        os.execv(str(VENV_PY), [str(VENV_PY), script, *sys.argv[1:]])
    if os.environ.get("CONFAB_BENCH_XVFB") != "1":
        os.environ["CONFAB_BENCH_XVFB"] = "1"
        xvfb = shutil.which("xvfb-run") or sys.exit("window: xvfb-run missing; run scripts/setup.sh")
        os.execv(xvfb, [xvfb, "-a", "-s", "-screen 0 1400x900x24", sys.executable, script, *sys.argv[1:]])


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of the processes (Linux /proc, clock ticks)."""
    total = 0
    for pid in pids:
        try:
            fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def thread_cpu(pids: list[int]) -> dict[str, float]:
    """CPU seconds by "process/thread" name over the threads of `pids` (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for pid in pids:
        try:
            process = pathlib.Path(f"/proc/{pid}/comm").read_text().strip()
            tasks = list(pathlib.Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                text = (task / "stat").read_text()
            except OSError:
                continue
            name = text[text.find("(") + 1 : text.rfind(")")]
            # Numbered pools (tokio-runtime-w, llvmpipe-3) as one name.
            name = re.sub(r"[-:]?\d+$", "", name)
            fields = text.rsplit(")", 1)[1].split()
            key = f"{process}/{name}"
            out[key] = out.get(key, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def xvfb_pids() -> list[int]:
    pids = []
    for comm in pathlib.Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == "Xvfb":
                pids.append(int(comm.parent.name))
        except (OSError, ValueError):
            continue
    return pids


def web_process_pids(harness, app) -> list[int]:
    pids = []
    for pid in harness.descendants(app.tauri_driver.pid):
        try:
            if "WebKitWebProc" in pathlib.Path(f"/proc/{pid}/comm").read_text():
                pids.append(pid)
        except OSError:
            continue
    return pids


def model_path(harness) -> pathlib.Path:
    return harness.installed_default_model()


def run_cli(cli: pathlib.Path, model: pathlib.Path, prompt: str, max_tokens: int) -> dict:
    home = tempfile.mkdtemp(prefix="confab-bench-cli-")
    try:
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in SAMPLING.items()]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(
            [str(cli), "generate", "--json", "--model", str(model), "--prompt", prompt,
             "--max-tokens", str(max_tokens), *flags],
            env=dict(os.environ, CONFAB_HOME=home), capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = json.loads(out.stdout)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    t = result["timings"]
    return {"ttft": result["request_to_first_token_ms"], "tok/s": t["decode_tokens_per_s"],
            "tokens": result["usage"]["generated"], "cached": result["usage"]["cached"],
            "engine ttft": t["time_to_first_token_ms"], "engine tok/s": t["decode_tokens_per_s"],
            # The whole process, model loading included (seconds).
            "cpu s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2)}


# The engine's first line about a request (its prefix-cache lookup), in the app's log.
REQUEST_LINE = re.compile(r"^(\S+)Z\s+INFO request\{id=(\d+)\}: confab_engine::runtime::generate: prefix cache", re.M)


def engine_start_epoch_ms(log: str) -> float | None:
    """When the engine took the app's first request (epoch ms, from the log's UTC timestamp)."""
    import datetime

    m = REQUEST_LINE.search(log)
    if not m:
        return None
    stamp = datetime.datetime.fromisoformat(m.group(1)[:26]).replace(tzinfo=datetime.timezone.utc)
    return stamp.timestamp() * 1000


STATS = re.compile(r"(\d+) tokens(?: · ([\d.]+) tok/s)?(?: · ([\d.]+) (ms|s) to first token)? · (\d+) of")


def group_of(key: str) -> str:
    """A thread's share of the timeline: the engine's threads, the web process, the X server, the rest."""
    process, thread = key.split("/", 1)
    if process == "confab-app":
        return "engine" if thread == "confab-engine" else "app"
    return "web" if process.startswith("WebKit") else "xvfb" if process == "Xvfb" else "other"


class Timeline:
    """Samples the watched threads' CPU every `every` seconds on a thread of its own (it costs a
    few percent of a core itself, so it runs only with --timeline)."""

    def __init__(self, pids: list[int], every: float = 0.025):
        import threading

        self.pids, self.every, self.samples = pids, every, []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.time() * 1000, thread_cpu(self.pids)))
            time.sleep(self.every)

    def show(self, enter_epoch_ms: float, marks: dict[str, float]) -> str:
        """CPU milliseconds per 50 ms from Enter, by group; `marks` (ms from Enter) labelled."""
        self.stop.set()
        self.thread.join()
        rows = []
        for (t0, a), (t1, b) in zip(self.samples, self.samples[1:]):
            groups: dict[str, float] = {}
            for key, value in b.items():
                groups[group_of(key)] = groups.get(group_of(key), 0.0) + value - a.get(key, 0.0)
            rows.append((t1 - enter_epoch_ms, groups))
        lines, bucket, acc = [], None, {}
        names = ["engine", "web", "xvfb", "app", "other"]
        for at, groups in rows:
            b = int(at // 50)
            if bucket is not None and b != bucket:
                lines.append((bucket, acc))
                acc = {}
            bucket = b
            for k, v in groups.items():
                acc[k] = acc.get(k, 0.0) + v * 1000
        if bucket is not None:
            lines.append((bucket, acc))
        out = ["      ms from Enter " + "".join(f"{n:>8}" for n in names)]
        for b, acc in lines:
            if b < -2 or b > 40:
                continue
            label = " ".join(name for name, at in marks.items() if at is not None and b * 50 <= at < (b + 1) * 50)
            out.append(f"  {b * 50:>6}..{b * 50 + 50:<6}   " + "".join(f"{acc.get(n, 0.0):>8.0f}" for n in names) + f"   {label}")
        return "\n".join(out)


SERVER_PORT = 18431


class ServerClient(threading.Thread):
    """Streams a long reply from the app's local server, noting when each token arrives (epoch ms)."""

    def __init__(self, port: int):
        super().__init__(daemon=True)
        self.port, self.arrivals, self.error = port, [], None

    def run(self) -> None:
        try:
            # The server answers only to the loaded model's name (GET /v1/models lists it).
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/v1/models", timeout=60) as listing:
                model = json.load(listing)["data"][0]["id"]
        except Exception as e:  # noqa: BLE001 - reported beside the figures
            self.error = repr(e)
            return
        body = json.dumps({"model": model, "stream": True, "max_tokens": 4000, "temperature": 0,
                           "messages": [{"role": "user", "content": LONG}]}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/chat/completions", body,
                                         {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=600) as stream:
                for line in stream:
                    if line.startswith(b"data: {") and b'"content"' in line:
                        self.arrivals.append(time.time() * 1000)
        except Exception as e:  # noqa: BLE001 - reported beside the figures
            self.error = repr(e)

    def gaps(self, start_ms: float, end_ms: float) -> dict:
        """Median, p95 and longest gap between tokens arriving within [start_ms, end_ms]."""
        times = [t for t in self.arrivals if start_ms <= t <= end_ms]
        gaps = sorted(b - a for a, b in zip(times, times[1:]))
        if not gaps:
            return {"tokens": len(times)}
        return {"tokens": len(times), "median ms": round(statistics.median(gaps), 1),
                "p95 ms": round(gaps[int(0.95 * (len(gaps) - 1))], 1), "longest ms": round(gaps[-1], 1)}


def run_window(harness, app_path: pathlib.Path, prompt: str, max_tokens: int, timeline: bool = False,
               server_client: bool = False) -> dict:
    home = harness.make_home("bench-window")
    app = harness.ChatApp(home, app=app_path, log_name="window")
    client = None
    try:
        app.start()
        app.wait_model_ready()
        app.set_settings(max_tokens=max_tokens, **SAMPLING)
        if server_client:
            app.set_settings(server_enabled=True, server_port=SERVER_PORT)
            client = ServerClient(SERVER_PORT)
            client.start()
            # Streaming steadily for a second before Enter: the baseline.
            deadline = time.time() + 120
            while len(client.arrivals) < 2 or client.arrivals[-1] - client.arrivals[0] < 1000:
                if client.error or not client.is_alive() or time.time() > deadline:
                    raise AssertionError(f"the local server's client did not stream: {client.error}")
                time.sleep(0.05)
        app.compose(prompt)
        web = web_process_pids(harness, app)
        watched = harness.descendants(app.tauri_driver.pid) + xvfb_pids()
        cpu_before = cpu_seconds(web)
        threads_before = thread_cpu(watched)
        sampler = Timeline(watched) if timeline else None
        app.d.set_script_timeout(harness.seconds(1200))
        seen = app.d.execute_async_script(WATCH_JS)
        cpu = cpu_seconds(web) - cpu_before
        threads = thread_cpu(watched)
        threads = {k: v - threads_before.get(k, 0.0) for k, v in threads.items()}
    finally:
        app.quit()
        log = app.log_path.read_text(errors="replace") if app.log_path.exists() else ""
        shutil.rmtree(home, ignore_errors=True)
    m = STATS.search(seen["stats"])
    if not m:
        raise AssertionError(f"unreadable stats line: {seen['stats']!r} (status {seen['status']})")
    tokens = int(m.group(1))
    engine_ttft = float(m.group(3)) * (1000 if m.group(4) == "s" else 1) if m.group(3) else None
    stream_s = (seen["last"] - seen["first"]) / 1000
    # Where the window's time to first token goes: before the engine has the request (IPC, the
    # store), the engine's own time, and from its first token to the text on screen.
    started = engine_start_epoch_ms(log)
    before_engine = started - (seen["origin"] + seen["enter"]) if started is not None else None
    to_screen = (seen["first"] - seen["enter"]) - before_engine - engine_ttft if before_engine is not None and engine_ttft else None
    if sampler:
        marks = {"engine starts": before_engine,
                 "first token": before_engine + engine_ttft if before_engine is not None and engine_ttft else None,
                 "on screen": seen["first"] - seen["enter"]}
        print(sampler.show(seen["origin"] + seen["enter"], marks), flush=True)
    server = {}
    if client:
        enter_ms, end_ms = seen["origin"] + seen["enter"], seen["origin"] + seen["last"]
        server = {"server client before Enter": client.gaps(0, enter_ms),
                  "server client while the window streams": client.gaps(enter_ms, end_ms)}
        if client.error:
            server["server client error"] = client.error
    return {
        **server,
        "ttft": seen["first"] - seen["enter"],
        "tok/s": (tokens - 1) / stream_s if tokens > 1 and stream_s > 0 else None,
        "tokens": tokens,
        "cached": int(m.group(5)),
        "engine ttft": engine_ttft,
        "engine tok/s": float(m.group(2)) if m.group(2) else None,
        "web cpu %": 100 * cpu / max(0.001, (seen["last"] - seen["enter"]) / 1000),
        "renders": seen["changes"],
        "before engine": before_engine,
        "to screen": to_screen,
        # Where the CPU went while the reply was written, the busiest threads first (seconds).
        "cpu by thread": {k: round(v, 2) for k, v in sorted(threads.items(), key=lambda kv: -kv[1]) if v >= 0.01},
    }


def median(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def fmt(value) -> str:
    return "-" if value is None else f"{value:.1f}" if isinstance(value, float) else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of the short prompt")
    parser.add_argument("--long-runs", type=int, default=1, help="runs of the long prompt")
    parser.add_argument("--no-long", action="store_true")
    parser.add_argument("--short-tokens", type=int, default=64)
    parser.add_argument("--long-tokens", type=int, default=2000)
    parser.add_argument("--timeline", action="store_true",
                        help="print where the CPU went, by 50 ms from Enter (the sampling costs a little CPU)")
    parser.add_argument("--server-client", action="store_true",
                        help="keep a client of the app's local server streaming through each window run")
    parser.add_argument("--app", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("CONFAB_E2E_APP") or TARGET / "debug" / "confab-app"))
    parser.add_argument("--cli", type=pathlib.Path, default=TARGET / "debug" / "confab")
    args = parser.parse_args()
    reexec()

    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    import harness

    os.environ.setdefault("CONFAB_E2E_LOGS", str(ROOT / "target" / "bench-window-logs"))
    harness.LOGS = pathlib.Path(os.environ["CONFAB_E2E_LOGS"])
    model = model_path(harness)
    print(f"app: {args.app}\ncli: {args.cli}\nmodel: {model}\nsampling: {SAMPLING}")
    cases = [("short", SHORT, args.short_tokens, args.runs), ("long", LONG, args.long_tokens, 0 if args.no_long else args.long_runs)]
    cases = [case for case in cases if case[3] > 0]
    for name, prompt, max_tokens, runs in cases:
        cli_runs, window_runs = [], []
        for i in range(runs):
            # Alternated, so that both see the same load on a shared machine.
            cli_runs.append(run_cli(args.cli, model, prompt, max_tokens))
            window_runs.append(run_window(harness, args.app, prompt, max_tokens, args.timeline, args.server_client))
            print(f"  {name} run {i + 1}: cli {cli_runs[-1]}\n  {' ' * len(name)}        window {window_runs[-1]}",
                  flush=True)
        keys = ["ttft", "tok/s", "tokens", "cached", "engine ttft", "engine tok/s", "web cpu %", "renders",
                "before engine", "to screen"]
        print(f"\n{name} prompt, max {max_tokens} tokens, medians of {runs} runs (ttft in ms)")
        print("  " + f"{'':>8}" + "".join(f"{k:>14}" for k in keys))
        for label, rs in (("cli", cli_runs), ("window", window_runs)):
            print("  " + f"{label:>8}" + "".join(f"{fmt(median(rs, k)):>14}" for k in keys))
        ttft = median(window_runs, "ttft") / median(cli_runs, "ttft")
        window_speed, cli_speed = median(window_runs, "tok/s"), median(cli_runs, "tok/s")
        speed = f"{window_speed / cli_speed:.2f}x" if window_speed and cli_speed else "-"
        print(f"  window/cli: first token {ttft:.2f}x the time, streaming {speed} the speed\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
