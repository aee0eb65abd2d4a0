"""A thinking model in the app: the tiny Qwen3 wearing a template that opens `<think>` in its
generation prompt (as Qwen3's does), so its random words fall in the reasoning block. The
Thinking section streams open above the answer, folds with how long the model thought when
it stops, comes back folded when the chat is reopened (and after a restart), and the chat's
thinking switch turns it off through the template's `enable_thinking`. The same with the tiny
Qwen3.5 wearing Qwen3.5's real template (tests/reference/fixtures/templates), whose random words
may close the block themselves: its section streams, folds and is kept."""
import json
import pathlib
import re
import shutil
import tempfile
import unittest

from harness import AppTestCase

ROOT = pathlib.Path(__file__).resolve().parents[2]
QWEN3 = ROOT / "tests/reference/fixtures/tiny/qwen3"
QWEN3_5 = ROOT / "tests/reference/fixtures/tiny/qwen3_5"
TEMPLATES = ROOT / "tests/reference/fixtures/templates"
# As tests/server/test_openai.py's: Qwen3's generation prompt, thinking unless switched off.
THINKING_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}{% endif %}"
)

# Records, in the page, every state of the last reply's Thinking section while it streams. A
# MutationObserver rather than a timer: the tiny model writes its 226 tokens in about 150 ms, and
# on a busy machine the web process may get them all in one burst, drawn (the first token at
# once, then the rest) between two timer ticks; the observer runs after each of those draws.
WATCH_REASONING_JS = """
window.__reasoningSeen = [];
if (window.__reasoningWatch) window.__reasoningWatch.disconnect();
const look = () => {
  const replies = document.querySelectorAll('[data-testid="message"][data-role="assistant"]');
  const m = replies[replies.length - 1];
  const r = m && m.querySelector('[data-testid="reasoning"]');
  if (!m || !r || m.dataset.status !== 'streaming') return;
  const text = r.querySelector('[data-testid="reasoning-text"]').textContent;
  const seen = window.__reasoningSeen;
  const last = seen[seen.length - 1];
  if (!last || last.length !== text.length || last.open !== r.open)
    seen.push({ length: text.length, open: r.open, thinking: r.dataset.thinking === 'true' });
};
window.__reasoningWatch = new MutationObserver(look);
window.__reasoningWatch.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
"""

SECTION_JS = """
const m = document.querySelector('[data-testid="message"][data-id="' + arguments[0] + '"]');
const r = m && m.querySelector('[data-testid="reasoning"]');
if (!r) return null;
return { open: r.open, label: r.querySelector('summary').textContent,
         text: r.querySelector('[data-testid="reasoning-text"]').textContent,
         answer: (m.querySelector('[data-testid="message-content"]') || {}).textContent || '',
         html: r.querySelector('[data-testid="reasoning-text"]').children.length };
"""


class Thinking(AppTestCase):
    source = QWEN3
    model_name = "qwen3-thinking"
    screenshot_name = "thinking-reply"
    # The tiny Qwen3's random words never write `</think>` at this seed: all of it is reasoning.
    all_reasoning = True

    @classmethod
    def dress(cls, model: pathlib.Path):
        """Gives the copied checkpoint its thinking template."""
        config = json.loads((model / "tokenizer_config.json").read_text())
        config["chat_template"] = THINKING_TEMPLATE
        (model / "tokenizer_config.json").write_text(json.dumps(config))

    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix=f"confab-e2e-{cls.model_name}-"))
        model = cls.folder / cls.model_name
        shutil.copytree(cls.source, model, ignore=shutil.ignore_patterns("*reference*"))
        cls.dress(model)
        cls.extra_models = {cls.model_name: model}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def section(self, reply_id: str) -> dict | None:
        return self.app.js(SECTION_JS, reply_id)

    def test_01_pick_the_thinking_model(self):
        app = self.app
        app.wait_model_ready()
        self.assertIsNone(app.one("thinking-switch"), "the default model's template has no thinking switch")
        app.click("model-picker")
        app.wait_for("model-item", extra=f'[data-path$="{self.model_name}"]', timeout=60).click()
        app.wait_until(lambda: self.model_name in app.text(app.wait_for("model-picker")), 120,
                       "the picker does not show the thinking model")
        app.wait_model_ready()
        # Long enough to watch it stream: the tiny model writes hundreds of tokens a second.
        app.set_settings(max_tokens=2000, seed=3)
        switch = app.wait_for("thinking-switch", visible=False)
        self.assertTrue(switch.is_selected(), "a new chat thinks")

    def test_02_the_reasoning_streams_then_folds_with_its_time(self):
        app = self.app
        app.new_chat()
        app.d.execute_script(WATCH_REASONING_JS)
        _, reply = app.send("Why is the sky blue?")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        seen = app.js("window.__reasoningWatch.disconnect(); return window.__reasoningSeen;")
        streaming = [s for s in seen if s["thinking"]]
        self.assertTrue(streaming, f"the Thinking section never showed while the reply streamed: {seen}")
        self.assertTrue(all(s["open"] for s in streaming), f"it is open while the model thinks: {seen}")
        section = self.section(reply["id"])
        self.assertIsNotNone(section)
        # The tiny model may finish between two draws: what counts is that part of the reasoning
        # was on screen, in the open section, while the rest was still being written.
        self.assertLess(min(s["length"] for s in streaming), len(section["text"]),
                        f"the reasoning showed while it streamed: {seen}; at the end {len(section['text'])} characters")
        self.assertFalse(section["open"], "folded once the model stopped thinking")
        self.assertRegex(section["label"], r"^Thought for \d+(\.\d)? (s|ms)$")
        self.assertTrue(section["text"].strip())
        self.assertEqual(section["html"], 0, "the reasoning is plain text")
        self.assertNotIn("<think>", section["text"] + section["answer"], "the markup is not shown")
        if self.all_reasoning:
            self.assertFalse(section["answer"].strip(), "the random words all fell in the reasoning block")
        self.__class__.reply = (app.current_conversation(), reply["id"], section)
        app.screenshot(self.screenshot_name)

    def test_03_it_is_there_after_reopening_the_chat_and_a_restart(self):
        app = self.app
        conversation, reply_id, before = self.reply
        app.new_chat()
        app.open_conversation(conversation)
        app.message_el(reply_id)
        self.assertEqual(self.section(reply_id), before, "reopened, the section is as it was: folded, its time kept")
        app.restart()
        app.open_conversation(conversation)
        app.message_el(reply_id)
        self.assertEqual(self.section(reply_id), before, "kept across a restart")

    def test_04_the_switch_turns_thinking_off_for_the_chat(self):
        app = self.app
        app.wait_model_ready()
        conversation, _, _ = self.reply
        if app.current_conversation() != conversation:
            app.open_conversation(conversation)
        switch = app.wait_for("thinking-switch", visible=False)
        self.assertTrue(switch.is_selected())
        app.js("arguments[0].click()", switch)
        app.wait_until(lambda: not app.wait_for("thinking-switch", visible=False).is_selected(), 30, "the switch did not turn off")
        _, reply = app.send("Answer at once.")
        done = app.wait_reply(reply["id"])
        self.assertEqual(done["status"], "complete", done)
        self.assertIsNone(self.section(reply["id"]), "no reasoning: the template closed the block")
        self.assertTrue(done["text"].strip(), "the words are the answer now")
        self.assertTrue(re.search(r"\S", done["text"]))


class ThinkingQwen3_5(Thinking):
    """The tiny Qwen3.5 wearing Qwen3.5's own template, which opens `<think>` unless
    `enable_thinking` is false. Its random words may write `</think>` (and `<think>` again), so
    the checks are the section's: it streams open, folds with its time, and is kept. The switch is
    the Qwen3 class's test (and tests/server/test_templates.py's for this template)."""

    source = QWEN3_5
    model_name = "qwen3_5-thinking"
    screenshot_name = "thinking-reply-qwen3_5"
    all_reasoning = False
    test_04_the_switch_turns_thinking_off_for_the_chat = None

    @classmethod
    def dress(cls, model: pathlib.Path):
        # chat_template.jinja comes before tokenizer_config.json's template.
        shutil.copyfile(TEMPLATES / "Qwen3.5-4B.jinja", model / "chat_template.jinja")


if __name__ == "__main__":
    unittest.main()
