"""The main screens in one launch: screenshots (light, dark, and 700 px wide) into
target/e2e-screenshots/ for review, an accessibility scan of each (axe-core, from ui/'s dev
dependencies, injected into the real window; serious or critical violations fail, and all of
them go to target/e2e-screenshots/accessibility.json), and the keyboard: Tab reaches the
composer, Shift+Enter adds a line, Enter sends, Esc closes dialogs."""
import json
import pathlib
import shutil
import tempfile
import unittest
import zipfile

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from harness import ROOT, SCREENSHOTS, AppTestCase, seconds

AXE = ROOT / "ui" / "node_modules" / "axe-core" / "axe.min.js"
# Resolves with the violations, each with up to five of the elements it was found on.
AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']}).then(
  (r) => done(r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
                                         nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' '))}))),
  (e) => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));
"""


class Screens(AppTestCase):
    scans: dict[str, list] = {}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-screens-"))
        cls.zip = cls.folder / "archive.zip"
        with zipfile.ZipFile(cls.zip, "w") as z:
            z.writestr("a.txt", "a")
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=48, seed=5)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
        if cls.scans:
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            (SCREENSHOTS / "accessibility.json").write_text(json.dumps(cls.scans, indent=1))
        super().tearDownClass()

    def scan(self, screen: str) -> list[str]:
        """Runs axe-core on the window as it is; returns the serious and critical violations."""
        if not AXE.is_file():
            raise unittest.SkipTest(f"axe-core missing at {AXE}: cd ui && npm ci")
        app = self.app
        if not app.js("return !!window.axe"):
            app.js(AXE.read_text())
        app.d.set_script_timeout(seconds(120))
        violations = app.d.execute_async_script(AXE_RUN)
        self.scans[screen] = violations
        return [f"{screen}: {v['impact']} {v['id']} ({v['help']}) on {v['nodes']}"
                for v in violations if v["impact"] in ("serious", "critical")]

    def screens(self, theme: str):
        app = self.app
        app.set_settings(theme=theme)
        self.assertEqual(app.theme(), theme)
        app.new_chat()
        app.screenshot(f"{theme}-empty")
        serious = self.scan(f"{theme}-empty")

        _, reply = app.send("What is the capital of France?")
        app.wait_reply(reply["id"])
        app.screenshot(f"{theme}-conversation")
        serious += self.scan(f"{theme}-conversation")

        app.open_settings()
        app.screenshot(f"{theme}-settings")
        app.screenshot(f"{theme}-settings-pane", app.one("settings-pane"))
        serious += self.scan(f"{theme}-settings")
        app.close_settings()

        app.click("get-models-button")
        app.wait_for("get-models")
        app.screenshot(f"{theme}-get-models")
        serious += self.scan(f"{theme}-get-models")
        app.d.switch_to.active_element.send_keys(Keys.ESCAPE)
        app.wait_gone("get-models", 10)

        app.click("model-picker")
        app.wait_for("model-item", 30)
        app.screenshot(f"{theme}-model-picker")
        app.d.switch_to.active_element.send_keys(Keys.ESCAPE)

        before = app.banners("error-banner")
        app.drop_files([self.zip], app.one("message-list"))
        app.wait_banner("error-banner", before)
        app.screenshot(f"{theme}-error-banner")
        app.dismiss("error-banner")
        self.assertEqual(serious, [], "accessibility violations (axe-core)")

    def test_light(self):
        self.screens("light")

    def test_dark(self):
        self.screens("dark")

    def test_narrow(self):
        """700 px wide: the chat keeps its width and nothing scrolls sideways."""
        app = self.app
        size = app.d.get_window_size()
        app.d.set_window_size(700, size["height"])
        try:
            app.wait_until(lambda: app.js("return window.innerWidth") <= 700, 10, "the window did not narrow")
            app.new_chat()
            app.screenshot("narrow-empty")
            _, reply = app.send("What is the capital of France?")
            app.wait_reply(reply["id"])
            app.screenshot("narrow-conversation")
            overflow = app.js("return document.documentElement.scrollWidth - window.innerWidth")
            self.assertLessEqual(overflow, 0, "the page scrolls sideways at 700 px")
            width = app.js("return document.querySelector('[data-testid=\"message-list\"]').clientWidth")
            self.assertGreaterEqual(width, 350, "the chat is squeezed at 700 px")
            app.open_settings()
            app.screenshot("narrow-settings")
            app.close_settings()
        finally:
            app.d.set_window_size(size["width"], size["height"])

    def test_keyboard(self):
        app = self.app
        app.new_chat()
        keys = ActionChains(app.d)
        # From the top of the page, Tab reaches the composer.
        app.js("document.activeElement && document.activeElement.blur()")
        focused = None
        for _ in range(40):
            keys.send_keys(Keys.TAB).perform()
            focused = app.js("return document.activeElement && document.activeElement.dataset.testid")
            if focused == "composer-input":
                break
        self.assertEqual(focused, "composer-input", "Tab never reached the composer")

        # Shift+Enter adds a line; Enter sends.
        keys = ActionChains(app.d)
        keys.send_keys("Say hi.").key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).send_keys("Briefly.")
        keys.perform()
        composer = app.wait_for("composer-input")
        self.assertEqual(composer.get_attribute("value"), "Say hi.\nBriefly.")
        self.assertEqual(app.messages(), [], "Shift+Enter sent the message")
        ActionChains(app.d).send_keys(Keys.ENTER).perform()
        user, reply = app.wait_new_reply(set())
        self.assertEqual(user["text"], "Say hi.\nBriefly.")
        app.wait_reply(reply["id"])

        # Esc closes Settings and Get models; Ctrl+, opens Settings.
        ActionChains(app.d).key_down(Keys.CONTROL).send_keys(",").key_up(Keys.CONTROL).perform()
        app.wait_for("settings-pane", 10)
        ActionChains(app.d).send_keys(Keys.ESCAPE).perform()
        app.wait_gone("settings-pane", 10)
        app.click("get-models-button")
        app.wait_for("get-models")
        ActionChains(app.d).send_keys(Keys.ESCAPE).perform()
        app.wait_gone("get-models", 10)


if __name__ == "__main__":
    unittest.main()
