"""The prefix cache's disk tier killed while it writes: `confab generate` keeps the conversation's
keys/values on disk when it exits (blocks of 256 positions under blocks/, the entry's tail, then
its manifest), and is killed (SIGKILL) at random moments, most of them inside that write, the
rest anywhere in the run. After each kill the folder holds nothing half-written that a manifest
names as whole (each manifest parses; its blocks are whole), and the next run (the relaunch)
starts, drops what is torn and answers with the same greedy reply as a run without the cache.
At the end every prompt runs once more untouched: same replies, and nothing left in the folder
but whole entries (no temporaries, no data without a manifest, no block no entry lists).

Needs the debug `confab` (CONFAB_BIN overrides) and the installed default model."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import signal
import subprocess
import threading
import time
import unittest
import zlib

from common import CONFAB, KILLS, default_model, killed, make_home, rng, survived

KIND = "prefix-cache disk write (confab generate)"
# A shared opening of a bit over one block (256 positions), then a question of its own: the
# entries share their first block, and a prompt asked again rewrites its entry under the same id.
OPENING = "Tell me a long story about a cat named Bob who lives by the sea. " * 20
PROMPTS = [OPENING + q for q in ("Now: a haiku.", "What colour is Bob?", "Where does Bob sleep?")]
MAX_TOKENS = "8"


def crc(path: pathlib.Path) -> str:
    return f"{zlib.crc32(path.read_bytes()):08x}"


class Run:
    """One `confab generate`, its JSON reply read as it comes."""

    def __init__(self, home: pathlib.Path, prompt: str, cache: pathlib.Path | None):
        cache_args = ["--prefix-cache-dir", str(cache)] if cache else ["--no-prefix-cache"]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [str(CONFAB), "generate", "--prompt", prompt, "--max-tokens", MAX_TOKENS, "--temperature", "0", "--json",
             "--no-encoder-cache", *cache_args],
            env={**os.environ, "CONFAB_HOME": str(home)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.replied = threading.Event()
        self.replied_at: float | None = None
        self.lines: list[str] = []
        self.stderr = ""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.rstrip() == "}":  # the end of the pretty-printed reply
                self.replied_at = time.monotonic()
                self.replied.set()

    def _read_err(self) -> None:
        self.stderr = self.proc.stderr.read()

    def reply(self) -> str | None:
        return json.loads("".join(self.lines))["text"] if self.replied.is_set() else None

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.wait()

    def wait(self, timeout: float = 300) -> int:
        code = self.proc.wait(timeout)
        self.reader.join(10)
        self.err_reader.join(10)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code


def partials(cache: pathlib.Path) -> bool:
    for folder in (cache, cache / "blocks"):
        try:
            with os.scandir(folder) as entries:
                if any(".partial." in entry.name for entry in entries):
                    return True
        except FileNotFoundError:
            pass
    return False


def first_temporary(cache: pathlib.Path, proc: subprocess.Popen) -> float | None:
    """When a temporary file (`*.partial.*`, an entry's or a block's) first shows in the
    folder, polled every half millisecond until the process exits; None if none did."""
    while proc.poll() is None:
        if partials(cache):
            return time.monotonic()
        time.sleep(0.0005)
    return None


def temporaries_gone(cache: pathlib.Path, proc: subprocess.Popen) -> float:
    """When the temporary files are gone (the last renamed into place), or the process ended."""
    while proc.poll() is None and partials(cache):
        time.sleep(0.0005)
    return time.monotonic()


def inspect(cache: pathlib.Path) -> dict:
    """What the folder holds: whole entries, entries whose data does not match their manifest
    (a rewrite killed between its renames: the next load must drop them), data without a
    manifest, temporaries. A manifest that does not parse or names a missing or torn block is
    a `problem`: nothing half-written may look whole."""
    found = {"whole": 0, "torn": 0, "orphans": 0, "temporaries": 0, "problems": []}
    listed = set()
    for path in sorted(cache.iterdir()):
        name = path.name
        if ".partial." in name:
            found["temporaries"] += 1
        elif name.endswith(".json"):
            try:
                manifest = json.loads(path.read_text())
            except (ValueError, OSError) as e:
                found["problems"].append(f"{name} does not parse: {e}")
                continue
            data = path.with_suffix(".safetensors")
            if not data.exists():
                found["problems"].append(f"{name} names no data")
                continue
            for block in manifest.get("blocks", []):
                listed.add(block["id"])
                block_path = cache / "blocks" / f"{block['id']}.safetensors"
                if not block_path.exists():
                    found["problems"].append(f"{name} lists a missing block {block['id']}")
                elif block_path.stat().st_size != block["bytes"] or crc(block_path) != block["checksum"]:
                    found["problems"].append(f"{name} lists a torn block {block['id']}")
            whole = data.stat().st_size == manifest["bytes"] and crc(data) == manifest["checksum"]
            found["whole" if whole else "torn"] += 1
        elif name.endswith(".safetensors") and not path.with_suffix(".json").exists():
            found["orphans"] += 1
    blocks = cache / "blocks"
    for path in blocks.iterdir() if blocks.exists() else []:
        if ".partial." in path.name:
            found["temporaries"] += 1
        elif path.name.removesuffix(".safetensors") not in listed:
            found["orphans"] += 1
    return found


@unittest.skipUnless(CONFAB.exists(), f"build confab first (cargo build -p confab-cli): {CONFAB}")
@unittest.skipUnless(default_model(), "the default model is not installed (scripts/setup.sh)")
class PrefixCacheKilledWhileWriting(unittest.TestCase):
    def setUp(self):
        self.home = make_home("prefix")
        self.cache = self.home / "prefix"
        self.addCleanup(shutil.rmtree, self.home, True)

    def run_to_end(self, prompt: str, cache: pathlib.Path | None) -> Run:
        run = Run(self.home, prompt, cache)
        code = run.wait()
        self.assertEqual(code, 0, run.stderr[-3000:])
        self.assertIsNotNone(run.reply(), run.stderr[-3000:])
        return run

    def test_killed_at_random_points_of_its_writes(self):
        cold = [self.run_to_end(p, None).reply() for p in PROMPTS]
        # How long the write at exit takes (the reply is printed, then the cache is written):
        # from the reply to the exit, and from the first temporary file to the exit.
        first = Run(self.home, PROMPTS[1], self.cache)
        self.assertTrue(first.replied.wait(300), first.stderr)
        writing = first_temporary(self.cache, first.proc)
        write_time = max(0.002, temporaries_gone(self.cache, first.proc) - writing) * 1.2 if writing else None
        self.assertEqual(first.wait(), 0, first.stderr[-3000:])
        self.assertEqual(first.reply(), cold[1])
        whole_run = time.monotonic() - first.started
        write_window = max(0.05, (time.monotonic() - first.replied_at) * 1.3)
        # The poll can miss a write quicker than a busy machine schedules it.
        write_time = write_time or write_window / 5

        random = rng(KIND)
        report = {"whole": 0, "torn": 0, "orphans": 0, "temporaries": 0, "in the write": 0, "after the reply": 0,
                  "anywhere": 0, "replies checked": 0}
        previous_kill = None
        for k in range(KILLS):
            which = random.randrange(len(PROMPTS))
            run = Run(self.home, PROMPTS[which], self.cache)
            # Half once its first temporary file shows (the write under way), the rest from its
            # reply to its exit or anywhere in the run.
            mode = random.choices(["in the write", "after the reply", "anywhere"], [0.5, 0.3, 0.2])[0]
            if mode == "anywhere":
                time.sleep(random.uniform(0, whole_run))
            else:
                self.assertTrue(run.replied.wait(300), f"no reply (kill {k}): {run.stderr[-3000:]}")
                if mode == "in the write" and first_temporary(self.cache, run.proc) is not None:
                    time.sleep(random.uniform(0, write_time))
                else:
                    time.sleep(random.uniform(0, write_window))
            report[mode] += 1
            run.kill()
            # This run was the relaunch after the previous kill: it started, and its reply, if
            # it got that far, is the cold one.
            if run.reply() is not None:
                self.assertEqual(run.reply(), cold[which], f"kill {k}: the reply after a kill differs\n{run.stderr[-3000:]}")
                report["replies checked"] += 1
            if previous_kill is not None:
                survived(KIND)
            found = inspect(self.cache)
            self.assertEqual(found["problems"], [], f"kill {k}: half-written files named as whole")
            for key in ("whole", "torn", "orphans", "temporaries"):
                report[key] += found[key]
            killed(KIND, survived=False)
            previous_kill = k

        # The relaunch after the last kill, and every prompt once more: the replies are the cold
        # ones, and what the kills left is gone (a torn entry is dropped when read, then its
        # prompt's run writes it whole again).
        for prompt, want in zip(PROMPTS, cold):
            run = self.run_to_end(prompt, self.cache)
            self.assertEqual(run.reply(), want, run.stderr[-3000:])
        survived(KIND)
        found = inspect(self.cache)
        self.assertEqual((found["problems"], found["torn"], found["orphans"], found["temporaries"]), ([], 0, 0, 0), found)

        # What a torn write would leave, made on purpose: a byte flipped in every entry's data.
        # The next run says so in its log, drops the entry, and answers as without the cache.
        for data in self.cache.glob("*.safetensors"):
            raw = bytearray(data.read_bytes())
            raw[len(raw) // 2] ^= 0xFF
            data.write_bytes(bytes(raw))
        run = self.run_to_end(PROMPTS[0], self.cache)
        self.assertEqual(run.reply(), cold[0])
        self.assertIn("does not match its checksum", run.stderr)
        print(f"\n{KIND}: {KILLS} kills ({report['in the write']} once a temporary file showed, "
              f"{report['after the reply']} between the reply and the exit, {report['anywhere']} anywhere); "
              f"seen after the kills: {report['whole']} whole entries, {report['torn']} torn, {report['orphans']} orphan "
              f"files, {report['temporaries']} temporaries; {report['replies checked']} replies checked; "
              f"the write took {write_time / 1.2 * 1e3:.0f} ms, the reply to the exit {write_window / 1.3 * 1e3:.0f} ms", flush=True)


if __name__ == "__main__":
    unittest.main()
