"""Documents in the app: a real native drop of a PDF and a Markdown file, their chips naming them
with the PDF's pages, the question's prompt holding their text (the plan's prompt grows by it, and
the context meter counted it before sending), the user message keeping them; and PDFs that cannot
be read (truncated, password-protected, with neither text nor a page image) refused with errors that say so, the chat
intact."""
import pathlib
import re
import shutil
import tempfile
import unittest

from harness import AppTestCase

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "crates/documents/tests/fixtures"  # made by tests/reference/make_documents.py
QUESTION = "What grew by 12 percent?"
NOTES = """# Harbour notes

The ferry leaves at seven. Tickets cost four euros and are sold on board.
The lighthouse museum opens on Saturdays from ten to four, with a guided tour at noon.
"""


def prompt_tokens(plan: str) -> int:
    found = re.findall(r"(\d+) prompt tokens", plan)
    if not found:
        raise AssertionError(f"no prompt token count in the plan: {plan!r}")
    return int(found[-1])


def meter_tokens(text: str) -> int:
    return int(text.split("/")[0].strip().replace(",", ""))


class Documents(AppTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-documents-"))
        for name in ["two_pages.pdf", "truncated.pdf", "encrypted.pdf", "blank.pdf"]:
            shutil.copy(FIXTURES / name, cls.folder / name)
        (cls.folder / "notes.md").write_text(NOTES)
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=8, seed=1)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
        super().tearDownClass()

    def drop(self, *names: str) -> None:
        app = self.app
        report = app.drop_files([self.folder / n for n in names], app.one("message-list") or app.one("composer-input"))
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")

    def meter(self) -> int:
        app = self.app
        return meter_tokens(app.text(app.wait_for("context-meter", timeout=60)))

    def test_01_a_pdf_and_notes_go_into_the_prompt_whole(self):
        app = self.app
        # The same question without documents: what the prompt is without them.
        app.new_chat()
        _, reply = app.send(QUESTION)
        self.assertEqual(app.wait_reply(reply["id"])["status"], "complete")
        without = prompt_tokens(app.text(app.all("plan")[-1]))

        app.new_chat()
        app.compose(QUESTION)
        app.wait_until(lambda: app.one("context-meter") is not None, 60, "the meter never counted the draft")
        draft_alone = self.meter()
        self.drop("two_pages.pdf", "notes.md")
        app.wait_until(lambda: len(app.all("attachment-chip")) == 2, 60,
                       lambda: f"chips: {len(app.all('attachment-chip'))}, banners: {app.banners('error-banner')} {app.banners('notice')}")
        pdf = next(chip for chip in app.all("attachment-chip") if "two_pages.pdf" in app.text(chip))
        app.wait_until(lambda: "2 pages" in app.text(pdf), 30, lambda: f"the PDF's chip: {app.text(pdf)!r}")
        self.assertEqual(app.attr(pdf, "data-pages"), "2")
        self.assertIn("PDF", app.text(pdf))
        notes = next(chip for chip in app.all("attachment-chip") if "notes.md" in app.text(chip))
        app.wait_until(lambda: "Markdown" in app.text(notes), 30, lambda: f"the notes' chip: {app.text(notes)!r}")
        app.screenshot("documents-chips")

        # The words of both documents, each at least one token, the page markers and tags besides.
        words = sum(len(t.split()) for t in ["Quarterly report Revenue grew by 12 percent. Costs stayed flat.",
                                             "Outlook We expect a calm winter. Café crème and naïve résumé.", NOTES])
        app.wait_until(lambda: self.meter() >= draft_alone + words, 60,
                       lambda: f"the meter did not count the documents: {self.meter()} against {draft_alone} + {words}")

        user, reply = app.send(QUESTION)
        self.assertEqual(app.wait_reply(reply["id"])["status"], "complete")
        with_documents = prompt_tokens(app.text(app.all("plan")[-1]))
        self.assertGreaterEqual(with_documents - without, words,
                                f"the prompt did not hold the documents: {without} tokens without, {with_documents} with")
        shown = [app.text(el) for el in app.message_el(user["id"]).find_elements("css selector", '[data-testid="document-attachment"]')]
        names = [app.attr(el, "title") for el in app.message_el(user["id"]).find_elements("css selector", '[data-testid="document-attachment"]')]
        self.assertEqual(sorted(names), ["notes.md", "two_pages.pdf"], f"the question keeps its documents: {shown}")
        self.assertEqual(app.all("attachment-chip"), [], "the chips went with the message")
        app.screenshot("documents-reply")

    def test_02_unreadable_pdfs_are_errors_that_say_why(self):
        app = self.app
        conversation = app.messages()
        expected = {
            "truncated.pdf": r"damaged or incomplete",
            "encrypted.pdf": r"protected with a password",
            "blank.pdf": r"no text layer",
        }
        for name, pattern in expected.items():
            with self.subTest(name):
                app.dismiss("error-banner")
                before = app.banners("error-banner")
                self.drop(name)
                error = app.wait_banner("error-banner", before)
                self.assertIn(name, error, "the error names the file")
                self.assertRegex(error, pattern)
                self.assertEqual(app.all("attachment-chip"), [], f"{name} became an attachment")
                app.screenshot(f"documents-{name.replace('.', '-')}-error")
        now = app.messages()
        self.assertEqual([(m["id"], m["text"]) for m in now], [(m["id"], m["text"]) for m in conversation], "the chat changed")


if __name__ == "__main__":
    unittest.main()
