"""The composer's microphone in the real window: off while the default (text-only) model is
loaded; with the tiny Gemma 4 (audio tower) picked, about 2 s from WebKit's mock microphone
(CONFAB_MOCK_CAPTURE=1 turns on its mock capture devices: a tone, as Xvfb has no sound card),
stopped with the button, arrive as a WAV attachment whose length the backend measured; Esc
cancels a recording started with the shortcut, attaching nothing."""
import pathlib
import time
import unittest

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from harness import AppTestCase

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEMMA4 = ROOT / "tests/reference/fixtures/tiny/gemma4"
# The recording runs from when the page shows it (the microphone opened) to the Stop click:
# WebDriver's round trips add a few hundred ms either way on a loaded two-core machine.
RECORD_S = 2.0
TOLERANCE_MS = 700


class Microphone(AppTestCase):
    app_env = {"CONFAB_MOCK_CAPTURE": "1"}
    extra_models = {"gemma4-tiny": GEMMA4}

    def recording_phase(self) -> str | None:
        el = self.app.one("recording")
        return self.app.attr(el, "data-phase") if el else None

    def wait_recording(self):
        app = self.app

        def started():
            note = app.one("recording-note")
            if note is not None and app.text(note):
                self.fail(f"the recording did not start: {app.text(note)}")
            return self.recording_phase() == "recording"

        app.wait_until(started, 30, lambda: f"phase: {self.recording_phase()}, log: {app.log()[-2000:]}")

    def test_01_off_for_a_text_model(self):
        app = self.app
        app.wait_model_ready()
        button = app.wait_for("mic-button")
        self.assertFalse(button.is_enabled(), "the default model reads text only")
        self.assertIn("can't hear audio", app.attr(button, "title") or "")

    def test_02_pick_gemma4(self):
        app = self.app
        app.click("model-picker")
        app.click("model-item", extra='[data-path$="gemma4-tiny"]', timeout=60)
        app.wait_until(lambda: "gemma4-tiny" in app.text(app.wait_for("model-picker")), 120,
                       "the picker does not show the Gemma 4 model")
        app.wait_model_ready()
        app.wait_until(lambda: app.wait_for("mic-button").is_enabled(), 30, "the microphone stays off for Gemma 4")

    def test_03_record_two_seconds(self):
        app = self.app
        before = len(app.all("attachment-chip"))
        app.click("mic-button")
        self.wait_recording()
        started = time.monotonic()
        # The mock microphone's tone moves the level meter.
        app.wait_until(lambda: float(app.attr(app.one("recording").find_element("css selector", "[role=meter]"),
                                              "aria-valuenow") or 0) > 0, 10, "the level meter never moved")
        app.screenshot("microphone-recording")
        time.sleep(max(0.0, RECORD_S - (time.monotonic() - started)))
        app.click("mic-button")
        app.wait_until(lambda: len(app.all("attachment-chip")) == before + 1, 60,
                       lambda: f"chips: {len(app.all('attachment-chip'))}, banners: {app.banners('error-banner')} {app.banners('notice')}")
        chip = app.all("attachment-chip")[-1]
        self.assertRegex(app.text(chip), r"recording-\d{4}-\d\d-\d\d-\d{6}\.wav")
        duration = int(app.attr(chip, "data-duration-ms") or 0)
        self.assertLess(abs(duration - RECORD_S * 1000), TOLERANCE_MS, f"recorded {duration} ms")
        self.assertIsNone(app.one("recording"), "the recording bar is gone")

    def test_04_shortcut_starts_and_esc_cancels(self):
        app = self.app
        before = len(app.all("attachment-chip"))
        input_box = app.wait_for("composer-input")
        input_box.click()
        ActionChains(app.d).key_down(Keys.CONTROL).key_down(Keys.SHIFT).send_keys("m").key_up(Keys.SHIFT).key_up(Keys.CONTROL).perform()
        self.wait_recording()
        time.sleep(0.5)
        input_box.send_keys(Keys.ESCAPE)
        app.wait_until(lambda: app.one("recording") is None, 10, "Esc did not end the recording")
        time.sleep(1)
        self.assertEqual(len(app.all("attachment-chip")), before, "a cancelled recording attaches nothing")


if __name__ == "__main__":
    unittest.main()
