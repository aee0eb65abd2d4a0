"""Video in the app: the tiny Qwen3-VL (a vision tower that reads videos) picked in the model
menu, a real native drop of a short H.264 MP4 shown by its first frame and length, and a reply
whose plan lists the video's frames; the same video again runs no tower."""
import pathlib
import re
import unittest

from harness import AppTestCase

ROOT = pathlib.Path(__file__).resolve().parents[2]
QWEN3_VL = ROOT / "tests/reference/fixtures/tiny/qwen3_vl"
CLIP = ROOT / "tests/reference/fixtures/video/h264_baseline.mp4"


class Video(AppTestCase):
    extra_models = {"qwen3-vl-tiny": QWEN3_VL}

    def test_01_pick_qwen3_vl_with_its_video_badge(self):
        app = self.app
        app.wait_model_ready()
        app.click("model-picker")
        item = app.wait_for("model-item", extra='[data-path$="qwen3-vl-tiny"]', timeout=60)
        self.assertIn("video", app.text(item), "the picker shows what the model reads")
        item.click()
        app.wait_until(lambda: "qwen3-vl-tiny" in app.text(app.wait_for("model-picker")), 120,
                       "the picker does not show the Qwen3-VL model")
        app.wait_model_ready()
        app.set_settings(max_tokens=6, seed=1)

    def test_02_drop_a_video_and_send(self):
        app = self.app
        app.new_chat()
        report = app.drop_files([CLIP], app.one("message-list") or app.one("composer-input"))
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")
        app.wait_until(lambda: len(app.all("attachment-chip")) == 1, 60,
                       lambda: f"chips: {len(app.all('attachment-chip'))}, banners: {app.banners('error-banner')} {app.banners('notice')}")
        preview = app.wait_for("video-attachment")
        app.wait_until(lambda: preview.find_elements("css selector", "img"), 30, "no first-frame thumbnail")
        self.assertRegex(app.text(preview), r"\d:\d\d", "the chip shows the video's length")
        _, reply = app.send("What happens in this video?")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        plan = app.text(app.wait_for("plan", visible=False))  # folded under "Details"
        self.assertRegex(plan, r"video \w+ \(\d+ frames\)", plan)
        self.assertIn("encoded now", plan, "a new video runs its tower")
        app.screenshot("video-reply")

    def test_03_the_same_video_again_runs_no_tower(self):
        app = self.app
        _, reply = app.send("And then?")
        app.wait_reply(reply["id"])
        plans = [app.text(p) for p in app.all("plan")]
        self.assertNotIn("encoded now", plans[-1], f"the second turn re-encoded: {plans[-1]}")
        frames = re.search(r"\((\d+) frames\)", plans[0])
        self.assertIsNotNone(frames, plans[0])


if __name__ == "__main__":
    unittest.main()
