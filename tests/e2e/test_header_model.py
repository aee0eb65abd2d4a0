"""Issue 59, finding 2: the header names the model that will answer. The default model has a draft
model (a second copy of it, as in test_speculative.py); a remote model is picked (the scripted
provider); then picking the local model again, which loads it with its draft, takes replies back:
the header names it, not the remote, and the reply's stats name the same model. (Before the fix,
the backend took replies back only once the draft had loaded too, after the window had asked who
answers, and the header went on naming the remote while the local model answered.)"""
import pathlib
import shutil
import tempfile

from selenium.webdriver.support.ui import Select

from harness import AppTestCase, default_model_manifest, installed_default_model
from scripted_provider import ScriptedProvider

PROVIDER = "Scripted"


class HeaderNamesTheModel(AppTestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = ScriptedProvider()
        # Another model to load first, and the default model's draft: the default model's file
        # again, in a folder of its own (a link).
        cls.draft_dir = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-header-draft-"))
        (cls.draft_dir / default_model_manifest()["file"]).symlink_to(installed_default_model())
        cls.extra_models = {"SmolLM2-draft": cls.draft_dir}
        try:
            super().setUpClass()
        except BaseException:
            cls.provider.stop()
            raise
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=8, temperature=0)

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.provider.stop()
            shutil.rmtree(cls.draft_dir, ignore_errors=True)

    def field(self, testid: str):
        el = self.app.wait_for(testid)
        self.app.js("arguments[0].scrollIntoView({block: 'center'})", el)
        return el

    def header(self) -> dict:
        """The model button's label and the remote badge, if any."""
        app = self.app
        badge = app.one("remote-badge")
        return {"label": app.text(app.one("model-picker")).rstrip("▾").strip(), "badge": app.text(badge) if badge else None}

    def pick_local(self, folder_name: str):
        app = self.app
        app.click("model-picker")
        app.wait_for("model-item", 30, extra=f'[data-path*="/{folder_name}/"]').click()
        app.wait_gone("model-item", 10)

    def pick_remote(self):
        app = self.app
        app.click("model-picker")
        app.wait_for("remote-model-item", 30, extra=f'[data-model="{self.provider.model}"]').click()
        app.wait_until(lambda: self.header()["badge"] == f"Remote: {PROVIDER}", 30, lambda: f"header {self.header()}")
        self.assertIn(self.provider.model, self.header()["label"])

    def answered_by(self) -> str:
        """Sends a message in a new chat; the model its reply's stats name."""
        app = self.app
        app.new_chat()
        _, reply = app.send("Hi")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        stats = app.wait_for("reply-stats", 30, within=app.message_el(done["id"]))
        return stats.get_attribute("title")

    def test_01_picking_the_local_model_back_names_it_in_the_header(self):
        app = self.app
        default_dir = default_model_manifest()["folder"]
        local = self.header()["label"]
        self.assertIsNone(self.header()["badge"])
        # The default model's draft, chosen in the picker (it loads beside the model).
        app.click("model-picker")
        select = app.wait_for("picker-speculative", 30)
        value = app.wait_until(lambda: next((o.get_attribute("value") for o in Select(select).options
                                             if o.get_attribute("value").startswith("draft:")), None), 30, "no draft offered")
        Select(select).select_by_value(value)
        app.wait_until(lambda: app.wait_for("picker-speculative").get_attribute("value") == value
                       and app.wait_for("picker-speculative").is_enabled(), 60, "the draft was not saved")
        app.click("model-picker")
        app.wait_gone("picker-speculative", 10)
        app.wait_model_ready()
        # Another local model, so that picking the default one loads it again, with its draft.
        self.pick_local("SmolLM2-draft")
        app.wait_model_ready()

        # The provider, and its model picked.
        app.open_settings()
        self.field("provider-add").click()
        app.fill(self.field("provider-name"), PROVIDER)
        app.fill(self.field("provider-url"), self.provider.base_url)
        self.field("provider-save").click()
        app.wait_for("provider-model", 60, extra=f'[data-model="{self.provider.model}"]')
        app.close_settings()
        self.pick_remote()
        self.assertIn(f"via {PROVIDER}", self.answered_by())

        # The default model again: loaded with its draft, it answers, and the header says so.
        self.pick_local(default_dir)
        app.wait_model_ready()
        app.wait_until(lambda: self.header()["badge"] is None, 30, lambda: f"the header still names the remote: {self.header()}")
        header = self.header()
        self.assertEqual(header["label"], local, header)
        by = self.answered_by()
        self.assertEqual(by, header["label"], "the header names the model that answered")
        self.assertEqual(self.header(), header, "and still does after the reply")
        app.screenshot("header-local-model")

    def test_02_picking_the_loaded_model_back_names_it_too(self):
        app = self.app
        local = self.header()["label"]
        self.pick_remote()
        self.pick_local(default_model_manifest()["folder"])
        app.wait_until(lambda: self.header()["badge"] is None, 30, lambda: f"the header still names the remote: {self.header()}")
        self.assertEqual(self.header()["label"], local)
        self.assertEqual(self.answered_by(), local)
