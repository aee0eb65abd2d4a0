"""One chat turn, four front doors, one prompt: the same turn (a system prompt, tools, thinking
off, an image and a document) sent through Chat Completions, Messages, Responses and `confab
chat` renders the same prompt, because each door only translates its shape into the chat-turn
layer's `ChatTurn` (crates/turn).

The witness is the engine's prefix cache, which is keyed by the prompt's token ids and its
media's content hashes: after the first door's request, each other door's request is served
from the cache to the last token (as the first door's repeat is). A prompt that differed by
one id, or an image hashed otherwise, would miss from there on. The CLI runs in a process of
its own: its prompt's length must be the same.

The model is the tiny Qwen3-VL fixture (it reads images) with a template that reads tools and
`enable_thinking`, written here.
Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_turn_identity.py -v
"""
from __future__ import annotations

import base64
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import unittest
import urllib.error
import urllib.request

from test_openai import CONFAB, ROOT, Server

FIXTURE = ROOT / "tests" / "reference" / "fixtures" / "tiny" / "qwen3_vl"
# Qwen3's way with tools and thinking, over the fixture's image placeholders (the app's
# side of this test, tests/e2e/test_turn_identity.py, serves the same).
TEMPLATE = (pathlib.Path(__file__).parent / "turn_identity_template.jinja").read_text()
SYSTEM = "You answer in one word."
QUESTION = "What colour is the note about?"
NOTE = "# Note\n\nThe shed is painted green.\n"
TOOL = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def post(url: str, body: dict, model: str) -> dict:
    body = dict(body, model=model)
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json", "x-api-key": "k"})
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{url}: {error.code} {error.read().decode()}") from None


class OneTurnFourDoors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = pathlib.Path(tempfile.mkdtemp(prefix="confab-turn-identity-"))
        cls.model = cls.folder / "qwen3_vl"
        shutil.copytree(FIXTURE, cls.model)
        (cls.model / "chat_template.jinja").write_text(TEMPLATE)
        cls.image = FIXTURE / "media" / "tall.png"
        cls.note = cls.folder / "note.md"
        cls.note.write_text(NOTE)
        cls.server = Server("--model", str(cls.model))
        cls.root = cls.server.base_url.removesuffix("/v1")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def image_b64(self) -> str:
        return base64.b64encode(self.image.read_bytes()).decode()

    def chat_completions(self) -> tuple[int, int]:
        body = {
            "max_tokens": 1, "temperature": 0, "reasoning_effort": "none",
            "tools": [{"type": "function", "function": TOOL}],
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": [
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{self.image_b64()}"}},
                    {"type": "file", "file": {"filename": "note.md", "file_data": "data:text/markdown;base64," + base64.b64encode(NOTE.encode()).decode()}},
                    {"type": "text", "text": QUESTION},
                ]},
            ],
        }
        usage = post(f"{self.root}/v1/chat/completions", body, self.server.model)["usage"]
        return usage["prompt_tokens"], usage.get("prompt_tokens_details", {}).get("cached_tokens", 0)

    def messages(self) -> tuple[int, int]:
        body = {
            "max_tokens": 1, "temperature": 0, "thinking": {"type": "disabled"}, "system": SYSTEM,
            "tools": [{"name": TOOL["name"], "description": TOOL["description"], "input_schema": TOOL["parameters"]}],
            "messages": [{"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": self.image_b64()}},
                {"type": "document", "title": "note.md", "source": {"type": "text", "media_type": "text/plain", "data": NOTE}},
                {"type": "text", "text": QUESTION},
            ]}],
        }
        usage = post(f"{self.root}/v1/messages", body, self.server.model)["usage"]
        cached = usage.get("cache_read_input_tokens", 0)
        return usage["input_tokens"] + cached, cached

    def responses(self) -> tuple[int, int]:
        body = {
            "max_output_tokens": 1, "temperature": 0, "reasoning": {"effort": "none"}, "instructions": SYSTEM, "store": False,
            "tools": [{"type": "function", **TOOL}],
            "input": [{"role": "user", "content": [
                {"type": "input_image", "image_url": f"data:image/png;base64,{self.image_b64()}"},
                {"type": "input_file", "filename": "note.md", "file_data": "data:text/markdown;base64," + base64.b64encode(NOTE.encode()).decode()},
                {"type": "input_text", "text": QUESTION},
            ]}],
        }
        usage = post(f"{self.root}/v1/responses", body, self.server.model)["usage"]
        return usage["input_tokens"], usage.get("input_tokens_details", {}).get("cached_tokens", 0)

    def cli(self) -> int:
        tools = self.folder / "tools.json"
        tools.write_text(json.dumps([{"type": "function", "function": TOOL}]))
        run = subprocess.run(
            [str(CONFAB), "chat", "--model", str(self.model), "--system", SYSTEM, "--image", str(self.image),
             "--document", str(self.note), "--tools", str(tools), "--thinking", "off", "--max-tokens", "1",
             "--temperature", "0", "--stats", "--prompt", QUESTION],
            capture_output=True, text=True, timeout=300, env=dict(os.environ, CONFAB_HOME=str(self.folder / "cli-home")),
        )
        self.assertEqual(run.returncode, 0, run.stderr)
        match = re.search(r"\[(\d+) prompt \((\d+) cached\)", run.stderr)
        self.assertIsNotNone(match, run.stderr)
        return int(match.group(1))

    def test_the_same_turn_is_the_same_prompt_through_every_door(self):
        prompt, _ = self.chat_completions()
        again, whole = self.chat_completions()
        self.assertEqual(again, prompt)
        self.assertGreater(whole, prompt // 2, "a repeated prompt is served from the cache")
        for door, (tokens, cached) in [("Messages", self.messages()), ("Responses", self.responses())]:
            self.assertEqual(tokens, prompt, f"{door}'s prompt has another length")
            self.assertEqual(cached, whole, f"{door}'s prompt differs from Chat Completions' after token {cached}")
        self.assertEqual(self.cli(), prompt, "confab chat's prompt has another length")


if __name__ == "__main__":
    unittest.main()
