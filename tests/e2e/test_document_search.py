"""Documents larger than the context, in the real window: a 40-page PDF dropped and asked about is
indexed with the embedding model found in the models folder (the tiny Qwen3-Embedding fixture: its
random vectors rank at random, so the question's words decide), the reply shows the passages it was
given as citations, one opens in the side panel at the page the answer is on, and they are still
there after a restart; a 300-page PDF shows a progress bar on its chip while it is indexed, and the
window answers meanwhile."""
import json
import pathlib
import shutil
import tempfile
import time
import unittest

from harness import AppTestCase, seconds

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Made by tests/reference/make_long_documents.py.
DOCUMENTS = ROOT / "tests/reference/fixtures/documents"
EXPECTED = json.loads((DOCUMENTS / "expected.json").read_text())
EMBEDDER = ROOT / "tests/reference/fixtures/tiny/qwen3_embedding"
QUESTION = "What is the lighthouse keeper's cat named?"


class DocumentSearch(AppTestCase):
    extra_models = {"qwen3-embedding-tiny": EMBEDDER}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-document-search-"))
        for name in ["long_report.pdf", "many_pages.pdf"]:
            shutil.copy(DOCUMENTS / name, cls.folder / name)
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=8, seed=1)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
        super().tearDownClass()

    def drop(self, name: str, pages: int) -> None:
        app = self.app
        report = app.drop_files([self.folder / name], app.one("message-list") or app.one("composer-input"))
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")
        chip = app.wait_for("attachment-chip", 60)
        app.wait_until(lambda: f"{pages} pages" in app.text(chip), 60, lambda: f"the chip: {app.text(chip)!r}")

    def sources(self, reply_id: str) -> list[str]:
        app = self.app
        return [app.text(link) for link in app.all("source-link", within=app.message_el(reply_id))]

    def test_01_a_pdf_larger_than_the_context_is_searched_and_cited(self):
        app = self.app
        fact = EXPECTED["long_report.pdf"]
        app.new_chat()
        self.drop("long_report.pdf", fact["pages"])
        _, reply = app.send(QUESTION, timeout=180)
        self.assertEqual(app.wait_reply(reply["id"])["status"], "complete")
        links = app.wait_until(lambda: self.sources(reply["id"]), 30, "the reply shows no sources")
        self.assertTrue(all("long_report.pdf p. " in link for link in links), links)
        cited = next((link for link in links if link.endswith(f"p. {fact['fact_page']}")), None)
        self.assertIsNotNone(cited, f"the page with the answer is not among the sources: {links}")
        app.screenshot("document-search-sources")

        app.all("source-link", within=app.message_el(reply["id"]))[links.index(cited)].click()
        panel = app.wait_for("source-panel")
        self.assertEqual(app.text(app.one("source-panel-page", within=panel)), f"Page {fact['fact_page']}")
        self.assertIn("long_report.pdf", app.text(app.one("source-panel-document", within=panel)))
        self.assertIn("Marmalade", app.text(app.one("source-panel-text", within=panel)))
        app.screenshot("document-search-panel")
        app.click("source-panel-close")
        app.wait_gone("source-panel", 10)

        # Kept with the reply: the same citations after a restart.
        conversation = app.current_conversation()
        app.restart()
        app.wait_model_ready()
        app.open_conversation(conversation)
        self.assertEqual(app.wait_until(lambda: self.sources(reply["id"]), 30, "no sources after a restart"), links)

    def test_02_a_300_page_pdf_indexes_with_a_progress_bar_and_the_window_answers(self):
        app = self.app
        app.new_chat()
        self.drop("many_pages.pdf", EXPECTED["many_pages.pdf"]["pages"])
        before = {m["id"] for m in app.messages()}
        app.compose("Which chapter mentions a walnut orchard?")
        app.click("send-button")
        bar = app.wait_for("index-progress", 120)
        app.screenshot("document-search-progress")
        seen = [(int(app.attr(bar, "value") or 0), int(app.attr(bar, "max") or 0))]
        # The window answers while the index is made: Settings opens and closes.
        start = time.monotonic()
        app.open_settings()
        app.close_settings()
        self.assertLess(time.monotonic() - start, seconds(10), "the window was slow to answer while indexing")
        while app.one("index-progress") is not None:
            try:
                seen.append((int(app.attr(bar, "value") or 0), int(app.attr(bar, "max") or 0)))
            except Exception:  # the bar went between the look and the read
                break
            time.sleep(0.2)
        self.assertGreater(seen[0][1], 300, f"fewer passages than pages: {seen}")
        self.assertEqual([v for v, _ in seen], sorted(v for v, _ in seen), f"the bar went back: {seen}")
        _, reply = app.wait_new_reply(before, 120)
        self.assertEqual(app.wait_reply(reply["id"])["status"], "complete")
        self.assertTrue(app.wait_until(lambda: self.sources(reply["id"]), 30, "the reply shows no sources"))
        self.assertIsNone(app.one("index-progress"), "the bar stayed after the index was made")


class DocumentSearchWithoutEmbeddingModel(AppTestCase):
    """No embedding model in the models folder: the question is kept, and its reply says where
    to get one."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-document-search-none-"))
        shutil.copy(DOCUMENTS / "long_report.pdf", cls.folder / "long_report.pdf")
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=8, seed=1)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder, ignore_errors=True)
        super().tearDownClass()

    def test_a_document_larger_than_the_context_asks_for_an_embedding_model(self):
        app = self.app
        app.new_chat()
        report = app.drop_files([self.folder / "long_report.pdf"], app.one("message-list") or app.one("composer-input"))
        self.assertIn("DATA-GET", report, f"the window never asked for the dropped data: {report}")
        app.wait_for("attachment-chip", 60)
        user, reply = app.send(QUESTION, timeout=120)
        ended = app.wait_reply(reply["id"])
        self.assertEqual(ended["status"], "error")
        error = app.text(app.message_el(reply["id"]))
        self.assertIn("long_report.pdf is larger than the context", error)
        self.assertIn("Get models", error)
        self.assertEqual(app.text(app.one("composer-input")) or "", "", "the question is not put back: it is kept")
        self.assertEqual([m["id"] for m in app.messages()], [user["id"], reply["id"]])
        app.screenshot("document-search-no-embedding-model")


if __name__ == "__main__":
    unittest.main()
