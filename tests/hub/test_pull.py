"""`confab pull` against the loopback mirror (mirror.py): a full download into the Hugging Face
cache layout that the engine then runs, a process killed mid-file and resumed without fetching
its bytes again, two pulls of one repository at once (the second waits for the first's files
and fetches none; one whose holder is killed takes over), a checksum mismatch (fetched once
more, then an error), 404, a gated repository (401 without a token, 403 with the wrong one), a
server that drops the connection every N bytes, and an architecture the engine does not run
(refused before the weights).

Needs the debug `confab` binary (cargo builds it for its own tests; CONFAB_BIN overrides).
Nothing here reaches anything but 127.0.0.1.
"""

import collections
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mirror import Mirror, fixture_repo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
CONFAB = os.environ.get("CONFAB_BIN", os.path.join(TARGET, "debug", "confab"))
TINY_LLAMA = os.path.join(ROOT, "tests", "reference", "fixtures", "tiny", "llama")
REPO = "confab-test/tiny-llama"
WEIGHTS = "model.safetensors"


@unittest.skipUnless(os.path.exists(CONFAB), f"build confab first (cargo build -p confab-cli): {CONFAB}")
class Pull(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.tmp.name, "hub")
        files = fixture_repo(TINY_LLAMA)
        bert = {"config.json": json.dumps({"model_type": "bert", "architectures": ["BertModel"]}).encode(),
                WEIGHTS: b"\0" * 1000}
        self.mirror = Mirror({REPO: files, "confab-test/tiny-bert": bert}).__enter__()
        self.files = files

    def tearDown(self):
        self.mirror.__exit__(None, None, None)
        self.tmp.cleanup()

    def env(self, token=None):
        # HF_ENDPOINT as the hub's own tools read it; no HF_TOKEN unless given; a HOME of our own
        # so no real cache or token leaks in.
        env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
        env.update(HF_ENDPOINT=self.mirror.endpoint, HF_HUB_CACHE=self.cache, HOME=self.tmp.name,
                   CONFAB_HOME=os.path.join(self.tmp.name, "confab"))
        if token:
            env["HF_TOKEN"] = token
        return env

    def pull(self, *args, token=None, timeout=120):
        return subprocess.run([CONFAB, "pull", *args, "--json"], env=self.env(token), capture_output=True,
                              text=True, timeout=timeout)

    def snapshot(self):
        return os.path.join(self.cache, "models--confab-test--tiny-llama", "snapshots", Mirror.commit(self.files))

    def assert_complete(self, out):
        self.assertEqual(out.returncode, 0, out.stderr)
        result = json.loads(out.stdout)
        self.assertEqual(result["model_path"], self.snapshot())
        for name in ["config.json", WEIGHTS, "tokenizer.json", "tokenizer_config.json", "generation_config.json"]:
            path = os.path.join(self.snapshot(), name)
            self.assertTrue(os.path.islink(path), name)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), self.files[name], name)
        self.assertFalse(os.path.exists(os.path.join(self.snapshot(), "README.md")), "only the model's files")
        self.assertEqual(glob.glob(os.path.join(self.cache, "*", "blobs", "*.incomplete")), [])
        with open(os.path.join(self.cache, "models--confab-test--tiny-llama", "refs", "main")) as f:
            self.assertEqual(f.read(), Mirror.commit(self.files))
        return result

    def test_a_full_download_lands_in_the_cache_layout_and_runs(self):
        out = self.pull(REPO)
        result = self.assert_complete(out)
        self.assertEqual(self.mirror.served[WEIGHTS], len(self.files[WEIGHTS]))
        self.assertIn("MiB", out.stderr, "a progress line")
        # The engine loads the snapshot (links into blobs/) and generates.
        gen = subprocess.run([CONFAB, "generate", "--model", result["model_path"], "--prompt", "hello",
                              "--max-tokens", "4", "--temperature", "0", "--json"],
                             env=self.env(), capture_output=True, text=True, timeout=300)
        self.assertEqual(gen.returncode, 0, gen.stderr)
        self.assertGreater(json.loads(gen.stdout)["usage"]["generated"], 0)
        # Pulling again fetches nothing.
        served = sum(self.mirror.served.values())
        self.assert_complete(self.pull(REPO))
        self.assertEqual(sum(self.mirror.served.values()), served)

    def test_killed_mid_file_then_resumed_without_fetching_its_bytes_again(self):
        self.mirror.delay = 0.05  # 64 KiB every 50 ms: the weights take about half a second
        proc = subprocess.Popen([CONFAB, "pull", REPO], env=self.env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        partial = None
        deadline = time.time() + 60
        while time.time() < deadline:
            found = glob.glob(os.path.join(self.cache, "*", "blobs", "*.incomplete"))
            if found and os.path.getsize(found[0]) >= 128 * 1024:
                partial = found[0]
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assertIsNotNone(partial, "the weights never started")
        kept = os.path.getsize(partial)
        self.assertLess(kept, len(self.files[WEIGHTS]), "killed mid-file")

        self.mirror.delay = 0
        self.mirror.ranges.clear()
        self.assert_complete(self.pull(REPO))
        self.assertEqual([r for r in self.mirror.ranges if r[0] == WEIGHTS], [(WEIGHTS, kept)],
                         "one Range request from where it stopped")
        # (The killed run's answer may still count a chunk written after the kill: count the
        # resumed answer only.)
        self.assertEqual(self.mirror.served_from[(WEIGHTS, kept)], len(self.files[WEIGHTS]) - kept)

    def start_pull(self):
        return subprocess.Popen([CONFAB, "pull", REPO, "--json"], env=self.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def wait_for_partial_weights(self, proc):
        """The partial weights file once it holds a chunk (the pull is writing them)."""
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            found = glob.glob(os.path.join(self.cache, "*", "blobs", "*.incomplete"))
            sizes = [os.path.getsize(f) for f in found if os.path.exists(f)]
            if sizes and max(sizes) >= 64 * 1024:
                return found[0]
            time.sleep(0.01)
        self.fail("the weights never started")

    def finish(self, proc):
        stdout, stderr = proc.communicate(timeout=120)
        return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)

    def requests_per_file(self):
        return collections.Counter(name for name, _ in self.mirror.ranges)

    def test_two_pulls_started_together_fetch_each_file_once(self):
        # Slow enough that they overlap: a 64 KiB chunk every 100 ms.
        self.mirror.delay = 0.1
        first, second = self.start_pull(), self.start_pull()
        for out in (self.finish(first), self.finish(second)):
            self.assert_complete(out)
        self.assertEqual(set(self.requests_per_file().values()), {1}, self.mirror.ranges)
        self.assertEqual(self.mirror.served[WEIGHTS], len(self.files[WEIGHTS]))

    def test_a_second_pull_waits_for_the_first_and_says_so(self):
        # The weights take about 2.4 s: the second pull starts while the first writes them.
        self.mirror.delay = 0.3
        first = self.start_pull()
        self.wait_for_partial_weights(first)
        second = self.finish(self.start_pull())
        self.assert_complete(second)
        self.assertIn(f"{WEIGHTS}: another download of this file is running", second.stderr)
        self.assertIn("waiting for it to finish", second.stderr)
        self.assert_complete(self.finish(first))
        self.assertEqual([r for r in self.mirror.ranges if r[0] == WEIGHTS], [(WEIGHTS, 0)],
                         "the weights were asked for once, by the first pull")
        self.assertEqual(self.mirror.served[WEIGHTS], len(self.files[WEIGHTS]))

    def test_a_waiting_pull_takes_over_from_one_that_was_killed(self):
        # The OS ends a killed process's lock: the waiting pull resumes its partial file.
        self.mirror.delay = 0.3
        first = self.start_pull()
        self.wait_for_partial_weights(first)
        second = self.start_pull()
        deadline = time.time() + 60
        while "waiting for it to finish" not in (line := second.stderr.readline()):
            self.assertTrue(line and time.time() < deadline, "the second pull never waited")
        first.send_signal(signal.SIGKILL)
        first.wait()
        first.stdout.close()
        first.stderr.close()
        self.mirror.delay = 0
        self.assert_complete(self.finish(second))
        asked = [r for r in self.mirror.ranges if r[0] == WEIGHTS]
        self.assertEqual(len(asked), 2, asked)
        resumed_from = asked[1][1]
        self.assertTrue(0 < resumed_from < len(self.files[WEIGHTS]), "resumed the killed pull's partial file")
        self.assertEqual(self.mirror.served_from[(WEIGHTS, resumed_from)], len(self.files[WEIGHTS]) - resumed_from)

    def test_a_connection_dropped_every_100_kb_resumes_by_itself(self):
        self.mirror.drop_every = 100_000
        self.assert_complete(self.pull(REPO))
        offsets = [start for name, start in self.mirror.ranges if name == WEIGHTS]
        self.assertEqual(offsets, list(range(0, len(self.files[WEIGHTS]), 100_000)))
        self.assertEqual(self.mirror.served[WEIGHTS], len(self.files[WEIGHTS]), "no byte fetched twice")

    def test_a_checksum_mismatch_is_fetched_once_more(self):
        self.mirror.corrupt[WEIGHTS] = 1
        self.assert_complete(self.pull(REPO))
        self.assertEqual(self.mirror.served[WEIGHTS], 2 * len(self.files[WEIGHTS]))

    def test_a_checksum_mismatch_twice_is_an_error_and_leaves_nothing(self):
        self.mirror.corrupt[WEIGHTS] = 2
        out = self.pull(REPO)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("does not match the hub's checksum", out.stderr)
        self.assertIn(WEIGHTS, out.stderr)
        blobs = os.path.join(self.cache, "models--confab-test--tiny-llama", "blobs")
        self.assertEqual(glob.glob(os.path.join(blobs, "*.incomplete")), [])
        self.assertFalse(os.path.exists(os.path.join(self.snapshot(), WEIGHTS)))
        self.assertFalse(os.path.exists(os.path.join(self.cache, "models--confab-test--tiny-llama", "refs", "main")))

    def test_not_found(self):
        out = self.pull("confab-test/no-such-model")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("confab-test/no-such-model was not found", out.stderr)
        out = self.pull(REPO, "--file", "model.Q4_0.gguf")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("has no file `model.Q4_0.gguf`", out.stderr)
        out = self.pull("not-a-repo-name")
        self.assertIn("owner/model", out.stderr)

    def test_a_gated_repository_needs_the_licence_and_a_token(self):
        self.mirror.gated.add(REPO)
        out = self.pull(REPO)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("gated: accept its licence", out.stderr)
        self.assertIn("HF_TOKEN", out.stderr)
        out = self.pull(REPO, token="hf_wrong")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("accept its licence", out.stderr)
        self.assertNotIn("hf_wrong", out.stderr, "the token is never printed")
        self.assert_complete(self.pull(REPO, token=self.mirror.token))
        self.assertIn(f"Bearer {self.mirror.token}", self.mirror.auth_seen)

    def test_an_architecture_the_engine_does_not_run_is_refused_before_the_weights(self):
        out = self.pull("confab-test/tiny-bert")
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("architecture `bert` is not one Confab runs", out.stderr)
        self.assertEqual(self.mirror.served[WEIGHTS], 0, "no weights fetched")

    def test_search(self):
        out = subprocess.run([CONFAB, "search", "TINY", "--json"], env=self.env(), capture_output=True, text=True,
                             timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual([hit["id"] for hit in json.loads(out.stdout)], ["confab-test/tiny-bert", REPO])

    def test_one_file_with_file(self):
        out = self.pull(REPO, "--file", "tokenizer.json")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["files"], ["tokenizer.json"])
        self.assertEqual(self.mirror.served[WEIGHTS], 0)


if __name__ == "__main__":
    unittest.main()
