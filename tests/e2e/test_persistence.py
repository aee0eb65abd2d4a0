"""What survives a restart (same CONFAB_HOME): conversations, messages, settings, search; a reply
cut off by a killed app comes back as interrupted, with every word the window had shown (killed
at random points); a chat's prefix cache outlives quitting."""
import os
import random
import re
import signal
import sqlite3
import time
import unittest

from harness import AppTestCase, seconds

SYSTEM_PROMPT = "You are a concise assistant who answers in one sentence."


class Persistence(AppTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.app.wait_model_ready()

    def test_01_conversation_and_settings_survive_a_restart(self):
        app = self.app
        app.set_settings(max_tokens=64, seed=11, temperature=0.55, system_prompt=SYSTEM_PROMPT, theme="dark")
        self.assertEqual(app.theme(), "dark")
        app.new_chat()
        user, reply = app.send("Describe the city of Paris.")
        reply = app.wait_reply(reply["id"])
        self.assertEqual(reply["status"], "complete", reply)
        before = app.messages()
        conversation = app.wait_for("conversation-item").get_attribute("data-id")
        # A word of the reply that is not in the question, for search.
        words = [w for w in re.findall(r"[A-Za-z]{5,}", reply["text"]) if w.lower() not in ("describe", "paris")]
        self.assertTrue(words, f"no searchable word in {reply['text']!r}")
        word = max(words, key=len)

        app.restart()
        app.wait_for("sidebar", 60)
        clicks = app.open_conversation(conversation, 60)
        app.wait_until(lambda: [m["id"] for m in app.messages()] == [m["id"] for m in before], 30,
                       lambda: f"messages after restart {app.messages()} != {before}")
        after = app.messages()
        for b, a in zip(before, after):
            self.assertEqual((a["role"], a["status"], a["text"]), (b["role"], b["status"], b["text"]))
        self.assertTrue(after[-1]["stats"], "reply-stats kept across restart")

        # Settings kept, the theme applied at startup.
        self.assertEqual(app.theme(), "dark")
        app.open_settings()
        self.assertAlmostEqual(float(app.setting("temperature").get_attribute("value")), 0.55, places=3)
        self.assertEqual(app.setting("system_prompt").get_attribute("value"), SYSTEM_PROMPT)
        self.assertEqual(int(app.setting("max_tokens").get_attribute("value")), 64)
        self.assertEqual(app.setting("theme").get_attribute("value"), "dark")
        app.close_settings()

        # Search finds the conversation by a word of the reply.
        app.fill("search-input", word)
        hit = app.wait_for("search-result", 30)
        self.assertIn(word.lower(), app.text(hit).lower())
        hit.click()
        app.wait_until(lambda: any(m["id"] == reply["id"] for m in app.messages()), 30,
                       "opening the search result did not show the conversation")
        app.fill("search-input", "")
        self.assertEqual(clicks, 1, "the first click on the conversation after the restart did not open it")

    def test_02_killed_mid_reply_comes_back_interrupted(self):
        app = self.app
        app.set_settings(max_tokens=2000)
        app.new_chat()
        _, reply = app.send("Write a very long story about a lighthouse keeper. Make it ten paragraphs long.")
        streaming, _ = app.watch_stream(reply["id"], until=lambda r: len(r["text"]) >= 40)
        self.assertEqual(streaming["status"], "streaming", streaming)
        conversation = app.current_conversation()
        self.assertIsNotNone(conversation, "no selected conversation while streaming")
        pid = app.app_pid()
        self.assertIsNotNone(pid, "could not find the app's process")
        os.kill(pid, signal.SIGKILL)
        app.restart()
        app.wait_for("sidebar", 60)
        app.open_conversation(conversation, 60)
        shown = app.messages()
        back = next((m for m in shown if m["id"] == reply["id"]), None)
        self.assertIsNotNone(back, f"the killed reply {reply['id']} is missing from its conversation: {shown}")
        self.assertEqual(back["status"], "interrupted", back)
        self.assertTrue(back["text"].strip(), "the partial text is kept")
        app.set_settings(max_tokens=64)

    def test_03_quitting_keeps_the_chat_s_cache_for_the_next_launch(self):
        app = self.app
        app.new_chat()
        _, reply = app.send("Name three colours.")
        self.assertEqual(app.wait_reply(reply["id"])["status"], "complete")
        conversation = app.current_conversation()
        pid, log = app.app_pid(), app.log_path
        self.assertIsNotNone(pid, "could not find the app's process")
        # Quit, not killed: a terminate signal (a logout) takes the path closing the window takes
        # (WebDriver cannot close the window without killing the app), stopping the engine.
        os.kill(pid, signal.SIGTERM)
        app.wait_until(lambda: not alive(pid), 60, "the app did not exit after a terminate signal")
        self.assertIn("engine stopped; sessions kept on disk", log.read_text(errors="replace"))
        self.assertTrue(any((app.home / "cache" / "prefix").iterdir()), "no session on disk")

        app.restart()
        app.wait_model_ready()
        app.open_conversation(conversation, 60)
        _, follow = app.send("Three more, please.")
        self.assertEqual(app.wait_reply(follow["id"])["status"], "complete")
        self.assertRegex(app.log_path.read_text(errors="replace"), r"prefix cache hit .*source=\"?disk",
                         "the next launch's follow-up did not continue from the session on disk")


# Resolves with the streaming reply's text once it shows at least `chars` characters (a
# MutationObserver sees each draw; the tiny model can write faster than WebDriver round trips), or
# null if the reply ends first.
SHOWN_AT_JS = """
const [id, chars, done] = arguments;
const look = () => {
  const m = document.querySelector('[data-testid="message"][data-id="' + id + '"]');
  if (!m) return;
  if (m.dataset.status !== 'streaming') { watch.disconnect(); done(null); return; }
  const text = (m.querySelector('[data-testid="message-content"]') || {}).textContent || '';
  if (text.length >= chars) { watch.disconnect(); done(text); }
};
const watch = new MutationObserver(look);
watch.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
look();
"""

SHOWN_NOW_JS = """
const m = document.querySelector('[data-testid="message"][data-id="' + arguments[0] + '"]');
return m ? { status: m.dataset.status, text: (m.querySelector('[data-testid="message-content"]') || {}).textContent || '' } : null;
"""


def words(text: str) -> list[str]:
    """The words of a reply, as its markdown source and the page it was drawn into share them:
    list numbers, markup and spacing are drawn differently (or not at all), words are not."""
    return [w for w in re.findall(r"[^\W_]+", text) if not w.isdigit()]


class KillKeepsWhatWasShown(AppTestCase):
    """Issue 59, finding 4: the app killed (SIGKILL) at random points of a streamed reply keeps,
    after the relaunch, every word the window showed before the kill: each piece of a reply is
    saved before the window is sent it."""

    KILLS = 4

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.app.wait_model_ready()
        cls.app.set_settings(max_tokens=1500)

    def kept(self, reply_id: str) -> tuple[str, str]:
        """The reply's status and text in the database."""
        with sqlite3.connect(self.app.home / "confab.db") as db:
            return db.execute("SELECT status, content FROM messages WHERE id = ?", (int(reply_id),)).fetchone()

    def test_killed_at_random_points_the_shown_text_is_kept(self):
        app = self.app
        seed = int(os.environ.get("CONFAB_E2E_KILL_SEED") or time.time())
        rng = random.Random(seed)
        # Early (the first words) to later: each kill once the reply shows a random length, a
        # random moment after that draw (the window draws a few times a second: right after a
        # draw is when it has shown the most that a late save could lose).
        points = [(rng.randint(3 + 100 * k, 100 * (k + 1)), rng.uniform(0, 0.1)) for k in range(self.KILLS)]
        report = []
        for chars, pause in points:
            app.wait_model_ready()
            app.new_chat()
            _, reply = app.send("Write a very long story about a lighthouse keeper and her cat. Make it ten paragraphs long.")
            app.d.set_script_timeout(seconds(120))
            reached = app.d.execute_async_script(SHOWN_AT_JS, reply["id"], chars)
            self.assertIsNotNone(reached, f"the reply ended before it showed {chars} characters (seed {seed})")
            time.sleep(pause)
            conversation, pid = app.current_conversation(), app.app_pid()
            self.assertIsNotNone(pid, "could not find the app's process")
            shown = app.js(SHOWN_NOW_JS, reply["id"])
            os.kill(pid, signal.SIGKILL)
            self.assertEqual(shown["status"], "streaming", f"the reply ended before the kill (seed {seed})")

            app.restart()
            app.open_conversation(conversation, 60)
            back = app.wait_until(lambda: next((m for m in app.messages() if m["id"] == reply["id"]), None), 30,
                                  f"the killed reply {reply['id']} is not in its chat")
            status, kept = self.kept(reply["id"])
            self.assertEqual((status, back["status"]), ("interrupted", "interrupted"))
            seen, saved, drawn = words(shown["text"]), words(kept), words(back["text"])
            self.assertTrue(seen, f"no word shown: {shown['text']!r}")
            report.append(f"{len(shown['text'])} characters shown ({chars} + {pause:.2f} s), {len(kept)} kept")
            # The last word shown may have been cut in the middle.
            for what, kept_words in (("the database", saved), ("the relaunched window", drawn)):
                self.assertEqual(kept_words[:len(seen) - 1], seen[:-1],
                                 f"{what} lost words shown before the kill (seed {seed}):\nshown {shown['text']!r}\nkept {kept!r}")
                self.assertTrue(len(kept_words) >= len(seen) and kept_words[len(seen) - 1].startswith(seen[-1]),
                                f"{what} lost the last word shown (seed {seed}):\nshown {shown['text']!r}\nkept {kept!r}")
        print(f"e2e: kills (seed {seed}): " + "; ".join(report))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by tauri-driver) has left its state behind.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ")[-1][:1] != "Z"


if __name__ == "__main__":
    unittest.main()
