"""Screenshots of the main screens, light and dark, into target/e2e-screenshots/ (for review)."""
import pathlib
import shutil
import tempfile
import unittest
import zipfile

from selenium.webdriver.common.keys import Keys

from harness import AppTestCase


class Screens(AppTestCase):
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
        super().tearDownClass()

    def screens(self, theme: str):
        app = self.app
        app.set_settings(theme=theme)
        self.assertEqual(app.theme(), theme)
        app.new_chat()
        app.screenshot(f"{theme}-empty")

        _, reply = app.send("What is the capital of France?")
        app.wait_reply(reply["id"])
        app.screenshot(f"{theme}-conversation")

        app.open_settings()
        app.screenshot(f"{theme}-settings")
        app.screenshot(f"{theme}-settings-pane", app.one("settings-pane"))
        app.close_settings()

        app.click("model-picker")
        app.wait_for("model-item", 30)
        app.screenshot(f"{theme}-model-picker")
        app.d.switch_to.active_element.send_keys(Keys.ESCAPE)

        before = app.banners("error-banner")
        app.drop_files([self.zip], app.one("message-list"))
        app.wait_banner("error-banner", before)
        app.screenshot(f"{theme}-error-banner")
        app.dismiss("error-banner")

    def test_light(self):
        self.screens("light")

    def test_dark(self):
        self.screens("dark")


if __name__ == "__main__":
    unittest.main()
