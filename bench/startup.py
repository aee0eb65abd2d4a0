#!/usr/bin/env python3
"""How fast the built app starts: launches it N times through WebDriver under Xvfb (the e2e
setup: tauri-driver, WebKitWebDriver), each with a fresh CONFAB_HOME holding the default model,
and measures from launch (just before the WebDriver session, which starts the app) to

  interactive   the composer present and enabled (or else the sidebar rendered)
  model ready   model-status data-state=ready
  first token   the first streamed text of a fixed prompt on the default model (sent as soon as
                the model is ready; `send->token` is from pressing Enter)
  history       with a seeded history (thousands of conversations): the first conversation-item

Times are taken in the page (a MutationObserver, Date.now()) so WebDriver round trips do not
count; an element already there when the check starts counts at that moment, so `interactive`
is an upper bound (the page's first paint is printed beside it when WebKit reports it).

    bench/startup.py [--runs 5] [--conversations 5000] [--no-history] [--build]

Needs scripts/setup.sh (the e2e tools) and a debug build (`--build` does it: ui, confab-app, and
the confab-store seed example). Re-runs itself in the e2e venv and under xvfb-run as needed.
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEPS = pathlib.Path(os.environ.get("CONFAB_DEPS_DIR") or ROOT / ".deps")
VENV_PY = DEPS / "e2e" / "venv" / "bin" / "python"
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
PROMPT = "What is the capital of France?"


def reexec() -> None:
    """Into the e2e venv, then under Xvfb."""
    if pathlib.Path(sys.prefix).resolve() != VENV_PY.parent.parent.resolve():
        if not VENV_PY.exists():
            sys.exit(f"startup: no e2e venv at {VENV_PY}; run scripts/setup.sh")
        os.execv(str(VENV_PY), [str(VENV_PY), __file__, *sys.argv[1:]])
    if not os.environ.get("DISPLAY") or os.environ.get("CONFAB_BENCH_XVFB") != "1":
        os.environ["CONFAB_BENCH_XVFB"] = "1"
        xvfb = shutil.which("xvfb-run")
        if not xvfb:
            sys.exit("startup: xvfb-run missing; run scripts/setup.sh")
        os.execv(xvfb, [xvfb, "-a", "-s", "-screen 0 1400x900x24", sys.executable, __file__, *sys.argv[1:]])


# In-page waits: resolve with Date.now() when the condition first holds. The condition is pasted
# in (the app's CSP refuses eval and new Function; WebDriver's own script is allowed).
WAIT_JS = """
const check = () => { %s };
const [timeoutMs, done] = [arguments[0], arguments[arguments.length - 1]];
const start = Date.now();
const attempt = () => { try { return check(); } catch (e) { return false; } };
if (attempt()) { done({at: Date.now(), immediate: true}); return; }
const observer = new MutationObserver(() => { if (attempt()) finish(); });
const timer = setInterval(() => { if (attempt()) finish(); else if (Date.now() - start > timeoutMs) fail(); }, 5);
function finish() { observer.disconnect(); clearInterval(timer); done({at: Date.now(), immediate: false}); }
function fail() { observer.disconnect(); clearInterval(timer); done(null); }
observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
"""

INTERACTIVE = """
const c = document.querySelector('[data-testid="composer-input"]');
if (c) return !c.disabled;
return !!document.querySelector('[data-testid="sidebar"]');
"""
READY = "return !!document.querySelector('[data-testid=\"model-status\"][data-state=\"ready\"]');"
FIRST_TOKEN = """
const replies = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
if (!replies.length) return false;
const content = replies[replies.length - 1].querySelector('[data-testid="message-content"]');
return !!content && content.textContent.trim().length > 0;
"""
FIRST_ITEM = "const i = document.querySelector('[data-testid=\"conversation-item\"]'); return !!i && i.offsetParent !== null;"


def wait_in_page(app, condition: str, timeout_s: float) -> dict:
    app.d.set_script_timeout(timeout_s + 10)
    result = app.d.execute_async_script(WAIT_JS.replace("%s", condition), int(timeout_s * 1000))
    if result is None:
        raise TimeoutError(f"timed out: {condition.strip()[:80]}")
    return result


def first_paint(app) -> float | None:
    """The page's first contentful paint, epoch ms, when WebKit reports it."""
    return app.js(
        "const p = performance.getEntriesByType('paint').find(e => e.name === 'first-contentful-paint');"
        "return p ? performance.timeOrigin + p.startTime : null;"
    )


def one_run(harness, app_path: pathlib.Path, history: pathlib.Path | None, chat: bool) -> dict:
    home = harness.make_home("bench")
    if history is not None:
        for f in history.parent.glob(history.name + "*"):
            shutil.copy(f, home / f.name)
    app = harness.ChatApp(home, app=app_path, log_name="startup")
    out = {}
    try:
        app.start()
        launch_epoch = app.launched_epoch_ms
        out["session"] = (time.monotonic() - app.launched_at) * 1000
        origin = app.js("return performance.timeOrigin")
        out["page"] = origin - launch_epoch  # the web view starts loading the page
        interactive = wait_in_page(app, INTERACTIVE, 120)
        out["interactive"] = interactive["at"] - launch_epoch
        paint = first_paint(app)
        if paint:
            out["first paint"] = paint - launch_epoch
        if history is not None:
            out["history"] = wait_in_page(app, FIRST_ITEM, 120)["at"] - launch_epoch
        if chat:
            out["model ready"] = wait_in_page(app, READY, 600)["at"] - launch_epoch
            composer = app.wait_for("composer-input")
            app.fill(composer, PROMPT)
            sent = app.js("return Date.now()")
            from selenium.webdriver.common.keys import Keys

            composer.send_keys(Keys.ENTER)
            token = wait_in_page(app, FIRST_TOKEN, 600)["at"]
            out["first token"] = token - launch_epoch
            out["send->token"] = token - sent
    finally:
        app.quit()
        shutil.rmtree(home, ignore_errors=True)
    return out


def report(title: str, runs: list[dict]) -> None:
    keys = [k for k in ("session", "page", "first paint", "interactive", "history", "model ready", "first token",
                        "send->token") if any(k in r for r in runs)]
    print(f"\n{title} ({len(runs)} runs), milliseconds from launch")
    print("  " + "".join(f"{k:>14}" for k in ["run", *keys]))
    for i, r in enumerate(runs, 1):
        print("  " + f"{i:>14}" + "".join(f"{r[k]:>14.0f}" if k in r else f"{'-':>14}" for k in keys))
    print("  " + f"{'median':>14}" + "".join(
        f"{statistics.median([r[k] for r in runs if k in r]):>14.0f}" for k in keys))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--conversations", type=int, default=5000, help="seeded history size")
    parser.add_argument("--messages", type=int, default=4, help="messages per seeded conversation")
    parser.add_argument("--no-history", action="store_true", help="skip the seeded-history runs")
    parser.add_argument("--no-chat", action="store_true", help="skip model ready / first token")
    parser.add_argument("--seed-bin", type=pathlib.Path, default=None,
                        help="a built confab-store seed example (default: cargo run -p confab-store --example seed)")
    parser.add_argument("--build", action="store_true", help="build ui, confab-app and the seed example first")
    parser.add_argument("--app", type=pathlib.Path,
                        default=pathlib.Path(os.environ.get("CONFAB_E2E_APP") or TARGET / "debug" / "confab-app"))
    args = parser.parse_args()
    if args.build:
        subprocess.run(["nice", "-n", "10", "npm", "run", "build"], cwd=ROOT / "ui", check=True)
        subprocess.run(["nice", "-n", "10", "cargo", "build", "-p", "confab-app"], cwd=ROOT, check=True)
    reexec()

    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    import harness

    os.environ.setdefault("CONFAB_E2E_LOGS", str(ROOT / "target" / "bench-startup-logs"))
    harness.LOGS = pathlib.Path(os.environ["CONFAB_E2E_LOGS"])
    print(f"app: {args.app}")
    runs = []
    for i in range(args.runs):
        runs.append(one_run(harness, args.app, None, not args.no_chat))
        print(f"  run {i + 1}: " + ", ".join(f"{k} {v:.0f}" for k, v in runs[-1].items()), flush=True)
    report("fresh CONFAB_HOME", runs)

    if not args.no_history:
        seeded = ROOT / "target" / "bench-startup" / f"history-{args.conversations}x{args.messages}"
        db = seeded / "confab.db"
        if not db.exists():
            seeded.mkdir(parents=True, exist_ok=True)
            seed = [str(args.seed_bin)] if args.seed_bin else [
                "cargo", "run", "-q", "-p", "confab-store", "--example", "seed", "--"]
            subprocess.run(["nice", "-n", "10", *seed, str(db) + ".tmp", str(args.conversations), str(args.messages)],
                           cwd=ROOT, check=True)
            for f in seeded.glob("confab.db.tmp*"):
                f.rename(seeded / f.name.replace("confab.db.tmp", "confab.db"))
        runs = []
        for i in range(args.runs):
            runs.append(one_run(harness, args.app, db, False))
            print(f"  run {i + 1}: " + ", ".join(f"{k} {v:.0f}" for k, v in runs[-1].items()), flush=True)
        report(f"seeded history: {args.conversations} conversations x {args.messages} messages", runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
