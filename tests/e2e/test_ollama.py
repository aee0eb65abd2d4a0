"""Ollama's store in the real window (issue 41, item 6): a store laid out as Ollama lays it out
(a manifest naming a GGUF blob, beside the template and params layers Ollama writes), made here
under OLLAMA_MODELS with its blob a link to the installed default model, is listed in the picker
by Ollama's name and tag with an Ollama badge; picked, it loads from the blob in place and
answers in the window."""
import json
import pathlib
import shutil
import tempfile

from harness import AppTestCase, installed_default_model

NAME = "smollm2:135m"
DIGEST = "5a" * 32


def make_store(root: pathlib.Path) -> pathlib.Path:
    """The store, and the blob its manifest names (a link: Confab must not copy it)."""
    blob = root / "blobs" / f"sha256-{DIGEST}"
    blob.parent.mkdir(parents=True)
    blob.symlink_to(installed_default_model())
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / "smollm2" / "135m"
    manifest.parent.mkdir(parents=True)
    layer = lambda kind, digest: {"mediaType": f"application/vnd.ollama.image.{kind}", "digest": digest, "size": 1}
    manifest.write_text(json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + "0" * 64, "size": 2},
        "layers": [layer("model", f"sha256:{DIGEST}"), layer("template", "sha256:" + "1" * 64), layer("params", "sha256:" + "2" * 64)],
    }))
    return blob


class OllamaStore(AppTestCase):
    @classmethod
    def setUpClass(cls):
        cls.store = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-ollama-"))
        cls.blob = make_store(cls.store)
        cls.app_env = {"OLLAMA_MODELS": str(cls.store)}
        super().setUpClass()
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=96, seed=7)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.store, ignore_errors=True)

    def test_01_the_picker_lists_the_store_by_name_and_a_picked_model_answers(self):
        app = self.app
        app.click("model-picker")
        row = app.wait_for("model-row", 30, extra=f'[data-path="{self.blob}"]')
        name = app.text(app.one("model-item", within=row))
        self.assertTrue(name.startswith(NAME), f"the row says {name!r}")
        self.assertEqual(app.text(app.one("model-source", within=row)), "Ollama")
        self.assertIn("GGUF", app.text(app.one("model-facts", within=row)))
        app.screenshot("model-picker-ollama", app.js("return document.querySelector('.model-popover')"))

        app.one("model-item", within=row).click()
        app.wait_until(lambda: NAME in app.text(app.wait_for("model-picker")), 120,
                       lambda: f"the header says {app.text(app.one('model-picker'))!r}, not {NAME}")
        app.wait_model_ready()
        self.assertTrue(self.blob.is_symlink(), "the blob is used where it is, not replaced")

        app.new_chat()
        _, reply = app.send("What is the capital of France?")
        done, lengths = app.watch_stream(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        self.assertTrue([n for n in lengths if 0 < n < len(done["text"])], f"no partial text while streaming: {lengths}")
        self.assertIn("Paris", done["text"])
