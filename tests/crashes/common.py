"""What the crash suites share: the binaries, the kill count and seed, a CONFAB_HOME with the
installed default model linked in, and the tally of kills survived per kind."""
from __future__ import annotations

import atexit
import collections
import json
import os
import pathlib
import random
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
CONFAB = pathlib.Path(os.environ.get("CONFAB_BIN") or TARGET / "debug" / "confab")
# Kills per kind for the processes that start fast (confab generate, confab pull); the app's
# kinds take a fifth of it (each kill there is a relaunch through WebDriver). The default keeps
# the suite short; CONFAB_CRASH_KILLS=40 is the long run.
KILLS = int(os.environ.get("CONFAB_CRASH_KILLS") or 6)
SEED = int(os.environ.get("CONFAB_CRASH_SEED") or time.time())

# kind -> [kills, survived]
_TALLY: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])


def rng(kind: str) -> random.Random:
    """Each kind's own generator, so one kind's timings don't shift with another's count."""
    return random.Random(f"{SEED}-{kind}")


def killed(kind: str, survived: bool = True) -> None:
    _TALLY[kind][0] += 1
    _TALLY[kind][1] += int(survived)


def survived(kind: str) -> None:
    """The kill `killed` counted was checked after the relaunch, and nothing was wrong."""
    _TALLY[kind][1] += 1


@atexit.register
def _report() -> None:
    if _TALLY:
        lines = [f"  {kind}: {n[1]} of {n[0]} kills survived" for kind, n in sorted(_TALLY.items())]
        print(f"\ncrashes (seed {SEED}, CONFAB_CRASH_KILLS={KILLS}):\n" + "\n".join(lines), flush=True)


def default_model() -> pathlib.Path | None:
    """The installed default model (same rules as tests/e2e/harness.py), or None."""
    with open(ROOT / "assets" / "default-model.json") as f:
        m = json.load(f)
    if os.environ.get("CONFAB_E2E_MODEL"):
        path = pathlib.Path(os.environ["CONFAB_E2E_MODEL"])
    else:
        data = os.environ.get("XDG_DATA_HOME") or str(pathlib.Path.home() / ".local" / "share")
        path = pathlib.Path(data) / "confab" / "models" / m["folder"] / m["file"]
    return path if path.is_file() and path.stat().st_size == m["size_bytes"] else None


def make_home(name: str) -> pathlib.Path:
    """A fresh CONFAB_HOME with the default model linked into its models folder."""
    home = pathlib.Path(tempfile.mkdtemp(prefix=f"confab-crash-{name}-"))
    model = default_model()
    if model:
        with open(ROOT / "assets" / "default-model.json") as f:
            m = json.load(f)
        dest = home / "models" / m["folder"] / m["file"]
        dest.parent.mkdir(parents=True)
        dest.symlink_to(model)
    return home
