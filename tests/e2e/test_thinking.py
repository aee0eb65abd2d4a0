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


CUT_JS = """
const m = document.querySelector('[data-testid="message"][data-id="' + arguments[0] + '"]');
const q = (t) => m.querySelector('[data-testid="' + t + '"]');
const r = q('reasoning');
return { status: m.dataset.status, badge: q('status-badge') && q('status-badge').textContent,
         cut: q('status-badge') && q('status-badge').dataset.cut, continue: !!q('continue-button'),
         open: r && r.open, label: r && r.querySelector('summary').textContent,
         reasoning: r && q('reasoning-text').textContent,
         answer: (q('message-content') || {}).textContent || '' };
"""


class ThinkingCut(AppTestCase):
    """Issue 59, finding 3: a thinking reply the token limit cuts before its answer says it was
    cut at the token limit, keeps its reasoning open to read, and offers Continue, which goes on
    inside the reasoning; the same after a restart. The tiny Qwen3 with Thinking's template (its
    words all fall in the reasoning block) and a limit of 12 tokens."""

    model_name = "qwen3-thinking"

    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix=f"confab-e2e-{cls.model_name}-cut-"))
        model = cls.folder / cls.model_name
        shutil.copytree(QWEN3, model, ignore=shutil.ignore_patterns("*reference*"))
        Thinking.dress(model)
        cls.extra_models = {cls.model_name: model}
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def cut(self, reply_id: str) -> dict:
        self.app.message_el(reply_id)
        return self.app.js(CUT_JS, reply_id)

    def assert_cut(self, state: dict):
        self.assertEqual(state["status"], "complete", state)
        self.assertEqual(state["cut"], "token_limit", state)
        self.assertIn("Cut at the token limit", state["badge"])
        self.assertTrue(state["continue"], f"no Continue: {state}")
        self.assertTrue(state["open"], f"the reasoning, all there is, is folded: {state}")
        self.assertTrue(state["reasoning"].strip(), state)
        self.assertRegex(state["label"], r"^Thought for ")

    def test_01_cut_while_thinking_says_so_and_continues(self):
        app = self.app
        app.wait_model_ready()
        app.click("model-picker")
        app.wait_for("model-item", extra=f'[data-path$="{self.model_name}"]', timeout=60).click()
        app.wait_until(lambda: self.model_name in app.text(app.wait_for("model-picker")), 120,
                       "the picker does not show the thinking model")
        app.wait_model_ready()
        app.set_settings(max_tokens=12, seed=3)
        app.new_chat()
        _, reply = app.send("Why is the sky blue?")
        app.wait_reply(reply["id"])
        first = self.cut(reply["id"])
        self.assert_cut(first)
        self.assertFalse(first["answer"].strip(), "cut before any answer")
        app.hover(app.message_el(reply["id"]))  # its actions (Continue) show on hover
        app.screenshot("thinking-cut", app.message_el(reply["id"]), pad=12)

        app.click_in_message(reply["id"], "continue-button")
        app.wait_until(lambda: len(self.cut(reply["id"])["reasoning"]) > len(first["reasoning"])
                       and self.cut(reply["id"])["status"] != "streaming", 120,
                       lambda: f"Continue did not add to the reasoning: {self.cut(reply['id'])}")
        after = self.cut(reply["id"])
        self.assertTrue(after["reasoning"].startswith(first["reasoning"].strip()), f"{first} then {after}")
        self.assertEqual([m["id"] for m in app.messages() if m["role"] == "assistant"], [reply["id"]], "the same reply")
        # Cut again by the same limit: still said, still continued.
        self.assert_cut(after)
        self.__class__.reply = (app.current_conversation(), reply["id"], after)

    def test_02_it_is_said_after_a_restart(self):
        app = self.app
        conversation, reply_id, before = self.reply
        app.restart()
        app.open_conversation(conversation)
        self.assertEqual(self.cut(reply_id), before, "the cut reply is shown as it was")


if __name__ == "__main__":
    unittest.main()
