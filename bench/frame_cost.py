#!/usr/bin/env python3
"""What one frame of the window costs in CPU: the real app window (under Xvfb, driven through
WebDriver as in tests/e2e), a short reply on screen, then a character added to the reply's text
every quarter second (each change one frame: layout, paint, the X server). Prints the CPU
milliseconds per change of the web process, the app's own threads and the X server, and the
busiest threads, for each way of drawing, side by side in one run:

  default      what the app does (without a GPU: no accelerated compositing)
  compositing  WEBKIT_FORCE_COMPOSITING_MODE=1: WebKitGTK's tiles composited through OpenGL,
               emulated on the CPU by llvmpipe where there is no GPU
  cpu-tiles    the same, with the tiles painted by Skia on the CPU rather than through OpenGL
               (WEBKIT_SKIA_ENABLE_CPU_RENDERING=1: what the app did before without a GPU)

    bench/frame_cost.py [--changes 30] [--launches 2]

Needs what bench/window.py needs (scripts/setup.sh, a debug build of the app and the UI).
"""
import argparse
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import window  # noqa: E402  (its venv/Xvfb re-exec and /proc readers)

MODES = {
    "default": {},
    "compositing": {"WEBKIT_FORCE_COMPOSITING_MODE": "1"},
    "cpu-tiles": {"WEBKIT_FORCE_COMPOSITING_MODE": "1", "WEBKIT_SKIA_ENABLE_CPU_RENDERING": "1"},
}

# Adds one character to the reply's last paragraph on each of `changes` frames, a quarter
# second apart (the window is idle between them).
TYPE_JS = """
const [changes, done] = [arguments[0], arguments[arguments.length - 1]];
const paragraph = [...document.querySelectorAll('[data-testid="message"][data-role="assistant"] .markdown p')].pop();
const node = document.createTextNode(' ');
paragraph.appendChild(node);
let i = 0;
const step = () => {
  node.data += 'x';
  if (++i < changes) setTimeout(() => requestAnimationFrame(step), 250);
  else setTimeout(done, 400);
};
requestAnimationFrame(step);
"""


def measure(harness, mode: str, changes: int) -> tuple[dict[str, float], dict[str, float]]:
    """CPU ms per change by group (web, app, xvfb) and by thread, for one launch."""
    home = harness.make_home("frame-cost")
    app = harness.ChatApp(home, log_name=f"frame-cost-{mode}")
    try:
        app.start(extra_env=MODES[mode])
        app.wait_model_ready()
        app.set_settings(max_tokens=8)
        app.send("Say hello.")
        time.sleep(1.5)  # the reply's last frames, and the stats line, drawn
        watched = harness.descendants(app.tauri_driver.pid) + window.xvfb_pids()
        before = window.thread_cpu(watched)
        app.d.set_script_timeout(harness.seconds(120))
        app.d.execute_async_script(TYPE_JS, changes)
        after = window.thread_cpu(watched)
    finally:
        app.quit()
    threads = {k: (v - before.get(k, 0.0)) * 1000 / changes for k, v in after.items()}
    groups: dict[str, float] = {}
    for key, ms in threads.items():
        group = window.group_of(key)
        if group != "engine":
            groups[group] = groups.get(group, 0.0) + ms
    return groups, {k: ms for k, ms in threads.items() if ms >= 0.5}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--launches", type=int, default=2, help="launches of the app per mode")
    args = parser.parse_args()
    window.reexec(__file__)
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    import harness

    os.environ.setdefault("CONFAB_E2E_LOGS", str(ROOT / "target" / "bench-frame-cost-logs"))
    harness.LOGS = pathlib.Path(os.environ["CONFAB_E2E_LOGS"])
    totals: dict[str, list[float]] = {mode: [] for mode in MODES}
    for launch in range(args.launches):
        for mode in MODES:  # alternated, so that both see the same load
            groups, threads = measure(harness, mode, args.changes)
            totals[mode].append(sum(groups.values()))
            busiest = ", ".join(f"{k} {ms:.1f}" for k, ms in sorted(threads.items(), key=lambda kv: -kv[1])[:6])
            shown = " ".join(f"{g} {ms:.1f}" for g, ms in sorted(groups.items()))
            print(f"  {mode:>12} launch {launch + 1}: {sum(groups.values()):.1f} ms CPU per change ({shown}); {busiest}", flush=True)
    medians = {mode: statistics.median(values) for mode, values in totals.items()}
    print(f"\nCPU per one-character change, median of {args.launches} launches × {args.changes} changes:")
    for mode, ms in medians.items():
        print(f"  {mode:>12}: {ms:.1f} ms")
    for other in ("compositing", "cpu-tiles"):
        print(f"  default / {other}: {medians['default'] / medians[other]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
