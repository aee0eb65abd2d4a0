"""Several models served by one `confab serve`: three copies of the default model (hard links
under three names) in a folder the server searches, under a limit for loaded weights that holds
two. Requests to each in turn and to all at once complete; the least recently used idle model is
unloaded (those loaded for a request before the one the server started with) and loaded again
when asked for; at most two are ever loaded; an idle model loaded for
a request unloads after its keep-alive; LM Studio's load and unload endpoints work; a model that
could never fit is refused before loading, naming sizes. The server's peak resident memory is
printed beside the limit, the replies' budget and its memory when it started.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_several_models.py -v
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

import openai

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_openai import Server, default_model  # noqa: E402

NAMES = ["alpha", "bravo", "charlie"]
REPLIES_BUDGET = 256 << 20
KEEP_ALIVE_S = 4


def resident_kib(pid: int, field: str) -> int:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for {pid}")


class SeveralModels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        model = default_model()
        if not model.is_file():
            raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-several-"))
        for name in NAMES:
            os.link(model, cls.folder / f"{name}.gguf")
        # The weights as loaded (measured by the server that loads them): the limit holds two and a
        # half of them.
        cls.weights = None
        cls.limit = None
        cls.server = None
        probe = Server("--model", str(cls.folder / "alpha.gguf"))
        try:
            with urllib.request.urlopen(probe.base_url + "/models", timeout=30) as answer:
                listed = {m["id"]: m for m in json.load(answer)["data"]}
            cls.weights = listed["alpha"]["weights_bytes"]
        finally:
            probe.stop()
        cls.limit = int(cls.weights * 2.5)
        cls.server = Server(
            "--model", str(cls.folder / "alpha.gguf"),
            "--folder", str(cls.folder),
            "--models-memory", f"{cls.limit}b",
            "--memory-budget", f"{REPLIES_BUDGET}b",
            "--keep-alive", f"{KEEP_ALIVE_S}s",
        )
        cls.started_kib = resident_kib(cls.server.process.pid, "VmRSS")
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=300)
        cls.most_loaded = 0
        cls.watching = True
        cls.watcher = threading.Thread(target=cls.watch, daemon=True)
        cls.watcher.start()

    @classmethod
    def watch(cls):
        """The most models loaded at once, sampled from /health while the tests run."""
        while cls.watching:
            try:
                cls.most_loaded = max(cls.most_loaded, len(cls.server.health()["loaded"]))
            except OSError:
                pass
            time.sleep(0.05)

    @classmethod
    def tearDownClass(cls):
        cls.watching = False
        if cls.server:
            peak = resident_kib(cls.server.process.pid, "VmHWM") << 10
            print(
                f"\nseveral models: weights {cls.weights / 1e6:.0f} MB each, limit for loaded weights "
                f"{cls.limit / 1e6:.0f} MB, replies' budget {REPLIES_BUDGET / 1e6:.0f} MB; resident at start "
                f"(one model loaded) {(cls.started_kib << 10) / 1e6:.0f} MB, peak {peak / 1e6:.0f} MB; "
                f"at most {cls.most_loaded} loaded at once",
                file=sys.stderr,
            )
            code = cls.server.stop()
            assert code == 0, f"confab serve exited with {code} on Ctrl-C"
            # Peak within: what it held with one model, the rest of the limit, the replies' budget.
            ceiling = (cls.started_kib << 10) + cls.limit - cls.weights + REPLIES_BUDGET
            assert peak <= ceiling, f"peak {peak / 1e6:.0f} MB over {ceiling / 1e6:.0f} MB"
        shutil.rmtree(cls.folder, ignore_errors=True)

    def listed(self) -> dict[str, dict]:
        return {m.id: m.model_dump() for m in self.client.models.list().data}

    def loaded(self) -> set[str]:
        return {name for name, m in self.listed().items() if m["loaded"]}

    def ask(self, model: str, tokens: int = 4) -> str:
        reply = self.client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Hi"}], max_tokens=tokens, temperature=0
        )
        self.assertEqual(reply.model, model)
        return reply.choices[0].message.content

    def test_1_lists_every_model_with_its_state(self):
        listed = self.listed()
        self.assertTrue(set(NAMES) <= set(listed), listed)
        self.assertTrue(listed["alpha"]["loaded"])
        self.assertEqual(listed["alpha"]["state"], "loaded")
        self.assertFalse(listed["bravo"]["loaded"])

    def test_2_each_in_turn_unloads_the_least_recently_used(self):
        first = self.ask("alpha")
        self.ask("bravo")
        self.assertEqual(self.loaded() & set(NAMES), {"alpha", "bravo"})
        self.ask("alpha")  # bravo is now the least recently used
        self.ask("charlie")
        self.assertEqual(self.loaded() & set(NAMES), {"alpha", "charlie"})
        self.ask("bravo")  # alpha is older than charlie, but kept for good: charlie goes
        self.assertEqual(self.loaded() & set(NAMES), {"alpha", "bravo"})
        # Same weights under every name: the same greedy reply.
        self.assertEqual(self.ask("charlie"), first)

    def test_3_all_at_once_complete(self):
        answers: dict[str, str] = {}
        errors: list[Exception] = []

        def one(name: str):
            try:
                answers[name] = self.ask(name, tokens=24)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=one, args=(name,)) for name in NAMES * 2]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(set(answers), set(NAMES))
        self.assertEqual(len(set(answers.values())), 1, answers)
        self.assertLessEqual(self.most_loaded, 2)

    def test_4_idle_models_unload_after_their_keep_alive(self):
        self.ask("alpha")  # at once above, it may have made room for the others
        self.ask("charlie")
        deadline = time.time() + KEEP_ALIVE_S + 10
        while "charlie" in self.loaded() and time.time() < deadline:
            time.sleep(0.25)
        self.assertNotIn("charlie", self.loaded())
        self.assertIn("alpha", self.loaded(), "the model the server started with stays")

    def test_5_load_and_unload_by_hand(self):
        def post(path: str, body: dict) -> dict:
            request = urllib.request.Request(
                self.server.base_url.removesuffix("/v1") + path, data=json.dumps(body).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=120) as answer:
                return json.load(answer)

        loaded = post("/api/v1/models/load", {"model": "bravo"})
        self.assertEqual((loaded["status"], loaded["instance_id"]), ("loaded", "bravo"))
        self.assertIn("bravo", self.loaded())
        self.ask("alpha")
        post("/api/v1/models/unload", {"instance_id": "alpha"})
        self.assertNotIn("alpha", self.loaded())
        self.ask("alpha")  # found again in its folder, loaded again
        self.assertIn("alpha", self.loaded())
        with self.assertRaises(urllib.error.HTTPError) as caught:
            post("/api/v1/models/unload", {"instance_id": "zulu"})
        self.assertEqual(caught.exception.code, 404)

    def test_6_an_unknown_model_is_refused_naming_those_there_are(self):
        with self.assertRaises(openai.NotFoundError) as caught:
            self.ask("zulu")
        self.assertIn("`alpha`", caught.exception.message)
        self.assertEqual(caught.exception.code, "model_not_found")


class NeverFits(unittest.TestCase):
    def test_a_model_the_limit_can_never_hold_is_refused_before_loading(self):
        model = default_model()
        if not model.is_file():
            self.skipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-never-fits-"))
        self.addCleanup(shutil.rmtree, folder, ignore_errors=True)
        for name in ("alpha", "bravo"):
            os.link(model, folder / f"{name}.gguf")
        server = Server("--model", str(folder / "alpha.gguf"), "--folder", str(folder), "--models-memory", "1MB")
        self.addCleanup(server.stop)
        client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=60)
        with self.assertRaises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="bravo", messages=[{"role": "user", "content": "Hi"}], max_tokens=2)
        message = caught.exception.message
        self.assertIn("`bravo` needs", message)
        self.assertIn("1 MB", message)
        self.assertEqual(caught.exception.code, "model_not_supported")
        self.assertEqual(server.health()["loaded"], ["alpha"], "nothing was loaded for it")


if __name__ == "__main__":
    unittest.main()
