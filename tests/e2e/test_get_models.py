"""Get models, end to end, against the loopback hub mirror (tests/hub/mirror.py): the hub token
is set in the window, the tiny llama fixture is found by search and downloaded (the progress bar
moves), appears in the picker once complete, is loaded and chatted with. The token is then
nowhere in the SQLite file, the log or the page. Nothing here reaches anything but 127.0.0.1."""
import pathlib
import sys
import time
import unittest

from harness import AppTestCase, ChatApp, make_home

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "hub"))
from mirror import Mirror, fixture_repo  # noqa: E402

REPO = "confab-test/tiny-llama"
# The same files under another name: a second download, for the restart.
SECOND = "confab-test/tiny-llama-again"
TOKEN = "hf_e2e_token_5b7d"


class GetModels(AppTestCase):
    @classmethod
    def setUpClass(cls):
        files = fixture_repo(str(ROOT / "tests/reference/fixtures/tiny/llama"))
        files.pop("reference.json", None)
        cls.mirror = Mirror({REPO: files, SECOND: dict(files)}).__enter__()
        # Gated, so the token set in the window is what lets the download through; slow enough
        # (64 KiB every 0.4 s) to watch the bar move.
        cls.mirror.gated.add(REPO)
        cls.mirror.token = TOKEN
        cls.mirror.delay = 0.4
        cls.home = make_home(cls.__name__)
        cls.hub_cache = cls.home / "hub"
        cls.app = ChatApp(cls.home, log_name=cls.__name__)
        cls.env = {"HF_ENDPOINT": cls.mirror.endpoint, "HF_HUB_CACHE": str(cls.hub_cache), "HF_TOKEN": ""}
        try:
            cls.app.start(cls.env)
        except BaseException:
            cls.app.quit()
            cls.mirror.__exit__(None, None, None)
            raise

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.mirror.__exit__(None, None, None)

    def picker_paths(self) -> list[str]:
        return self.app.js("return Array.from(document.querySelectorAll('[data-testid=\"model-item\"]')).map(e => e.dataset.path)")

    def test_01_set_the_token(self):
        app = self.app
        app.wait_model_ready()
        app.click("get-models-button")
        app.wait_for("get-models")
        app.js("document.querySelector('[data-testid=\"hub-settings\"]').open = true")
        app.fill(app.wait_for("hub-token"), TOKEN)
        app.click("hub-save")
        app.wait_until(lambda: app.wait_for("hub-token").get_attribute("placeholder") == "A token is set", 30,
                       "the window does not say a token is set")
        self.assertEqual(app.wait_for("hub-token").get_attribute("value"), "")
        self.assertIn(self.mirror.endpoint, app.text(app.wait_for("hub-settings")), "HF_ENDPOINT is the endpoint in use")

    def test_02_search_download_and_watch_the_progress(self):
        app = self.app
        app.fill(app.wait_for("hub-search"), "tiny")
        app.wait_for("hub-search").submit()
        results = app.wait_for("search-results")
        app.wait_until(lambda: REPO in app.text(results), 30, "the mirror's repository is not in the results")
        app.js("Array.from(document.querySelectorAll('[data-testid=\"search-results\"] button'))"
               ".find(b => b.textContent.includes(arguments[0])).click()", REPO)
        app.wait_for("download-model", 60).click()
        percents, status, end = [], None, time.monotonic() + 120
        while time.monotonic() < end:
            status, value = app.js(
                "const r = document.querySelector('[data-testid=\"download-row\"]');"
                "return r ? [r.dataset.status, r.querySelector('progress').value] : [null, null]")
            if value is not None and (not percents or percents[-1] != value):
                percents.append(value)
            if status in ("done", "failed"):
                break
            time.sleep(0.1)
        error = app.one("download-error")
        self.assertEqual(status, "done", app.text(error) if error else f"status {status}")
        self.assertTrue(any(0 < p < 100 for p in percents), f"the bar never showed a step between: {percents}")
        self.assertEqual(percents, sorted(percents), "the bar only moves forward")
        app.screenshot("get-models-downloaded")
        # The mirror was asked with the token set in the window.
        self.assertIn(f"Bearer {TOKEN}", self.mirror.auth_seen)

    def test_03_the_model_is_in_the_picker_loads_and_chats(self):
        app = self.app
        app.click("download-load")
        app.wait_gone("get-models", 10)
        app.wait_model_ready()
        app.click("model-picker")
        app.wait_until(lambda: any("models--confab-test--tiny-llama" in p for p in self.picker_paths()), 30,
                       "the downloaded model is not in the picker")
        app.click("model-picker")
        app.wait_until(lambda: REPO in app.text(app.wait_for("model-picker")), 30,
                       lambda: f"the picker does not name the downloaded model: {app.text(app.wait_for('model-picker'))}")
        app.set_settings(max_tokens=8, seed=1)
        app.new_chat()
        _, reply = app.send("Hello there")
        reply = app.wait_reply(reply["id"])
        self.assertNotEqual(reply["status"], "error", reply)

    def test_04_the_token_is_not_in_the_database_the_log_or_the_page(self):
        app = self.app
        self.assertNotIn(TOKEN, app.js("return document.documentElement.outerHTML"))
        stored = [p for p in self.home.rglob("*") if p.is_file() and (".db" in p.name or p.suffix == ".log" or "log" in p.parent.name)]
        self.assertTrue(any(p.name.startswith("confab.db") for p in stored), [str(p) for p in stored])
        for path in stored:
            self.assertNotIn(TOKEN.encode(), path.read_bytes(), f"the token is in {path}")

    def row(self, repo: str) -> tuple[str | None, float | None]:
        """The status and the bar's value of `repo`'s download row."""
        return tuple(self.app.js(
            "const r = Array.from(document.querySelectorAll('[data-testid=\"download-row\"]'))"
            ".find(r => r.querySelector('.download-name').textContent === arguments[0]);"
            "return r ? [r.dataset.status, r.querySelector('progress').value] : [null, null]", repo))

    def test_05_a_restart_mid_download_shows_it_paused_and_resume_fetches_only_the_rest(self):
        app = self.app
        self.mirror.gated.discard(SECOND)
        self.mirror.delay = 1.0  # 64 KiB a second: about eight seconds for the weights
        app.click("get-models-button")
        app.fill(app.wait_for("hub-search"), "again")
        app.wait_for("hub-search").submit()
        results = app.wait_for("search-results")
        app.wait_until(lambda: SECOND in app.text(results), 30, "the second repository is not in the results")
        app.js("Array.from(document.querySelectorAll('[data-testid=\"search-results\"] .hub-item-name'))"
               ".find(n => n.textContent === arguments[0]).click()", SECOND)
        app.wait_until(lambda: SECOND in app.text(app.wait_for("repo-view")), 30, "the repository did not open")
        app.wait_for("download-model", 60).click()
        app.wait_until(lambda: self.row(SECOND)[0] == "running" and (self.row(SECOND)[1] or 0) > 20, 60,
                       lambda: f"the download did not get going: {self.row(SECOND)}")

        # Slower still, so that the download cannot finish while the app quits (which can take
        # seconds on a busy machine).
        self.mirror.delay = 30.0
        app.quit()
        self.mirror.delay = 0.05
        app.start(self.env)
        app.wait_model_ready()
        app.click("get-models-button")
        app.wait_until(lambda: self.row(SECOND)[0] == "paused", 30, lambda: f"not shown paused after the restart: {self.row(SECOND)}")
        self.assertGreater(self.row(SECOND)[1], 0, "what arrived before the restart still counts")
        app.screenshot("get-models-paused-after-restart")
        app.js("Array.from(document.querySelectorAll('[data-testid=\"download-row\"]'))"
               ".find(r => r.querySelector('.download-name').textContent === arguments[0])"
               ".querySelector('.download-actions button').click()", SECOND)
        app.wait_until(lambda: self.row(SECOND)[0] in ("done", "failed"), 120, lambda: f"not done: {self.row(SECOND)}")
        error = app.one("download-error")
        self.assertEqual(self.row(SECOND)[0], "done", app.text(error) if error else "")
        resumed = [offset for name, offset in self.mirror.ranges if name == "model.safetensors" and offset > 0]
        self.assertTrue(resumed, f"the weights were fetched again from the start: {self.mirror.ranges}")


if __name__ == "__main__":
    unittest.main()
