"""The app killed (SIGKILL) while it writes its store, at random moments, through tests/e2e's
harness (Xvfb + tauri-driver; skipped without them): a reply being streamed and saved piece by
piece, a tool round (the scripted provider calling the MCP test server's `slow` tool), a
document being indexed (a 300-page PDF and the tiny embedding model), a settings save.
After each kill, before the relaunch, a copy of the SQLite file (with its WAL) passes
`PRAGMA integrity_check`, the foreign keys and both full-text indexes check, and nothing
half-written is there to be read as whole (`check_store`: reply pieces only of a reply still
streaming, document indexes whole, attachments' files whole, settings parse); the relaunched
app starts with no reply left streaming and no tool call left running, and: every word the
window showed of the killed reply is kept (now `interrupted`); a tool call is done with its
whole result or interrupted without one; a document index is there whole or not at all; the
settings are the old ones or the new, never a mix, and the window shows what the store holds.

Run under Xvfb with the e2e venv (scripts/setup.sh makes it):
    xvfb-run -a .deps/e2e/venv/bin/python -m unittest discover -s tests/crashes
Kills per kind: CONFAB_CRASH_KILLS / 5, at least 1 (each one is a relaunch through WebDriver)."""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import signal
import sqlite3
import sys
import tempfile
import threading
import time
import unittest

from common import KILLS, ROOT, killed, rng, survived

sys.path.insert(0, str(ROOT / "tests" / "e2e"))
try:
    from harness import AppTestCase, seconds
    from scripted_provider import ScriptedProvider
    from test_persistence import SHOWN_AT_JS, SHOWN_NOW_JS, words
except ImportError as e:  # no Selenium: not the e2e venv
    AppTestCase = None
    MISSING = str(e)

APP_KILLS = max(1, KILLS // 5)
DOCUMENTS = ROOT / "tests" / "reference" / "fixtures" / "documents"
EMBEDDER = ROOT / "tests" / "reference" / "fixtures" / "tiny" / "qwen3_embedding"
TEST_SERVER = ROOT / "tests" / "mcp" / "test_server.py"


def check_store(database: pathlib.Path, after_relaunch: bool) -> list[str]:
    """Problems in a copy of the store (the file and its WAL, as the kill left them; the copy
    is opened so the app's own recovery runs on the original). `after_relaunch`: the app has
    started since, and its start-up recovery must have ended every reply it found streaming."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / database.name
        for suffix in ("", "-wal"):
            if pathlib.Path(f"{database}{suffix}").exists():
                shutil.copy(f"{database}{suffix}", f"{copy}{suffix}")
        db = sqlite3.connect(copy)
        try:
            problems += [f"integrity_check: {r[0]}" for r in db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            problems += [f"foreign key: {r}" for r in db.execute("PRAGMA foreign_key_check")]
            for fts in ("messages_fts", "document_passages_fts"):
                try:
                    db.execute(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')")
                except sqlite3.DatabaseError as e:
                    problems.append(f"{fts}: {e}")
            # Settings: every value parses (what the app reads at start).
            for key, value in db.execute("SELECT key, value FROM settings"):
                try:
                    json.loads(value)
                except ValueError as e:
                    problems.append(f"setting {key} does not parse: {e}")
            # A reply's pieces belong to a reply still streaming; folded ones are gone.
            problems += [f"reply_chunks of message {m} ({s})" for m, s in db.execute(
                "SELECT DISTINCT c.message_id, m.status FROM reply_chunks c JOIN messages m ON m.id = c.message_id "
                "WHERE m.status <> 'streaming'")]
            # A document index is whole: passages 0..n-1, each vector `dimension` floats.
            for index_id, dimension, count, first, last, bad in db.execute(
                    "SELECT i.id, i.dimension, count(p.id), min(p.ordinal), max(p.ordinal), "
                    "sum(length(p.vector) <> 4 * i.dimension) "
                    "FROM document_indexes i LEFT JOIN document_passages p ON p.index_id = i.id GROUP BY i.id"):
                if count == 0 or first != 0 or last != count - 1 or bad:
                    problems.append(f"document index {index_id}: {count} passages, ordinals {first}..{last}, "
                                    f"{bad} vectors not {dimension} floats")
            # An attachment's row is written after its file is whole and in place.
            for digest, size in db.execute("SELECT hash, size FROM attachments"):
                path = database.parent / "attachments" / digest[:2] / digest[2:]
                if not path.is_file():
                    problems.append(f"attachment {digest} has no file")
                elif path.stat().st_size != size or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
                    problems.append(f"attachment {digest}'s file is not whole")
            if after_relaunch:
                problems += [f"message {m} still streaming after the relaunch" for (m,) in db.execute(
                    "SELECT id FROM messages WHERE status = 'streaming'")]
                problems += [f"tool call {m}/{p} still {s} after the relaunch" for m, p, s in db.execute(
                    "SELECT message_id, position, status FROM tool_calls WHERE status IN ('awaiting', 'running')")]
        finally:
            db.close()
    return problems


if AppTestCase is None:
    class AppKilledWhileWriting(unittest.TestCase):
        def test_skipped(self):
            self.skipTest(f"the e2e venv is needed (scripts/setup.sh): {MISSING}")
else:
    class KillAndRelaunch(AppTestCase):
        @property
        def database(self) -> pathlib.Path:
            return self.app.home / "confab.db"

        def kill_app(self, kind: str, what: str) -> None:
            pid = self.app.app_pid()
            self.assertIsNotNone(pid, "could not find the app's process")
            os.kill(pid, signal.SIGKILL)
            self.after_kill(kind, what)

        def after_kill(self, kind: str, what: str) -> None:
            killed(kind, survived=False)
            self.assertEqual(check_store(self.database, after_relaunch=False), [], f"{kind}, {what}: after the kill")

        def relaunch(self, kind: str, what: str) -> None:
            self.app.restart()
            self.app.wait_for("sidebar", 60)
            if self.with_model:
                self.app.wait_model_ready()
            self.assertEqual(check_store(self.database, after_relaunch=True), [], f"{kind}, {what}: after the relaunch")

    class AppKilledWhileWriting(KillAndRelaunch):
        extra_models = {"qwen3-embedding-tiny": EMBEDDER}

        @classmethod
        def setUpClass(cls):
            super().setUpClass()
            cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-crash-documents-"))
            cls.app.wait_model_ready()

        @classmethod
        def tearDownClass(cls):
            shutil.rmtree(cls.folder, ignore_errors=True)
            super().tearDownClass()

        def test_a_reply_streamed_and_saved(self):
            kind = "reply streamed and saved (app)"
            app, random = self.app, rng(kind)
            app.set_settings(max_tokens=1500)
            report = []
            for k in range(APP_KILLS):
                chars, pause = random.randint(3, 400), random.uniform(0, 0.2)
                app.new_chat()
                _, reply = app.send("Write a very long story about a lighthouse keeper and her cat. Make it ten paragraphs long.")
                app.d.set_script_timeout(seconds(120))
                reached = app.d.execute_async_script(SHOWN_AT_JS, reply["id"], chars)
                self.assertIsNotNone(reached, f"the reply ended before it showed {chars} characters")
                time.sleep(pause)
                conversation = app.current_conversation()
                shown = app.js(SHOWN_NOW_JS, reply["id"])
                self.kill_app(kind, f"kill {k}")
                self.assertEqual(shown["status"], "streaming", "the reply ended before the kill")
                self.relaunch(kind, f"kill {k}")
                app.open_conversation(conversation, 60)
                with sqlite3.connect(self.database) as db:
                    status, kept = db.execute("SELECT status, content FROM messages WHERE id = ?", (int(reply["id"]),)).fetchone()
                self.assertEqual(status, "interrupted")
                seen, saved = words(shown["text"]), words(kept)
                self.assertEqual(saved[:len(seen) - 1], seen[:-1], f"words shown before the kill were lost:\n{shown['text']!r}\n{kept!r}")
                report.append(f"{len(shown['text'])} shown, {len(kept)} kept")
                survived(kind)
            print(f"\n{kind}: " + "; ".join(report), flush=True)

        def test_a_document_index(self):
            kind = "document index (app)"
            app, random = self.app, rng(kind)
            app.set_settings(max_tokens=8, seed=1)
            with open(DOCUMENTS / "expected.json") as f:
                pages = json.load(f)["many_pages.pdf"]["pages"]
            report = []
            for k in range(APP_KILLS):
                # A copy of its own each time: another document (another hash), another index.
                document = self.folder / f"many_pages_{k}.pdf"
                data = (DOCUMENTS / "many_pages.pdf").read_bytes()
                document.write_bytes(data + f"\n% copy {k}\n".encode())
                app.new_chat()
                report_drop = app.drop_files([document], app.one("message-list") or app.one("composer-input"))
                self.assertIn("DATA-GET", report_drop, f"the window never asked for the dropped data: {report_drop}")
                chip = app.wait_for("attachment-chip", 60)
                app.wait_until(lambda: f"{pages} pages" in app.text(chip), 60, lambda: f"the chip: {app.text(chip)!r}")
                app.compose("Which chapter mentions a walnut orchard?")
                app.click("send-button")
                # Killed once the bar reaches a random share of the passages, a moment later;
                # half the kills once it is full, up to 1.5 s later (the index is written, in one
                # transaction, when its last passage is embedded).
                if random.random() < 0.5:
                    share, pause = random.uniform(0.3, 1.0), random.uniform(0, 0.5)
                else:
                    share, pause = 1.0, random.uniform(0, 1.5)
                bar = app.wait_for("index-progress", 120)
                reached = (0, 0)
                while True:
                    try:
                        value, most = int(app.attr(bar, "value") or 0), int(app.attr(bar, "max") or 0)
                    except Exception:  # the bar went: the index is made
                        break
                    reached = (value, most)
                    if most and value >= share * most:
                        break
                    time.sleep(0.05)
                time.sleep(pause)
                self.kill_app(kind, f"kill {k}")
                digest = hashlib.sha256(document.read_bytes()).hexdigest()
                with sqlite3.connect(self.database) as db:
                    made = db.execute("SELECT count(*) FROM document_indexes WHERE hash = ?", (digest,)).fetchone()[0]
                self.relaunch(kind, f"kill {k}")
                report.append(f"bar at {reached[0]}/{reached[1]} + {pause:.2f} s: {'indexed' if made else 'not indexed'}")
                survived(kind)
            print(f"\n{kind}: " + "; ".join(report), flush=True)

        def test_a_settings_save(self):
            kind = "settings save (app)"
            app, random = self.app, rng(kind)
            report = []
            for k in range(APP_KILLS):
                with sqlite3.connect(self.database) as db:
                    row = db.execute("SELECT value FROM settings WHERE key = 'app'").fetchone()
                old = json.loads(row[0]) if row else {}
                new_prompt, new_tokens = f"You are test assistant number {k}.", 100 + k
                app.open_settings()
                app.fill(app.setting("system_prompt"), new_prompt)
                app.fill(app.setting("max_tokens"), str(new_tokens))
                # The save is a few milliseconds of IPC and one SQLite write, quicker than a
                # WebDriver click's round trip: the kill is timed from just before the click.
                pause = random.uniform(0, 0.15)
                pid = app.app_pid()
                self.assertIsNotNone(pid, "could not find the app's process")
                timer = threading.Timer(pause, os.kill, (pid, signal.SIGKILL))
                timer.start()
                try:
                    app.click("settings-save")
                except Exception:  # killed before the click landed
                    pass
                timer.join()
                self.after_kill(kind, f"kill {k}")
                self.relaunch(kind, f"kill {k}")
                with sqlite3.connect(self.database) as db:
                    row = db.execute("SELECT value FROM settings WHERE key = 'app'").fetchone()
                saved = json.loads(row[0]) if row else {}
                pair = (saved.get("system_prompt", ""), saved.get("max_tokens"))
                self.assertIn(pair, [(old.get("system_prompt", ""), old.get("max_tokens")), (new_prompt, new_tokens)],
                              "the settings are neither the old nor the new")
                # The window shows what the store holds.
                app.open_settings()
                self.assertEqual(app.setting("system_prompt").get_attribute("value"), pair[0])
                if pair[1] is not None:
                    self.assertEqual(int(app.setting("max_tokens").get_attribute("value")), pair[1])
                app.close_settings()
                report.append(f"+{pause:.2f} s: {'new' if pair[0] == new_prompt else 'old'}")
                survived(kind)
            print(f"\n{kind}: " + "; ".join(report), flush=True)


    @unittest.skipUnless(TEST_SERVER.is_file(), f"no {TEST_SERVER}")
    class ToolRoundKilled(KillAndRelaunch):
        """A tool round (the scripted provider of tests/e2e calls the MCP test server's `slow`
        tool, allowed always, then answers with its result) killed at a random moment of it."""

        with_model = False

        @classmethod
        def setUpClass(cls):
            cls.provider = ScriptedProvider()
            try:
                super().setUpClass()
            except BaseException:
                cls.provider.stop()
                raise

        @classmethod
        def tearDownClass(cls):
            try:
                super().tearDownClass()
            finally:
                cls.provider.stop()

        def put(self, el, text: str):
            """Types `text` at once, as a paste does (as tests/e2e/test_tools.py does)."""
            prototype = "HTMLTextAreaElement" if el.tag_name.lower() == "textarea" else "HTMLInputElement"
            self.app.js(f"Object.getOwnPropertyDescriptor({prototype}.prototype, 'value').set.call(arguments[0], arguments[1]);"
                        "arguments[0].dispatchEvent(new Event('input', { bubbles: true }));", el, text)

        def field(self, testid: str, extra: str = ""):
            el = self.app.wait_for(testid, extra=extra)
            self.app.js("arguments[0].scrollIntoView({block: 'center'})", el)
            return el

        def setup_tools(self) -> None:
            app, field = self.app, self.field
            app.open_settings()
            field("tool-server-add").click()
            field("tool-server-form")
            app.fill(field("tool-server-name"), "testtools")
            self.put(field("tool-server-command"), sys.executable)
            self.put(field("tool-server-args"), str(TEST_SERVER))
            field("tool-server-save").click()
            app.wait_until(lambda: any("testtools" in app.text(el) and el.get_attribute("data-state") == "ready"
                                       for el in app.all("tool-server-item")), 60, "the test tool server is not ready")
            app.close_settings()
            app.open_settings()
            field("provider-add").click()
            app.fill(field("provider-name"), "Scripted")
            app.fill(field("provider-url"), self.provider.base_url)
            field("provider-save").click()
            app.wait_for("provider-model", 60, extra=f'[data-model="{self.provider.model}"]')
            app.close_settings()
            app.click("model-picker")
            app.wait_for("remote-model-item", 30, extra=f'[data-model="{self.provider.model}"]').click()
            app.wait_for("remote-badge", 30)

        def ask(self, text: str) -> dict:
            app = self.app
            app.new_chat()
            app.paste(text)
            before = {m["id"] for m in app.messages()}
            app.click("send-button")
            return app.wait_new_reply(before)[1]

        def test_a_tool_round(self):
            kind = "tool round (app)"
            app, random = self.app, rng(kind)
            self.setup_tools()
            # The first call is allowed always: the later ones run without a click, so a kill's
            # moment is drawn over the round itself (the call, its result saved, the answer).
            request = 'CALL slow {"seconds": 0.3}'
            reply = self.ask(request)
            card = app.wait_for("tool-card", 60, extra='[data-status="awaiting"]')
            app.one("tool-allow-always", within=card).click()
            started = time.monotonic()
            app.wait_until(lambda: next((m for m in app.messages() if m["id"] == reply["id"] and m["status"] != "streaming"),
                                        None), 60, "the first tool round did not end")
            whole_round = time.monotonic() - started
            report = []
            for k in range(APP_KILLS):
                reply = self.ask(request)
                pause = random.uniform(0, whole_round * 1.2)
                time.sleep(pause)
                self.kill_app(kind, f"kill {k}")
                self.relaunch(kind, f"kill {k}")
                with sqlite3.connect(self.database) as db:
                    status, content = db.execute("SELECT status, content FROM messages WHERE id = ?",
                                                 (int(reply["id"]),)).fetchone()
                    calls = db.execute("SELECT status, result_text FROM tool_calls WHERE message_id = ?",
                                       (int(reply["id"]),)).fetchall()
                self.assertIn(status, ("interrupted", "complete"), content)
                for call_status, result in calls:
                    # A call is done with its whole result, or was cut off without one.
                    self.assertIn((call_status, result), [("done", "slept 0.3 s"), ("interrupted", None)], calls)
                if status == "complete":
                    self.assertIn("Tool said: slept 0.3 s", content)
                report.append(f"+{pause:.2f} s: reply {status}, calls {[c[0] for c in calls]}")
                survived(kind)
            print(f"\n{kind}: " + "; ".join(report), flush=True)


if __name__ == "__main__":
    unittest.main()
