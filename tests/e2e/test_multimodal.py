"""Images and audio in the app: the tiny Gemma 4 (vision and audio towers) picked in the model
menu, a real native drop of an image and a clip, and a reply whose plan lists both."""
import pathlib
import unittest

from harness import AppTestCase

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEMMA4 = ROOT / "tests/reference/fixtures/tiny/gemma4"


class Multimodal(AppTestCase):
    extra_models = {"gemma4-tiny": GEMMA4}

    def test_01_pick_gemma4(self):
        app = self.app
        app.wait_model_ready()
        app.click("model-picker")
        app.click("model-item", extra='[data-path$="gemma4-tiny"]', timeout=60)
        app.wait_until(lambda: "gemma4-tiny" in app.text(app.wait_for("model-picker")), 120,
                       "the picker does not show the Gemma 4 model")
        app.wait_model_ready()
        app.set_settings(max_tokens=8, seed=1)

    def test_02_drop_an_image_and_a_clip_and_send(self):
        app = self.app
        app.new_chat()
        report = app.drop_files([GEMMA4 / "media/gradient.png", GEMMA4 / "media/chirp.wav"],
                                app.one("message-list") or app.one("composer-input"))
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")
        app.wait_until(lambda: len(app.all("attachment-chip")) == 2, 60,
                       lambda: f"chips: {len(app.all('attachment-chip'))}, banners: {app.banners('error-banner')} {app.banners('notice')}")
        _, reply = app.send("What do you see and hear?")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        plan = app.text(app.wait_for("plan", visible=False))  # folded under "Details"
        self.assertIn("image", plan)
        self.assertIn("audio", plan)
        self.assertIn("encoded now", plan, "a new image and clip run their towers")
        app.screenshot("multimodal-reply")

    def test_03_the_same_image_again_runs_no_tower(self):
        app = self.app
        _, reply = app.send("And now?")
        app.wait_reply(reply["id"])
        plans = [app.text(p) for p in app.all("plan")]
        self.assertNotIn("encoded now", plans[-1], f"the second turn re-encoded: {plans[-1]}")
        self.assertIn("reused", plans[-1])

    def test_04_continue_a_stopped_reply_in_a_chat_with_an_image(self):
        app = self.app
        # The tiny model soon ends its turn; greedy, this question's reply runs 400 tokens (1-3 s
        # here), and Stop lands a few tokens after the first ten characters. Where it lands, the
        # model may end its turn at once when continued (greedy: end of turn first; seen in CI),
        # so a new chat tries again, up to three times, for a continuation that writes more.
        for attempt in range(3):
            app.new_chat()
            app.drop_files([GEMMA4 / "media/gradient.png"], app.one("message-list") or app.one("composer-input"))
            app.wait_until(lambda: len(app.all("attachment-chip")) == 1, 60,
                           lambda: f"chips: {len(app.all('attachment-chip'))}, banners: {app.banners('error-banner')}")
            app.set_settings(max_tokens=900, temperature=0)
            try:
                user, reply = app.send("Describe every detail of this image.")
                app.stop_at(reply["id"], 10)
                stopped = app.wait_reply(reply["id"], 30)
                self.assertEqual(stopped["status"], "stopped", stopped)
            finally:
                app.set_settings(max_tokens=48)
            app.click_in_message(reply["id"], "continue-button")
            status = lambda: next(m for m in app.messages() if m["id"] == reply["id"])["status"]
            app.wait_until(lambda: status() != "stopped", 30, "Continue did not start")
            done = app.wait_reply(reply["id"], 120)
            self.assertIn(done["status"], ("complete",), done)
            if len(done["text"]) > len(stopped["text"]):
                break
        self.assertGreater(len(done["text"]), len(stopped["text"]), f"more text was written (in {attempt + 1} tries)")
        self.assertEqual([m["id"] for m in app.messages() if m["role"] == "assistant"], [reply["id"]],
                         "the same message, not a new one")
        image = app.message_el(user["id"]).find_elements("css selector", '.thumbnail[title="gradient.png"]')
        self.assertEqual(len(image), 1, "the question keeps its image")
        self.assertEqual(app.banners("error-banner"), [])
        plan = app.text(app.all("plan")[-1])
        self.assertIn("reused", plan, "the continuation reads the stopped reply's prefix back")
        self.assertNotIn("encoded now", plan)
        app.screenshot("multimodal-continued")


if __name__ == "__main__":
    unittest.main()
