"""A remote provider in the app: a `confab serve` on loopback (the default model behind an API
key) added in Settings, its model picked in the model menu, then a streamed chat, stop and
regenerate through it; the key nowhere in the SQLite file, the log or the page; an unreachable
provider's message in the chat. The app has no local model: every reply comes from the server."""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.request

from harness import TARGET, AppTestCase, installed_default_model, seconds

KEY = "sk-e2e-remote-key-71c4a9"
PROVIDER = "Loopback Confab"
PARIS = "What is the capital of France?"
CONFAB = pathlib.Path(os.environ.get("CONFAB_E2E_CLI") or TARGET / "debug" / "confab")


GEMMA4 = pathlib.Path(__file__).resolve().parents[2] / "tests/reference/fixtures/tiny/gemma4"


class ConfabServe:
    """`confab serve` on a free loopback port: the default model behind KEY, or `model` without a key."""

    def __init__(self, model: pathlib.Path | None = None):
        if not CONFAB.is_file():
            raise unittest.SkipTest(f"no {CONFAB}: cargo build -p confab-cli")
        key = ["--api-key", KEY] if model is None else []
        model = model or installed_default_model()
        if not model.exists():
            raise unittest.SkipTest(f"no model at {model}; run scripts/setup.sh")
        self.home = tempfile.mkdtemp(prefix="confab-e2e-serve-")
        self.process = subprocess.Popen(
            [str(CONFAB), "serve", "--port", "0", "--no-prefix-cache", "--no-encoder-cache", *key, "--model", str(model)],
            env=dict(os.environ, CONFAB_HOME=self.home),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        # Printed once the model is loaded and the port is open.
        line = self.process.stdout.readline()
        self.model = line.split("`")[1] if "`" in line else None
        self.base_url = next((w for w in line.split() if w.startswith("http://")), None)
        if not self.base_url or not self.model:
            self.stop()
            raise AssertionError(f"confab serve did not start: {line!r}")

    def active_requests(self) -> int:
        import json

        root = self.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/health", timeout=5) as answer:
            return json.load(answer)["active_requests"]

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)


class RemoteProvider(AppTestCase):
    with_model = False

    @classmethod
    def setUpClass(cls):
        cls.serve = ConfabServe()
        try:
            super().setUpClass()
        except BaseException:
            cls.serve.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.serve.stop()

    def assert_key_not_in_page(self):
        app = self.app
        self.assertTrue(KEY not in app.d.page_source, "the key is in the page")
        values = app.js("return [...document.querySelectorAll('input, textarea')].map(e => e.value)")
        self.assertNotIn(KEY, values, "a field still holds the key")

    def field(self, testid: str):
        """A field of the providers' section, scrolled into the middle of the settings pane."""
        el = self.app.wait_for(testid)
        self.app.js("arguments[0].scrollIntoView({block: 'center'})", el)
        return el

    def test_01_add_the_provider_and_list_its_models(self):
        app = self.app
        app.open_settings()
        self.field("provider-add").click()
        app.fill(self.field("provider-name"), PROVIDER)
        app.fill(self.field("provider-url"), self.serve.base_url)
        app.fill(self.field("provider-key"), KEY)
        self.field("provider-save").click()
        # Adding asks the server for its models at once.
        app.wait_for("provider-model", 60, extra=f'[data-model="{self.serve.model}"]')
        self.assertEqual(app.text(app.wait_for("provider-key-status")), "key saved")
        app.screenshot("remote-provider-settings")
        self.assert_key_not_in_page()
        app.close_settings()
        self.assertEqual(app.all("remote-badge"), [], "nothing goes remote until a remote model is picked")

    def test_02_pick_its_model_and_chat_with_streaming(self):
        app = self.app
        app.click("model-picker")
        item = app.wait_for("remote-model-item", 30, extra=f'[data-model="{self.serve.model}"]')
        self.assertIn("remote", app.text(item))
        self.assertIn(PROVIDER, app.text(item))
        item.click()
        badge = app.wait_for("remote-badge", 30)
        self.assertEqual(app.text(badge), f"Remote: {PROVIDER}")
        self.assertIn(self.serve.model, app.text(app.wait_for("model-picker")))
        app.set_settings(max_tokens=48, seed=7, temperature=0)

        app.new_chat()
        user, reply = app.send(PARIS)
        done, lengths = app.watch_stream(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        self.assertGreaterEqual(len(lengths), 2, f"the text should grow over several polls while streaming: {lengths}")
        self.assertEqual(lengths, sorted(lengths))
        self.assertIn("Paris", done["text"])
        here = app.message_el(done["id"])
        stats = app.wait_until(lambda: app.one("reply-stats", within=here), 10, "no reply-stats under the reply")
        self.assertRegex(app.text(stats), r"\d+ tokens")
        self.assertIn(f"via {PROVIDER}", stats.get_attribute("title"))
        plan = app.text(app.wait_for("plan", visible=False, within=here))
        self.assertIn(f"on {PROVIDER} (http://127.0.0.1:", plan)
        type(self).paris = (user, done)
        app.screenshot("remote-chat")

    def test_03_regenerate_keeps_both_replies(self):
        app = self.app
        user, first = self.paris
        before = {m["id"] for m in app.messages()}
        app.click_in_message(first["id"], "regenerate-button")
        _, second = app.wait_new_reply(before)
        second = app.wait_reply(second["id"])
        self.assertEqual(second["status"], "complete", second)
        # Greedy on the same server: the same answer, as a second sibling.
        self.assertEqual(second["text"], first["text"])
        app.wait_until(lambda: app.position(second["id"]) == "2/2", 10, lambda: f"position {app.position(second['id'])!r}")

    def test_04_stop_closes_the_stream(self):
        app = self.app
        app.set_settings(max_tokens=1500)
        try:
            app.new_chat()
            _, reply = app.send("Write a very long story about a dragon who learns to bake bread. Make it ten paragraphs long.")
            streaming, _ = app.watch_stream(reply["id"], until=lambda r: len(r["text"]) >= 30)
            self.assertEqual(streaming["status"], "streaming", f"the reply ended before it could be stopped: {streaming}")
            self.assertEqual(self.serve.active_requests(), 1)
            app.click("stop-button")
            done = app.wait_reply(reply["id"], 30)
            self.assertEqual(done["status"], "stopped", done)
            self.assertGreaterEqual(len(done["text"]), len(streaming["text"]) - 1, "the text streamed before Stop is kept")
            # Closing the stream ends the server's generation.
            app.wait_until(lambda: self.serve.active_requests() == 0, 60, "the server still generates after Stop")
        finally:
            app.set_settings(max_tokens=48)

    def test_05_the_key_is_not_in_the_database_the_log_or_the_page(self):
        app = self.app
        home = app.home
        database = b"".join(p.read_bytes() for p in home.glob("confab.db*"))
        self.assertTrue(database, "no database files")
        # (assertTrue: a failure must not print the database.)
        self.assertTrue(KEY.encode() not in database, "the key is in the SQLite file")
        self.assertTrue(PROVIDER.encode() in database, "the provider itself is not saved there")
        log = (home / "logs" / "confab.log").read_text(errors="replace")
        self.assertTrue("reply through a provider" in log, "the log does not tell of the remote reply")
        self.assertTrue(KEY not in log, "the key is in the log")
        self.assertTrue(PARIS not in log, "what people write reached the log")
        app.open_settings()
        try:
            self.field("provider-edit").click()
            self.field("provider-key")
            self.assert_key_not_in_page()
        finally:
            app.close_settings()
        self.assert_key_not_in_page()
        secrets = home / "secrets.json"
        if secrets.exists():  # no Secret Service in this session: the 0600 file
            self.assertIn(KEY, secrets.read_text())
            self.assertEqual(secrets.stat().st_mode & 0o777, 0o600)

    def test_06_an_unreachable_provider_says_so_in_the_chat(self):
        app = self.app
        self.serve.stop()
        _, reply = app.send("Are you there?")
        done = app.wait_reply(reply["id"], 60)
        self.assertEqual(done["status"], "error", done)
        bubble = app.message_el(done["id"])
        text = app.text(bubble)
        self.assertIn("Could not reach http://127.0.0.1:", text)
        self.assertIn("Check that the server is running", text)
        app.screenshot("remote-unreachable")


class RemoteImage(AppTestCase):
    """An image to a remote model the user marked as reading images: the tiny Gemma 4 (vision
    tower) behind `confab serve`, no key."""

    with_model = False

    @classmethod
    def setUpClass(cls):
        cls.serve = ConfabServe(GEMMA4)
        try:
            super().setUpClass()
        except BaseException:
            cls.serve.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.serve.stop()

    def field(self, testid: str, within=None):
        el = self.app.wait_for(testid, within=within)
        self.app.js("arguments[0].scrollIntoView({block: 'center'})", el)
        return el

    def test_01_mark_the_model_as_reading_images_and_send_one(self):
        app = self.app
        app.open_settings()
        self.field("provider-add").click()
        app.fill(self.field("provider-name"), "Vision box")
        app.fill(self.field("provider-url"), self.serve.base_url)
        self.field("provider-save").click()
        row = app.wait_for("provider-model", 60, extra=f'[data-model="{self.serve.model}"]')
        self.assertEqual(app.text(app.wait_for("provider-key-status")), "no key")
        vision = self.field("provider-model-vision", within=row)
        self.assertFalse(vision.is_selected(), "confab serve does not say what a model takes: the user marks it")
        vision.click()
        app.wait_until(lambda: app.one("provider-model-vision", within=app.one("provider-model")).is_selected(), 20, "not marked")
        app.close_settings()
        app.click("model-picker")
        app.click("remote-model-item", extra=f'[data-model="{self.serve.model}"]')
        app.wait_for("remote-badge", 30)
        app.set_settings(max_tokens=4, seed=1)

        app.new_chat()
        report = app.drop_files([GEMMA4 / "media/gradient.png"], app.one("message-list") or app.one("composer-input"))
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")
        app.wait_until(lambda: len(app.all("attachment-chip")) == 1, 60,
                       lambda: f"chips: {len(app.all('attachment-chip'))}, notices: {app.banners('notice')} {app.banners('error-banner')}")
        _, reply = app.send("What is this?")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        here = app.message_el(done["id"])
        plan = app.text(app.wait_for("plan", visible=False, within=here))
        self.assertIn("1 image sent as content parts", plan)
        stats = app.text(app.wait_until(lambda: app.one("reply-stats", within=here), 10, "no reply-stats"))
        prompt = int(re.search(r"of (\d+) prompt tokens", stats).group(1))
        # The image's 63 soft tokens (as `confab generate` reports them for this picture) reached the server.
        self.assertGreaterEqual(prompt, 63, stats)
        app.screenshot("remote-image")


if __name__ == "__main__":
    unittest.main()
