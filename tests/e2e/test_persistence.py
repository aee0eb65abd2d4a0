"""What survives a restart (same CONFAB_HOME): conversations, messages, settings, search; a reply
cut off by a killed app comes back as interrupted; a chat's prefix cache outlives quitting."""
import os
import re
import signal
import unittest

from harness import AppTestCase

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
