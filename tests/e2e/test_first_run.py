"""First run of the installed package: the .deb unpacked into a fresh root, its app started with
an empty data folder (no model anywhere but in the package), reaches a streamed reply from the
default model without any script. Needs CONFAB_DEB (scripts/test.sh sets it after building the
.deb); skipped without it."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

from harness import AppTestCase, ChatApp, default_model_manifest, make_home

DEB = os.environ.get("CONFAB_DEB")


@unittest.skipUnless(DEB, "set CONFAB_DEB to a .deb built by scripts/bundle.sh (scripts/test.sh does)")
class FirstRun(AppTestCase):
    with_model = False

    @classmethod
    def setUpClass(cls):
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="confab-deb-root-"))
        subprocess.run(["dpkg-deb", "-x", DEB, str(cls.root)], check=True)
        cls.home = make_home(cls.__name__, with_model=False)
        cls.app = ChatApp(cls.home, app=cls.root / "usr" / "bin" / "confab-app", log_name=cls.__name__)
        try:
            cls.app.start(cls.app_env)
        except BaseException:
            cls.app.quit()
            raise

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_an_empty_data_folder_reaches_a_streamed_reply(self):
        app = self.app
        app.wait_model_ready()
        model = default_model_manifest()
        installed = self.home / "models" / model["folder"] / model["file"]
        self.assertTrue(installed.is_file() and not installed.is_symlink(), "installed into the models folder")
        self.assertEqual(installed.stat().st_size, model["size_bytes"])
        self.assertNotIn("setup.sh", app.body_text())
        _, reply = app.send("What is the capital of France?")
        reply, lengths = app.watch_stream(reply["id"])
        self.assertEqual(reply["status"], "complete", reply)
        self.assertTrue(reply["text"].strip(), reply)
        # Streamed: part of it was on screen before it ended. (How many draws a short reply gets
        # depends on what a frame costs: the engine does not wait for the window, and on a CPU
        # the window draws less often while the engine computes.)
        partial = [n for n in lengths if 0 < n < len(reply["text"])]
        self.assertTrue(partial, f"no partial text while streaming: {lengths}, {len(reply['text'])} at the end")
        app.screenshot("first-run-reply")


if __name__ == "__main__":
    unittest.main()
