"""Speculative decoding in the real window (issue 37), chosen in the model picker for the loaded
model: prompt lookup on a quoting message gives the reply plain decoding gives, and the reply's
stats say how many proposed tokens were kept; a second copy of the default model in the model
folders shares its vocabulary, so the picker offers it as the draft, and a reply it drafted
says so. Settings › Model shows what the picker chose."""
import pathlib
import shutil
import tempfile

from selenium.webdriver.support.ui import Select

from harness import AppTestCase, default_model_manifest, installed_default_model

QUOTE = ("Repeat this text exactly, with nothing before or after it:\n\n"
         "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step.")


class SpeculativeDecoding(AppTestCase):
    @classmethod
    def setUpClass(cls):
        # The draft: the default model's file again, in a folder of its own (a link).
        cls.draft_dir = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-draft-"))
        (cls.draft_dir / default_model_manifest()["file"]).symlink_to(installed_default_model())
        cls.extra_models = {"SmolLM2-draft": cls.draft_dir}
        super().setUpClass()
        cls.app.wait_model_ready()
        # Greedy, so that the plain and the speculative replies are the same.
        cls.app.set_settings(temperature=0, max_tokens=64)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.draft_dir, ignore_errors=True)

    def pick(self, value_of) -> str:
        """Opens the picker, chooses the speculative option whose value `value_of` accepts, waits
        until it is saved (the select shows it again once the settings came back), closes the
        picker; returns the value."""
        app = self.app
        app.click("model-picker")
        select = app.wait_for("picker-speculative", 30)
        value = app.wait_until(
            lambda: next((o.get_attribute("value") for o in Select(select).options if value_of(o.get_attribute("value"))), None),
            30, "the picker does not offer the choice")
        Select(select).select_by_value(value)
        app.wait_until(lambda: app.wait_for("picker-speculative").get_attribute("value") == value
                       and app.wait_for("picker-speculative").is_enabled(), 60, "the choice was not saved")
        app.click("model-picker")
        app.wait_gone("picker-speculative", 10)
        return value

    def quoted_reply(self) -> dict:
        app = self.app
        app.new_chat()
        _, reply = app.send(QUOTE)
        reply = app.wait_reply(reply["id"])
        self.assertEqual(reply["status"], "complete", reply)
        return reply

    def stats(self, reply: dict) -> str:
        return self.app.text(self.app.wait_for("reply-stats", 30, within=self.app.message_el(reply["id"])))

    def test_01_prompt_lookup_keeps_proposals_and_gives_the_plain_reply(self):
        app = self.app
        plain = self.quoted_reply()
        self.assertNotIn("proposed tokens kept", self.stats(plain))
        self.pick(lambda v: v == "prompt_lookup")
        fast = self.quoted_reply()
        self.assertEqual(fast["text"], plain["text"], "greedy speculative decoding changed the reply")
        self.assertRegex(self.stats(fast), r"prompt lookup: [1-9]\d* of \d+ proposed tokens kept")
        app.open_settings()
        self.assertEqual(app.setting("speculative").get_attribute("value"), "prompt_lookup")
        app.close_settings()

    def test_02_a_model_sharing_the_vocabulary_drafts_for_it(self):
        app = self.app
        value = self.pick(lambda v: v.startswith("draft:"))
        self.assertIn("SmolLM2-draft", value, "the draft offered is the second copy")
        app.wait_model_ready()
        reply = self.quoted_reply()
        self.assertRegex(self.stats(reply), r"draft model: \d+ of \d+ proposed tokens kept")
        app.open_settings()
        self.assertEqual(app.setting("speculative").get_attribute("value"), "draft_model")
        # (Its options come once the drafts are found.)
        app.wait_until(lambda: app.setting("draft_model").get_attribute("value") == value[len("draft:"):], 30,
                       lambda: f"Settings shows the draft {app.setting('draft_model').get_attribute('value')!r}")
        app.close_settings()
