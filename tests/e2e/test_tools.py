"""Tools in the app: real MCP servers added in Settings › Tools (the stdio server written for the
tests, tests/mcp/test_server.py, with a secret in its environment; the official filesystem
server from npm, imported as an `mcpServers` JSON), then chats where a model calls them: the
permission card, allow once and always, deny, a server that crashes mid-call, a result of
several MB, a hung tool (timeout, then Stop), markup in arguments and results kept as text,
kill -9 while a call waits, and the secret nowhere in the database, the log or the page.

The model is a scripted provider on loopback (scripted_provider.py): it calls the tools the
user's message names, then repeats what the tools said, so each test knows what the model
should do; the tool calls go through the app exactly as with any provider."""
import json
import os
import pathlib
import shutil
import signal
import sys
import tempfile
import time
import unittest

from harness import ROOT, AppTestCase, seconds
from scripted_provider import ScriptedProvider

TEST_SERVER = ROOT / "tests" / "mcp" / "test_server.py"
FILESYSTEM_SERVER = ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "mcp-server-filesystem"
EVERYTHING_SERVER = ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "mcp-server-everything"
TOKEN = "mcp-e2e-secret-token-0c51f9"
PROVIDER = "Scripted"
# Markup that would run if a tool's arguments or results reached the page as HTML.
PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=2</script>",
    '<svg onload="window.__pwned=3"></svg>',
    '[link](javascript:window.__pwned=4)',
    '<iframe srcdoc="<script>parent.__pwned=5</script>"></iframe>',
]


class ToolsInTheApp(AppTestCase):
    with_model = False
    # The filesystem server's tool that reads a file (its name changed between versions).
    file_tool: str | None = None

    @classmethod
    def setUpClass(cls):
        if not TEST_SERVER.is_file():
            raise unittest.SkipTest(f"no {TEST_SERVER}")
        cls.provider = ScriptedProvider()
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-e2e-files-"))
        (cls.folder / "hello.txt").write_text("The hidden word is marmalade.\n")
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
            shutil.rmtree(cls.folder, ignore_errors=True)

    # -- helpers --------------------------------------------------------------------------------

    def field(self, testid: str, extra: str = ""):
        el = self.app.wait_for(testid, extra=extra)
        self.app.js("arguments[0].scrollIntoView({block: 'center'})", el)
        return el

    def server_item(self, name: str):
        return self.app.wait_until(
            lambda: next((el for el in self.app.all("tool-server-item") if name in self.app.text(el)), None),
            30, f"no tool server {name} in Settings")

    def wait_server_state(self, name: str, state: str, timeout: float = 60):
        def reached():
            item = self.server_item(name)
            return item if item.get_attribute("data-state") == state else None

        return self.app.wait_until(reached, timeout, lambda: f"{name} is {self.server_item(name).get_attribute('data-state')}, not {state}")

    def card(self, reply_id: str, position: int = 0, status: str | None = None, timeout: float = 60):
        def found():
            for card in self.app.all("tool-card", within=self.app.message_el(reply_id)):
                if card.get_attribute("data-position") == str(position):
                    if status is None or card.get_attribute("data-status") == status:
                        return card
            return None

        return self.app.wait_until(found, timeout, lambda: f"no tool card {position} ({status}) in reply {reply_id}")

    def put(self, el, text: str):
        """Types `text` into a field at once, as a paste does (Selenium would upload a path
        that names an existing file instead of typing it)."""
        prototype = "HTMLTextAreaElement" if el.tag_name.lower() == "textarea" else "HTMLInputElement"
        self.app.js(f"Object.getOwnPropertyDescriptor({prototype}.prototype, 'value').set.call(arguments[0], arguments[1]);"
                    "arguments[0].dispatchEvent(new Event('input', { bubbles: true }));", el, text)

    def ask(self, text: str) -> dict:
        """Sends `text` in a new chat; returns the reply as it started."""
        self.app.close_settings()
        self.app.new_chat()
        self.app.paste(text)
        before = {m["id"] for m in self.app.messages()}
        self.app.click("send-button")
        return self.app.wait_new_reply(before)[1]

    def click(self, card, testid: str):
        button = self.app.one(testid, within=card)
        self.assertIsNotNone(button, f"no {testid} on the card")
        self.app.js("arguments[0].scrollIntoView({block: 'center'})", button)
        button.click()

    # -- tests ----------------------------------------------------------------------------------

    def test_01_servers_in_settings(self):
        app = self.app
        app.open_settings()
        self.field("tool-server-add").click()
        self.field("tool-server-form")
        app.fill(self.field("tool-server-name"), "testtools")
        self.put(self.field("tool-server-command"), sys.executable)
        self.put(self.field("tool-server-args"), str(TEST_SERVER))
        self.field("tool-secret-add").click()
        app.fill(self.field("tool-secret-name"), "TEST_SERVER_TOKEN")
        app.fill(self.field("tool-secret-value"), TOKEN)
        self.field("tool-server-save").click()
        item = self.wait_server_state("testtools", "ready")
        names = [el.get_attribute("data-name") for el in app.all("tool-item", within=item)]
        for tool in ("echo", "slow", "crash", "big"):
            self.assertIn(tool, names)

        if FILESYSTEM_SERVER.exists():
            mcp_json = {"mcpServers": {"files": {"command": str(FILESYSTEM_SERVER), "args": [str(self.folder)]}}}
            self.put(self.field("tool-import-json"), json.dumps(mcp_json))
            self.field("tool-import").click()
            files = self.wait_server_state("files", "off")
            self.click(files, "tool-server-switch")
            files = self.wait_server_state("files", "ready")
            names = [el.get_attribute("data-name") for el in app.all("tool-item", within=files)]
            type(self).file_tool = next((n for n in ("read_text_file", "read_file") if n in names), None)
            self.assertIsNotNone(self.file_tool, f"the filesystem server lists no file reading tool: {names}")
        app.screenshot("settings-tools")
        self.assertTrue(TOKEN not in app.d.page_source, "the secret is in the page")
        app.close_settings()

        # The provider whose scripted model calls the tools.
        app.open_settings()
        self.field("provider-add").click()
        app.fill(self.field("provider-name"), PROVIDER)
        app.fill(self.field("provider-url"), self.provider.base_url)
        self.field("provider-save").click()
        app.wait_for("provider-model", 60, extra=f'[data-model="{self.provider.model}"]')
        app.close_settings()
        app.click("model-picker")
        app.wait_for("remote-model-item", 30, extra=f'[data-model="{self.provider.model}"]').click()
        app.wait_for("remote-badge", 30)
        app.set_settings(tool_timeout_s=4)

    def test_02_a_call_allowed_once_runs_and_the_model_goes_on(self):
        app = self.app
        if self.file_tool:
            request = f'CALL {self.file_tool} {json.dumps({"path": str(self.folder / "hello.txt")})}'
        else:
            request = 'CALL echo {"text": "The hidden word is marmalade."}'
        reply = self.ask(request)
        card = self.card(reply["id"], 0, "awaiting")
        self.assertIn("hello.txt" if self.file_tool else "marmalade", app.text(app.one("tool-card-args", within=card)))
        app.screenshot("tool-card-awaiting", card, pad=16)
        self.click(card, "tool-allow-once")
        done = app.wait_reply(reply["id"], 60)
        self.assertEqual(done["status"], "complete", done)
        self.assertIn("Tool said: The hidden word is marmalade.", done["text"])
        card = self.card(reply["id"], 0, "done")
        result = app.one("tool-card-result", within=card)
        self.assertIsNotNone(result)
        self.assertFalse(app.js("return arguments[0].open === true", result), "the result starts collapsed")
        # The tools went to the provider, and the result came back to the model as a tool message.
        sent = self.provider.requests[-1]
        self.assertTrue(sent.get("tools"), "no tools in the request")
        self.assertEqual([m["role"] for m in sent["messages"]][-2:], ["assistant", "tool"])
        app.screenshot("tool-card-done", app.message_el(reply["id"]), pad=16)

    def test_03_deny(self):
        app = self.app
        reply = self.ask('CALL echo {"text": "never"}')
        self.click(self.card(reply["id"], 0, "awaiting"), "tool-deny")
        done = app.wait_reply(reply["id"], 60)
        self.assertEqual(done["status"], "complete", done)
        self.assertIn("did not allow", done["text"])
        self.card(reply["id"], 0, "denied")

    def test_04_a_server_that_crashes_mid_call(self):
        app = self.app
        reply = self.ask("CALL crash {}")
        self.click(self.card(reply["id"], 0, "awaiting"), "tool-allow-once")
        done = app.wait_reply(reply["id"], 60)
        self.assertEqual(done["status"], "complete", done)
        card = self.card(reply["id"], 0, "failed")
        self.assertRegex(app.text(card).lower(), r"exit|crash|closed")
        self.assertIn("Tool said: Error", done["text"])
        # The chat goes on; Settings shows the failure and restarts the server.
        follow = self.ask("Are you still there?")
        self.assertEqual(app.wait_reply(follow["id"], 60)["status"], "complete")
        app.open_settings()
        try:
            item = self.wait_server_state("testtools", "failed")
            self.assertIsNotNone(app.one("tool-server-stderr", within=item))
            self.click(item, "tool-server-restart")
            self.wait_server_state("testtools", "ready")
        finally:
            app.close_settings()

    def test_05_a_result_of_several_megabytes_is_truncated_with_a_note(self):
        app = self.app
        reply = self.ask('CALL big {"mb": 5}')
        self.click(self.card(reply["id"], 0, "awaiting"), "tool-allow-once")
        done = app.wait_reply(reply["id"], 90)
        self.assertEqual(done["status"], "complete", done)
        card = self.card(reply["id"], 0, "done")
        result = app.one("tool-card-result", within=card)
        text = app.js("return arguments[0].textContent", result)
        self.assertLess(len(text), 1_000_000)
        self.assertIn("truncated", text)

    def test_06_a_hung_tool_times_out_and_stop_cancels_one(self):
        app = self.app
        reply = self.ask('CALL slow {"seconds": 120}')
        self.click(self.card(reply["id"], 0, "awaiting"), "tool-allow-once")
        done = app.wait_reply(reply["id"], 60)
        card = self.card(reply["id"], 0, "failed")
        self.assertIn("time", app.text(card).lower())
        self.assertEqual(done["status"], "complete", done)

        app.set_settings(tool_timeout_s=600)
        try:
            reply = self.ask('CALL slow {"seconds": 120}')
            self.click(self.card(reply["id"], 0, "awaiting"), "tool-allow-once")
            self.card(reply["id"], 0, "running")
            app.click("stop-button")
            done = app.wait_reply(reply["id"], 30)
            self.assertEqual(done["status"], "stopped", done)
            self.card(reply["id"], 0, "cancelled")
        finally:
            app.set_settings(tool_timeout_s=4)

    def test_07_markup_in_arguments_and_results_stays_text(self):
        app = self.app
        title = app.d.title
        for payload in PAYLOADS:
            reply = self.ask(f"CALL echo {json.dumps({'text': payload})}")
            card = self.card(reply["id"], 0, "awaiting")
            self.click(card, "tool-allow-once")
            app.wait_reply(reply["id"], 60)
            card = self.card(reply["id"], 0, "done")
            app.js("arguments[0].open = true", app.one("tool-card-result", within=card))
            self.assertIn(payload, app.js("return arguments[0].textContent", card))
            # (The card's own icon is an <svg> without handlers.)
            injected = "img[src='x'], script, iframe, [onerror], [onload], a[href^='javascript']"
            self.assertEqual(app.js("return arguments[0].querySelectorAll(arguments[1]).length", card, injected), 0, payload)
        self.assertIsNone(app.js("return window.__pwned === undefined ? null : window.__pwned"))
        self.assertEqual(app.d.title, title)

    def test_08_always_allow_runs_later_calls_without_asking(self):
        app = self.app
        reply = self.ask('CALL echo {"text": "first"}')
        self.click(self.card(reply["id"], 0, "awaiting"), "tool-allow-always")
        app.wait_reply(reply["id"], 60)
        reply = self.ask('CALL echo {"text": "second"}')
        done = app.wait_reply(reply["id"], 60)
        self.assertIn("second", done["text"])
        self.card(reply["id"], 0, "done")
        app.open_settings()
        try:
            item = self.server_item("testtools")
            echo = app.one("tool-item", extra='[data-name="echo"]', within=item)
            self.assertIsNotNone(app.one("tool-always-revoke", within=echo), "Settings shows echo is allowed always")
        finally:
            app.close_settings()

    def test_09_kill_during_a_tool_round_loses_nothing(self):
        app = self.app
        reply = self.ask('CALL slow {"seconds": 1}')
        self.card(reply["id"], 0, "awaiting")
        conversation = app.current_conversation()
        os.kill(app.app_pid(), signal.SIGKILL)
        time.sleep(seconds(1))
        app.restart()
        app.open_conversation(conversation)
        back = app.wait_until(lambda: next((m for m in app.messages() if m["id"] == reply["id"]), None), 30, "the reply is gone")
        self.assertEqual(back["status"], "interrupted", back)
        card = self.card(reply["id"], 0, "interrupted")
        self.assertIn("seconds", app.text(app.one("tool-card-args", within=card)))

    def test_10_the_secret_is_not_in_the_database_the_log_or_the_page(self):
        app = self.app
        database = b"".join(p.read_bytes() for p in app.home.glob("confab.db*"))
        self.assertTrue(database)
        self.assertTrue(TOKEN.encode() not in database, "the secret is in the SQLite file")
        self.assertTrue(b"testtools" in database, "the server itself is saved there")
        log = (app.home / "logs" / "confab.log").read_text(errors="replace")
        self.assertTrue(TOKEN not in log, "the secret is in the log")
        app.open_settings()
        try:
            self.click(self.server_item("testtools"), "tool-server-edit")
            self.field("tool-server-form")
            self.assertTrue(TOKEN not in app.d.page_source, "the secret is in the page")
            values = app.js("return [...document.querySelectorAll('input, textarea')].map(e => e.value)")
            self.assertNotIn(TOKEN, values)
        finally:
            app.close_settings()

    def test_11_regenerate_asks_again_in_a_new_branch(self):
        app = self.app
        # slow, not echo: test_08 allowed echo always, and this call must ask.
        first = self.ask('CALL slow {"seconds": 0.1}')
        self.click(self.card(first["id"], 0, "awaiting"), "tool-allow-once")
        self.assertIn("slept 0.1 s", app.wait_reply(first["id"], 60)["text"])
        before = {m["id"] for m in app.messages()}
        app.click_in_message(first["id"], "regenerate-button")
        _, second = app.wait_new_reply(before)
        self.click(self.card(second["id"], 0, "awaiting"), "tool-deny")
        done = app.wait_reply(second["id"], 60)
        self.assertIn("did not allow", done["text"])
        app.wait_until(lambda: app.position(second["id"]) == "2/2", 10, lambda: f"position {app.position(second['id'])!r}")
        # The first branch keeps its call and result.
        app.click_in_message(second["id"], "sibling-prev")
        self.card(first["id"], 0, "done")

    def test_12_an_image_from_the_everything_server_shows_in_its_card(self):
        if not EVERYTHING_SERVER.exists():
            self.skipTest(f"no {EVERYTHING_SERVER}: scripts/setup.sh installs it")
        app = self.app
        app.open_settings()
        try:
            mcp_json = {"mcpServers": {"everything": {"command": str(EVERYTHING_SERVER), "args": ["stdio"]}}}
            self.put(self.field("tool-import-json"), json.dumps(mcp_json))
            self.field("tool-import").click()
            self.click(self.wait_server_state("everything", "off"), "tool-server-switch")
            item = self.wait_server_state("everything", "ready")
            names = [el.get_attribute("data-name") for el in app.all("tool-item", within=item)]
            self.assertIn("get-tiny-image", names)
        finally:
            app.close_settings()
        reply = self.ask("CALL get-tiny-image {}")
        self.click(self.card(reply["id"], 0, "awaiting"), "tool-allow-once")
        self.assertEqual(app.wait_reply(reply["id"], 60)["status"], "complete")
        card = self.card(reply["id"], 0, "done")
        app.js("arguments[0].open = true", app.one("tool-card-result", within=card))
        image = app.wait_until(lambda: app.one("tool-card-image", within=card), 10, "no image in the card")
        app.wait_until(lambda: app.js("return arguments[0].complete && arguments[0].naturalWidth > 0", image), 10,
                       "the image did not load")
