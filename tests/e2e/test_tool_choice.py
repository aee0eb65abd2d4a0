"""A required tool call in the real window, with the local default model (SmolLM2): Settings ›
Tools › When tools are on › Always call a tool makes each new reply start with a call, held by
the model's call grammar as the server holds `tool_choice: "required"`, so even a 135M model
calls a tool with arguments that fit its schema. The tools are the test MCP server's
(tests/mcp/test_server.py), added in Settings › Tools; the call is denied, and the model answers."""
import json
import sys
import unittest

from harness import ROOT, AppTestCase

TEST_SERVER = ROOT / "tests" / "mcp" / "test_server.py"


class RequiredToolCall(AppTestCase):
    @classmethod
    def setUpClass(cls):
        if not TEST_SERVER.is_file():
            raise unittest.SkipTest(f"no {TEST_SERVER}")
        super().setUpClass()

    def field(self, testid: str):
        el = self.app.wait_for(testid)
        self.app.js("arguments[0].scrollIntoView({block: 'center'})", el)
        return el

    def put(self, el, text: str):
        """Types `text` at once, as a paste does."""
        prototype = "HTMLTextAreaElement" if el.tag_name.lower() == "textarea" else "HTMLInputElement"
        self.app.js(f"Object.getOwnPropertyDescriptor({prototype}.prototype, 'value').set.call(arguments[0], arguments[1]);"
                    "arguments[0].dispatchEvent(new Event('input', { bubbles: true }));", el, text)

    def ask(self, text: str) -> dict:
        self.app.new_chat()
        self.app.paste(text)
        before = {m["id"] for m in self.app.messages()}
        self.app.click("send-button")
        return self.app.wait_new_reply(before)[1]

    def test_01_always_call_a_tool(self):
        app = self.app
        app.wait_model_ready()
        app.open_settings()
        self.field("tool-server-add").click()
        app.fill(self.field("tool-server-name"), "testtools")
        self.put(self.field("tool-server-command"), sys.executable)
        self.put(self.field("tool-server-args"), str(TEST_SERVER))
        self.field("tool-server-save").click()
        app.wait_until(lambda: next((el for el in app.all("tool-server-item")
                                     if "testtools" in app.text(el) and el.get_attribute("data-state") == "ready"), None),
                       60, "the test tool server is not ready")
        app.close_settings()
        app.set_settings(max_tokens=96, seed=7)
        app.set_settings(tool_use="required")

        reply = self.ask("Hello! How are you today?")
        card = app.wait_until(lambda: next(iter(app.all("tool-card", within=app.message_el(reply["id"]))), None), 120,
                              "a reply that must call a tool shows no tool card")
        label = app.text(card)
        arguments = app.text(app.one("tool-card-args", within=card))
        app.screenshot("tool-required-card", card, pad=16)
        tools = ("echo", "big", "slow", "crash", "fail", "image", "pid", "env", "grow")
        self.assertTrue(any(tool in label for tool in tools), f"the call names none of the server's tools: {label!r}")
        # The grammar held the arguments to the tool's schema: a JSON object (the card shows
        # anything else as "not json ...").
        self.assertIsInstance(json.loads(arguments), dict, arguments)
        self.assertEqual(card.get_attribute("data-status"), "awaiting")
        app.click_in_message(reply["id"], "tool-deny")
        done = app.wait_reply(reply["id"], 180)
        self.assertEqual(done["status"], "complete", done)

        # Back to the model's choice: the next reply may answer in text at once.
        app.set_settings(tool_use="auto")
        reply = self.ask("Say hi.")
        done = app.wait_reply(reply["id"], 180)
        self.assertEqual(done["status"], "complete", done)


if __name__ == "__main__":
    unittest.main()
