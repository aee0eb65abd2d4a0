"""A denoising model in the app: the tiny random DiffusionGemma (canvases of 8 tokens, at most 16
steps each). The picker marks it, Settings shows its denoising parameters instead of top-p and
top-k, and a reply shows each canvas forming (the tokens the sampler accepted solid, the model's
guesses for the rest faint) before it settles into the reply's text, which is what
`confab generate` writes for the same prompt and seed. Its stats count canvases and steps per
canvas, and both are kept when the chat is reopened."""
import json
import pathlib
import shutil
import sqlite3
import subprocess
import tempfile
import unittest

from harness import TARGET, AppTestCase

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIFFUSION_GEMMA = ROOT / "tests/reference/fixtures/tiny/diffusion_gemma"
CONFAB = TARGET / "debug" / "confab"
PROMPT = "Tell me a story about a lighthouse."
SEED = 3
# Three canvases of the fixture's 8 tokens.
MAX_TOKENS = 24

# Records, in the page, every state of the last reply's forming canvas while it streams. A
# MutationObserver rather than a timer: the tiny model writes a canvas in milliseconds, and the
# observer runs after each draw however fast they come.
WATCH_CANVAS_JS = """
window.__canvasSeen = [];
if (window.__canvasWatch) window.__canvasWatch.disconnect();
const look = () => {
  const replies = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  const m = replies[replies.length - 1];
  const c = m && m.querySelector('[data-testid="forming-canvas"]');
  if (!m || !c || m.dataset.status !== 'streaming') return;
  const state = {
    canvas: Number(c.dataset.canvas), steps: Number(c.dataset.steps),
    solid: c.querySelectorAll('.canvas-accepted').length, faint: c.querySelectorAll('.canvas-guess').length,
    other: c.querySelectorAll(':not(span)').length,
    text: c.textContent,
    reply: ((m.querySelector('[data-testid="message-content"]') || {}).textContent || '').length,
  };
  const seen = window.__canvasSeen;
  const last = seen[seen.length - 1];
  if (!last || last.canvas !== state.canvas || last.steps !== state.steps) seen.push(state);
};
window.__canvasWatch = new MutationObserver(look);
window.__canvasWatch.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
"""

REPLY_JS = """
const m = document.querySelector('[data-testid="message"][data-id="' + arguments[0] + '"]');
return { text: (m.querySelector('[data-testid="message-content"]') || {}).textContent || '',
         stats: (m.querySelector('[data-testid="reply-stats"]') || {}).textContent || '',
         forming: !!m.querySelector('[data-testid="forming-canvas"]') };
"""


class DiffusionGemma(AppTestCase):
    model_name = "diffusion-gemma-tiny"

    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-diffusion-"))
        model = cls.folder / cls.model_name
        shutil.copytree(DIFFUSION_GEMMA, model, ignore=shutil.ignore_patterns("*reference*"))
        cls.model = model
        cls.extra_models = {cls.model_name: model}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def test_01_the_picker_marks_it_and_settings_show_its_parameters(self):
        app = self.app
        app.wait_model_ready()
        app.click("model-picker")
        item = app.wait_for("model-item", extra=f'[data-path$="{self.model_name}"]', timeout=60)
        self.assertIsNotNone(app.one("model-denoising", within=item), "the picker marks a diffusion model")
        item.click()
        app.wait_until(lambda: self.model_name in app.text(app.wait_for("model-picker")), 120,
                       "the picker does not show the diffusion model")
        app.wait_model_ready()
        app.open_settings()
        shown = app.text(app.wait_for("denoising-params"))
        self.assertIn("8 tokens written in parallel", shown)
        self.assertIn("at most 16", shown)
        for sampler in ("top_p", "top_k", "temperature"):
            self.assertIsNone(app.one(f"setting-{sampler}"), f"{sampler} does not apply to a denoising model")
        app.set_settings(max_tokens=MAX_TOKENS, seed=SEED)

    def test_02_a_reply_shows_its_canvases_forming_then_the_text(self):
        app = self.app
        app.new_chat()
        app.d.execute_script(WATCH_CANVAS_JS)
        _, reply = app.send(PROMPT)
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        seen = app.js("window.__canvasWatch.disconnect(); return window.__canvasSeen;")
        self.assertTrue(seen, "no canvas showed while the reply streamed")
        self.assertTrue(all(s["other"] == 0 for s in seen), f"the canvas is plain text in spans: {seen}")
        self.assertTrue(all(s["solid"] + s["faint"] == 8 for s in seen), f"every canvas shows its 8 positions: {seen}")
        self.assertTrue(any(s["faint"] > 0 for s in seen), f"some positions showed as guesses: {seen}")
        self.assertTrue(any(s["solid"] > 0 for s in seen), f"some positions showed accepted: {seen}")
        shown = app.js(REPLY_JS, reply["id"])
        self.assertFalse(shown["forming"], "the canvas settled into the reply")
        self.assertTrue(shown["text"].strip(), "the reply has text")
        self.assertRegex(shown["stats"], r"\d+ canvas(es)? · [\d.]+ steps per canvas · [\d.]+ tok/s · .* to first canvas")

        # The window draws the text as markdown; the store keeps it as written.
        with sqlite3.connect(self.home / "confab.db", timeout=10) as db:
            (stored,) = db.execute("SELECT content FROM messages WHERE id = ?", (int(reply["id"]),)).fetchone()
        self.assertEqual(stored, self.generate(), "the reply is what `confab generate` writes at this seed")
        self.__class__.reply = (app.current_conversation(), reply["id"], shown)
        app.screenshot("diffusion-reply")

    def test_03_it_is_kept_after_reopening_the_chat(self):
        app = self.app
        conversation, reply_id, before = self.reply
        app.new_chat()
        app.open_conversation(conversation)
        app.message_el(reply_id)
        self.assertEqual(app.js(REPLY_JS, reply_id), before, "reopened: the same text and stats (canvases kept)")

    def generate(self) -> str:
        """What the command line writes for the same prompt, seed and length."""
        if not CONFAB.is_file():
            raise unittest.SkipTest(f"{CONFAB} is not built; run cargo build -p confab-cli")
        out = subprocess.run(
            [str(CONFAB), "generate", "--model", str(self.model), "--prompt", PROMPT, "--seed", str(SEED),
             "--max-tokens", str(MAX_TOKENS), "--json"],
            capture_output=True, text=True, timeout=300, check=True,
        )
        run = json.loads(out.stdout)
        self.assertEqual(run["plan"]["method"], "denoising")
        return run["text"]


if __name__ == "__main__":
    unittest.main()
