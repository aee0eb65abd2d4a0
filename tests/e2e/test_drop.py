"""Real native file drops (a GTK drag source moved by xdotool onto the window)."""
import io
import pathlib
import shutil
import tempfile
import unittest
import zipfile

from harness import AppTestCase

VIDEOS = pathlib.Path(__file__).resolve().parents[2] / "tests/reference/fixtures/video"
KEEP = "this text stays in the composer"


def make_files(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    from PIL import Image

    files = {}
    image = Image.new("RGB", (64, 48), (200, 30, 30))
    buf = io.BytesIO()
    image.save(buf, "PNG")
    files["png"] = folder / "red-square.png"
    files["png"].write_bytes(buf.getvalue())
    files["zip"] = folder / "archive.zip"
    with zipfile.ZipFile(files["zip"], "w") as z:
        z.writestr("readme.txt", "hello")
    # Plain text is a document now; RTF is neither a document Confab reads nor media.
    files["rtf"] = folder / "notes.rtf"
    files["rtf"].write_text("{\\rtf1\\ansi plain notes}\n")
    files["corrupt"] = folder / "broken-image.png"
    files["corrupt"].write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    for name in ["truncated.mp4", "hevc.mp4", "three_hours.mp4", "no_frames.gif", "wide.mp4"]:
        files[name] = folder / name
        shutil.copy(VIDEOS / name, files[name])
    return files


class Drop(AppTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-drops-"))
        cls.files = make_files(cls.folder)
        app = cls.app
        app.wait_model_ready()
        app.set_settings(max_tokens=24, seed=3)
        # A conversation to keep intact through every drop.
        app.new_chat()
        _, reply = app.send("Say hello.")
        app.wait_reply(reply["id"])
        cls.conversation = app.messages()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
        super().tearDownClass()

    def setUp(self):
        app = self.app
        app.dismiss("error-banner")
        app.dismiss("notice")
        for chip in app.all("attachment-remove"):
            chip.click()
        app.compose(KEEP)

    def drop(self, name: str) -> list[str]:
        app = self.app
        target = app.one("message-list") or app.one("composer-input")
        report = app.drop_files([self.files[name]], target)
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")
        return report

    def assert_intact(self):
        app = self.app
        self.assertEqual(app.wait_for("composer-input").get_attribute("value"), KEEP, "composer text lost")
        now = app.messages()
        self.assertEqual([(m["id"], m["text"], m["status"]) for m in now],
                         [(m["id"], m["text"], m["status"]) for m in self.conversation], "the conversation changed")

    def test_image_on_a_text_only_model_says_so(self):
        app = self.app
        before = app.banners("notice")
        self.drop("png")
        notice = app.wait_banner("notice", before)
        self.assertRegex(notice.lower(), r"image|text only|vision", f"notice: {notice!r}")
        self.assertEqual(app.banners("error-banner"), [], "an image on a text model is a notice, not an error")
        app.screenshot("drop-image-notice")
        self.assert_intact()

    def check_error(self, name: str, shot: str):
        app = self.app
        before = app.banners("error-banner")
        self.drop(name)
        error = app.wait_banner("error-banner", before)
        self.assertGreater(len(error), 10, f"error-banner should say what went wrong: {error!r}")
        app.screenshot(shot)
        self.assertEqual(app.all("attachment-chip"), [], f"a {name} file became an attachment")
        self.assert_intact()
        return error

    def test_unsupported_zip_is_an_error(self):
        self.check_error("zip", "drop-zip-error")

    def test_unsupported_rtf_is_an_error(self):
        error = self.check_error("rtf", "drop-rtf-error")
        self.assertIn("document", error, "the error says documents are read too")

    def test_corrupt_image_is_an_error(self):
        self.check_error("corrupt", "drop-corrupt-image-error")

    def test_bad_videos_are_errors_that_say_what_to_do(self):
        expected = {
            "truncated.mp4": r"damaged|incomplete",
            "hevc.mp4": r"HEVC",
            "three_hours.mp4": r"3 h .* limit",
            "no_frames.gif": r"no frames",
            "wide.mp4": r"16000×",
        }
        for name, pattern in expected.items():
            with self.subTest(name):
                self.app.dismiss("error-banner")
                error = self.check_error(name, f"drop-{name.replace('.', '-')}-error")
                self.assertIn(name, error, "the error names the file")
                self.assertRegex(error, pattern)


if __name__ == "__main__":
    unittest.main()
