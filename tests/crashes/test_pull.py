"""A model download killed at random points: `confab pull` against the loopback mirror
(tests/hub/mirror.py, slowed so a pull takes about a second), SIGKILLed at a moment drawn over a
whole pull's length, then pulled again, round after round (each round a fresh cache, its pulls
killed until one finishes). After each kill: every blob in the cache is whole (its bytes hash to
its name: only a verified file is renamed into place), every snapshot link points at a blob,
`refs/main` is absent or names the commit. The next pull starts, resumes and ends with the right
bytes (sha256 of every file against the mirror's), leaving no partial file.

Needs the debug `confab` (CONFAB_BIN overrides). Nothing here reaches anything but 127.0.0.1."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import pathlib
import random as random_module
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from common import CONFAB, KILLS, ROOT, killed, rng, survived

sys.path.insert(0, str(ROOT / "tests" / "hub"))
from mirror import Mirror, fixture_repo, git_blob_id  # noqa: E402

KIND = "model download (confab pull)"
REPO = "confab-test/tiny-llama"
TINY_LLAMA = ROOT / "tests" / "reference" / "fixtures" / "tiny" / "llama"
# A second weights file, big enough that most kills land inside a file.
EXTRA = "model-extra.safetensors"
EXTRA_BYTES = 3 << 20


@unittest.skipUnless(CONFAB.exists(), f"build confab first (cargo build -p confab-cli): {CONFAB}")
class PullKilledAtRandomPoints(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="confab-crash-pull-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.files = fixture_repo(str(TINY_LLAMA))
        self.files[EXTRA] = random_module.Random(7).randbytes(EXTRA_BYTES)
        self.mirror = Mirror({REPO: self.files}).__enter__()
        self.addCleanup(self.mirror.__exit__, None, None, None)
        self.mirror.delay = 0.02  # between 64 KiB chunks: the weights take about a second

    def start(self, cache: pathlib.Path) -> subprocess.Popen:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_ENDPOINT=self.mirror.endpoint, HF_HUB_CACHE=str(cache), HOME=str(self.tmp),
                   CONFAB_HOME=str(self.tmp / "confab"))
        return subprocess.Popen([str(CONFAB), "pull", REPO, "--json"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def repo_dir(self, cache: pathlib.Path) -> pathlib.Path:
        return cache / "models--confab-test--tiny-llama"

    def check_nothing_torn_looks_whole(self, cache: pathlib.Path, what: str) -> None:
        repo = self.repo_dir(cache)
        blobs = repo / "blobs"
        for blob in blobs.iterdir() if blobs.exists() else []:
            if blob.name.endswith(".incomplete"):
                continue
            data = blob.read_bytes()
            self.assertIn(blob.name, (hashlib.sha256(data).hexdigest(), git_blob_id(data)),
                          f"{what}: blob {blob.name} is not whole ({len(data)} bytes)")
        snapshots = repo / "snapshots"
        for link in snapshots.rglob("*") if snapshots.exists() else []:
            if link.is_symlink():
                self.assertTrue(link.exists(), f"{what}: {link} points at no blob")
        ref = repo / "refs" / "main"
        if ref.exists():
            self.assertEqual(ref.read_text(), Mirror.commit(self.files), f"{what}: refs/main")

    @staticmethod
    def after(proc: subprocess.Popen, path: pathlib.Path) -> float:
        """Waits (polling every millisecond) until `path` exists or the process exits."""
        while proc.poll() is None and not path.exists():
            time.sleep(0.001)
        return 0

    def phase(self, cache: pathlib.Path) -> str:
        """Where the killed pull was, by what it left."""
        repo = self.repo_dir(cache)
        if (repo / "refs" / "main").exists():
            return "after the ref"
        partial = next(repo.glob("blobs/*.incomplete"), None)
        if partial is not None:
            names = {hashlib.sha256(d).hexdigest(): n for n, d in self.files.items() if n.endswith(".safetensors")}
            names.update({git_blob_id(d): n for n, d in self.files.items()})
            return f"mid-file ({names.get(partial.name.removesuffix('.incomplete'), '?')})"
        blobs = [b for b in repo.glob("blobs/*")]
        if not blobs:
            return "before a file"
        if len(blobs) < len(self.files) - 1:  # the README is not pulled
            return "between files"
        return "before the ref"

    def check_complete(self, cache: pathlib.Path, out: str) -> None:
        result = json.loads(out)
        snapshot = pathlib.Path(result["model_path"])
        for name in ["config.json", "model.safetensors", EXTRA, "tokenizer.json", "tokenizer_config.json",
                     "generation_config.json"]:
            self.assertEqual(hashlib.sha256((snapshot / name).read_bytes()).hexdigest(),
                             hashlib.sha256(self.files[name]).hexdigest(), name)
        self.assertEqual(list(self.repo_dir(cache).rglob("*.incomplete")), [])
        self.assertEqual((self.repo_dir(cache) / "refs" / "main").read_text(), Mirror.commit(self.files))

    def test_killed_at_random_points_then_pulled_again(self):
        # A whole pull's length, to draw the kills over (the second of two: the first also
        # pays for loading the binary).
        for attempt in range(2):
            started = time.monotonic()
            proc = self.start(self.tmp / f"calibration-{attempt}")
            out, err = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 0, err)
            whole_pull = time.monotonic() - started
            self.check_complete(self.tmp / f"calibration-{attempt}", out)
        needed = sum(self.mirror.served.values()) / 2

        random = rng(KIND)
        last_weights = hashlib.sha256(self.files["model.safetensors"]).hexdigest()  # the last weights pulled
        where = collections.Counter()
        rounds, kills, served_before = 0, 0, sum(self.mirror.served.values())
        while kills < KILLS:
            rounds += 1
            cache = self.tmp / f"round-{rounds}"
            round_kills = 0
            while True:
                proc = self.start(cache)
                try:
                    # The round's last pull (once the kills are spent) runs to its end. A third of
                    # the kills come just after the last weights are renamed into place (their link, the
                    # other files, the ref: the end of a pull is short), the rest anywhere.
                    if kills < KILLS and random.random() < 1 / 3:
                        limit = self.after(proc, self.repo_dir(cache) / "blobs" / last_weights) + random.uniform(0, 0.05)
                    else:
                        limit = random.uniform(0, whole_pull * 1.1) if kills < KILLS else 120
                    out, err = proc.communicate(timeout=limit)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGKILL)
                    proc.communicate()
                    kills += 1
                    round_kills += 1
                    killed(KIND, survived=False)
                    self.check_nothing_torn_looks_whole(cache, f"round {rounds}, kill {kills}")
                    where[self.phase(cache)] += 1
                    continue
                # Finished: the relaunch after the round's kills went on from what they left.
                self.assertEqual(proc.returncode, 0, f"round {rounds}: the pull after a kill failed\n{err}")
                self.check_complete(cache, out)
                for _ in range(round_kills):
                    survived(KIND)
                break
        served = sum(self.mirror.served.values()) - served_before
        print(f"\n{KIND}: {kills} kills over {rounds} rounds (each ended by a complete, verified pull); "
              f"{served / (needed * rounds):.2f}x the repository's bytes fetched per round; killed "
              + ", ".join(f"{n} {phase}" for phase, n in where.most_common()), flush=True)


if __name__ == "__main__":
    unittest.main()
