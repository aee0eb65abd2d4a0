"""The requests coding agents send by default, as they sent them (tests/server/agent_requests:
Claude Code 2.1.332's and Codex 0.171.0's first request of a session, recorded by
tests/agents/proxy.py), posted as raw JSON to `confab serve` on the tiny long-context checkpoint
(tests/agents/checkpoint.py): none may be refused. The one change made to them is a small reply
limit, since the random weights never end a reply themselves.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_agent_requests.py -v
"""
from __future__ import annotations

import copy
import json
import pathlib
import shutil
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

from test_openai import ROOT, Server

sys.path.insert(0, str(ROOT / "tests" / "agents"))
import checkpoint  # noqa: E402

RECORDED = pathlib.Path(__file__).parent / "agent_requests"
CLAUDE_CODE = json.loads((RECORDED / "claude-code-2.1.332-first.json").read_text())
CODEX = json.loads((RECORDED / "codex-0.171.0-first.json").read_text())
LIMIT = 4


class AgentRequests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-agent-requests-"))
        cls.server = Server("--model", str(checkpoint.make(cls.folder)))
        cls.root = cls.server.base_url.removesuffix("/v1")

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def post(self, path: str, body: dict) -> tuple[int, str]:
        body = dict(body, model=self.server.model)
        request = urllib.request.Request(
            self.root + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=600) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def events(self, text: str) -> list[dict]:
        return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip() != "[DONE]"]

    def log(self) -> str:
        return (self.server.home / "stderr.log").read_text()

    def test_claude_codes_first_request_is_served(self):
        body = copy.deepcopy(CLAUDE_CODE)
        # What made it a 400: a system message after the user's.
        self.assertEqual([m["role"] for m in body["messages"]], ["user", "system"])
        self.assertEqual(body["thinking"], {"type": "adaptive", "display": "updates"})
        self.assertIn("context_management", body)
        self.assertTrue(any(t.get("defer_loading") for t in body["tools"]))
        body["max_tokens"] = LIMIT
        status, text = self.post("/v1/messages?beta=true", body)
        self.assertEqual(status, 200, text)
        events = self.events(text)
        self.assertEqual(events[0]["type"], "message_start")
        self.assertEqual(events[-1]["type"], "message_stop")
        self.assertIn("context_management", self.log())
        self.assertIn("DeferredToolPlaceholder", self.log())

    def test_thinking_omitted_comes_without_text(self):
        body = copy.deepcopy(CLAUDE_CODE)
        body.update(max_tokens=LIMIT, stream=False, thinking={"type": "adaptive", "display": "omitted"})
        status, text = self.post("/v1/messages", body)
        self.assertEqual(status, 200, text)
        # The template opens a <think> block: the reply is all thinking, sent without its text.
        thinking = [block for block in json.loads(text)["content"] if block["type"] == "thinking"]
        self.assertTrue(thinking, text)
        self.assertEqual(thinking[0]["thinking"], "")

        # Replayed, the block gives the model its reasoning back (its signature carries it): in a
        # tool round trip, whose reasoning the template keeps, the prompt holds it.
        def prompt_tokens(block: dict) -> int:
            replay = copy.deepcopy(CLAUDE_CODE)
            replay.pop("max_tokens", None)
            replay["messages"] += [
                {"role": "assistant", "content": [block, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "hello"}]},
            ]
            status, text = self.post("/v1/messages/count_tokens", replay)
            self.assertEqual(status, 200, text)
            return json.loads(text)["input_tokens"]

        self.assertGreater(prompt_tokens(thinking[0]), prompt_tokens(dict(thinking[0], signature="")))

    def test_anthropic_server_tools_are_left_out_and_named_in_the_log(self):
        body = {
            "model": "m", "max_tokens": LIMIT, "messages": [{"role": "user", "content": "Search."}],
            "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}],
        }
        status, text = self.post("/v1/messages", body)
        self.assertEqual(status, 200, text)
        self.assertIn("server tools", self.log())
        body["tool_choice"] = {"type": "tool", "name": "web_search"}
        status, text = self.post("/v1/messages", body)
        self.assertEqual(status, 400, text)
        self.assertIn("tool_choice", text)

    def test_codexs_first_request_is_served(self):
        body = copy.deepcopy(CODEX)
        kinds = [t["type"] for t in body["tools"]]
        self.assertIn("namespace", kinds)
        self.assertIn("web_search", kinds)
        self.assertNotIn("max_output_tokens", body)
        body["max_output_tokens"] = LIMIT
        status, text = self.post("/v1/responses", body)
        self.assertEqual(status, 200, text)
        events = self.events(text)
        self.assertIn(events[-1]["type"], ("response.completed", "response.incomplete"))
        response = events[-1]["response"]
        self.assertIn("web_search", response["metadata"]["confab_tools_left_out"])
        self.assertIn("tools left out of the prompt", self.log())

    def test_a_grouped_call_goes_back_and_forth_by_its_groups_name(self):
        group = next(t for t in CODEX["tools"] if t["type"] == "namespace")
        function = group["tools"][0]
        body = {
            "model": "m", "stream": False, "store": False, "max_output_tokens": 64,
            "tools": [group], "tool_choice": {"type": "function", "name": function["name"], "namespace": group["name"]},
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]}],
        }
        status, text = self.post("/v1/responses", body)
        self.assertEqual(status, 200, text)
        calls = [item for item in json.loads(text)["output"] if item["type"] == "function_call"]
        if calls:  # the grammar forces the call; a long argument may not end within the limit
            self.assertEqual((calls[0]["name"], calls[0]["namespace"]), (function["name"], group["name"]))
        # The call as Codex sends it back, with its namespace, and its output.
        call = {"type": "function_call", "call_id": "call_1", "name": function["name"], "namespace": group["name"], "arguments": "{}"}
        body.update(
            tool_choice="auto", max_output_tokens=LIMIT,
            input=body["input"] + [call, {"type": "function_call_output", "call_id": "call_1", "output": "done"}],
        )
        status, text = self.post("/v1/responses", body)
        self.assertEqual(status, 200, text)
        body["tool_choice"] = {"type": "web_search"}
        body["tools"] = [group, {"type": "web_search"}]
        status, text = self.post("/v1/responses", body)
        self.assertEqual(status, 400, text)

    def test_a_later_system_message_joins_the_system_prompt_where_the_template_raises(self):
        # Qwen3.5's template raises "System message must be at the beginning."
        body = {
            "model": "m", "system": "Be brief.",
            "messages": [{"role": "user", "content": "Hi"}, {"role": "system", "content": "Now in Paris."}],
        }
        status, text = self.post("/v1/messages/count_tokens", body)
        self.assertEqual(status, 200, text)
        joined = json.loads(text)["input_tokens"]
        body["system"] = "Be brief.\n\nNow in Paris."
        body["messages"] = body["messages"][:1]
        status, text = self.post("/v1/messages/count_tokens", body)
        self.assertEqual(json.loads(text)["input_tokens"], joined)


if __name__ == "__main__":
    unittest.main()
