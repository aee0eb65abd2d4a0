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
        self.assertGreaterEqual(len(lengths), 2, f"the reply streamed in pieces: {lengths}")
        app.screenshot("first-run-reply")


if __name__ == "__main__":
    unittest.main()
