"""`confab serve` on the tiny Qwen3.5 and Gemma 4 checkpoints wearing their models' real chat templates
(tests/reference/fixtures/templates: Qwen3.5's XML parameter calls and <think> reasoning, Gemma 4's own
call notation and thought channel), driven by the real `openai` and `anthropic` clients.

The weights are random, so their words are noise: what is checked is what the templates and the
server make of them. Calls the request requires (`tool_choice` required or a named function) are
held to a grammar of the model's own call syntax, so even these models make calls whose arguments
validate against the tool's schema. The schemas bound every value (a length, an enum, a range), so
that a reply ends within a few dozen tokens.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_templates.py -v
"""
from __future__ import annotations

import json
import pathlib
import shutil
import tempfile
import unittest

import anthropic
import jsonschema
import openai

from test_openai import ROOT, Server, ServerTest

TINY = ROOT / "tests" / "reference" / "fixtures" / "tiny"
TEMPLATES = ROOT / "tests" / "reference" / "fixtures" / "templates"

WEATHER_PARAMETERS = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1, "maxLength": 12},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit"],
}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": WEATHER_PARAMETERS}}
SEARCH_PARAMETERS = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 10}, "exact": {"type": "boolean"}},
    "required": ["query", "exact"],
}
SEARCH = {"type": "function", "function": {"name": "search", "description": "Searches the web.", "parameters": SEARCH_PARAMETERS}}
SCHEMAS = {"get_weather": WEATHER_PARAMETERS, "search": SEARCH_PARAMETERS}
ASK = "What is the weather in Paris?"
# Enough for a whole call of the tools above in the tiny vocabularies (a few characters a token).
CALL_TOKENS = 400


def wearing(tiny: str, template: str) -> pathlib.Path:
    """A copy of a tiny checkpoint in a temporary folder, its chat template replaced by a real one."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix=f"confab-{tiny}-template-"))
    shutil.copytree(TINY / tiny, folder / "model", ignore=shutil.ignore_patterns("*reference*", "media*"))
    # chat_template.jinja comes before tokenizer_config.json's template.
    shutil.copyfile(TEMPLATES / template, folder / "model" / "chat_template.jinja")
    # The real tool prompts run to a thousand tokens in these tiny vocabularies (a few characters
    # a token), past the checkpoints' 1024: a longer context changes nothing else.
    config_path = folder / "model" / "config.json"
    config = json.loads(config_path.read_text())
    for part in (config, config.get("text_config", {})):
        if "max_position_embeddings" in part:
            part["max_position_embeddings"] = 4096
    config_path.write_text(json.dumps(config))
    return folder


class TemplateTests:
    """The same checks for each model; the subclasses start its server."""

    tiny: str
    template: str
    folder: pathlib.Path

    @classmethod
    def setUpClass(cls):
        cls.folder = wearing(cls.tiny, cls.template)
        cls.server = Server("--model", str(cls.folder / "model"))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="unused", max_retries=0, timeout=120)
        cls.messages_client = anthropic.Anthropic(base_url=cls.server.base_url.removesuffix("/v1"), api_key="unused", max_retries=0, timeout=120)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def assert_valid_call(self, name: str, arguments: str | dict):
        self.assertIn(name, SCHEMAS)
        arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        jsonschema.validate(arguments, SCHEMAS[name])

    def test_auto_tools_are_offered(self):
        plain = self.chat(ASK, max_tokens=3)
        reply = self.chat(ASK, max_tokens=3, tools=[WEATHER, SEARCH], tool_choice="auto")
        self.assertIn(reply.choices[0].finish_reason, ("stop", "length", "tool_calls"))
        # The template wrote the tools into the prompt.
        self.assertGreater(reply.usage.prompt_tokens, plain.usage.prompt_tokens + 40)

    def test_required_calls_a_tool_with_valid_arguments(self):
        reply = self.chat(ASK, max_tokens=CALL_TOKENS, tools=[WEATHER, SEARCH], tool_choice="required")
        calls = reply.choices[0].message.tool_calls
        self.assertTrue(calls, reply.choices[0].message.content)
        self.assertEqual(reply.choices[0].finish_reason, "tool_calls")
        for call in calls:
            self.assert_valid_call(call.function.name, call.function.arguments)

    def test_a_named_tool_is_called_whole_and_streamed_alike(self):
        choice = {"type": "function", "function": {"name": "search"}}
        whole = self.chat(ASK, max_tokens=CALL_TOKENS, tools=[WEATHER, SEARCH], tool_choice=choice)
        calls = whole.choices[0].message.tool_calls
        self.assertEqual([c.function.name for c in calls or []], ["search"], whole.choices[0].message.content)
        self.assert_valid_call("search", calls[0].function.arguments)

        chunks = list(self.chat(ASK, max_tokens=CALL_TOKENS, tools=[WEATHER, SEARCH], tool_choice=choice, stream=True))
        deltas = [call for c in chunks if c.choices for call in (c.choices[0].delta.tool_calls or [])]
        self.assertEqual({d.index for d in deltas}, {0})
        self.assertEqual([d.function.name for d in deltas if d.function.name], ["search"])
        streamed = "".join(d.function.arguments or "" for d in deltas)
        self.assertEqual(json.loads(streamed), json.loads(calls[0].function.arguments), "greedy: the stream makes the same call")
        finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        self.assertEqual(finals, ["tool_calls"])

    def test_a_tool_result_goes_back_through_the_template(self):
        choice = {"type": "function", "function": {"name": "get_weather"}}
        first = self.chat(ASK, max_tokens=CALL_TOKENS, tools=[WEATHER], tool_choice=choice)
        calls = first.choices[0].message.tool_calls
        self.assertTrue(calls, first.choices[0].message.content)
        self.assert_valid_call("get_weather", calls[0].function.arguments)
        messages = [
            {"role": "user", "content": ASK},
            {"role": "assistant", "content": None, "tool_calls": [calls[0].model_dump()]},
            {"role": "tool", "tool_call_id": calls[0].id, "content": "Sunny, 21 degrees."},
        ]
        answer = self.client.chat.completions.create(model=self.server.model, messages=messages, tools=[WEATHER], max_tokens=4, temperature=0)
        self.assertGreater(answer.usage.prompt_tokens, first.usage.prompt_tokens)
        self.assertIn(answer.choices[0].finish_reason, ("stop", "length", "tool_calls"))
        self.assertGreater(answer.usage.completion_tokens, 0)

    def test_a_tool_use_and_tool_result_round_trip_in_the_messages_api(self):
        tool = {"name": "get_weather", "description": "The weather in a city.", "input_schema": WEATHER_PARAMETERS}
        question = {"role": "user", "content": ASK}
        first = self.messages_client.messages.create(
            model=self.server.model, messages=[question], tools=[tool], tool_choice={"type": "tool", "name": "get_weather"},
            max_tokens=CALL_TOKENS, extra_body={"temperature": 0},
        )
        uses = [block for block in first.content if block.type == "tool_use"]
        self.assertEqual(len(uses), 1, first.content)
        self.assertEqual(first.stop_reason, "tool_use")
        self.assert_valid_call(uses[0].name, uses[0].input)
        result = {"type": "tool_result", "tool_use_id": uses[0].id, "content": "18 C and sunny."}
        second = self.messages_client.messages.create(
            model=self.server.model, messages=[question, {"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}],
            tools=[tool], max_tokens=4, extra_body={"temperature": 0},
        )
        self.assertIn(second.stop_reason, ("end_turn", "max_tokens", "tool_use"))
        self.assertGreater(second.usage.input_tokens + second.usage.cache_read_input_tokens, first.usage.input_tokens + first.usage.cache_read_input_tokens)


class TinyQwen3_5(TemplateTests, ServerTest):
    """Qwen3.5's template: calls as <function=...><parameter=...>, reasoning in <think>, on unless
    `enable_thinking` is false."""

    tiny, template = "qwen3_5", "Qwen3.5-4B.jinja"

    def test_reasoning_is_apart_and_can_be_turned_off(self):
        thinking = self.chat("Hi", max_tokens=6)
        message = thinking.choices[0].message
        self.assertTrue(message.reasoning_content, "the generation prompt opened <think>")
        streamed = list(self.chat("Hi", max_tokens=6, stream=True))
        reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in streamed if c.choices)
        self.assertEqual(reasoning, message.reasoning_content)

        off = self.chat("Hi", max_tokens=6, extra_body={"chat_template_kwargs": {"enable_thinking": False}})
        self.assertFalse(getattr(off.choices[0].message, "reasoning_content", None))
        self.assertTrue(off.choices[0].message.content)
        # `<think>\n\n</think>\n\n` closes the block in the prompt itself.
        self.assertGreater(off.usage.prompt_tokens, thinking.usage.prompt_tokens)

    def test_a_required_call_follows_closed_reasoning(self):
        # Thinking on: the prompt's open <think> is closed for the call, which is still whole.
        reply = self.chat(ASK, max_tokens=CALL_TOKENS, tools=[WEATHER], tool_choice="required")
        self.assertFalse(getattr(reply.choices[0].message, "reasoning_content", None))
        self.assert_valid_call("get_weather", reply.choices[0].message.tool_calls[0].function.arguments)


class TinyGemma4(TemplateTests, ServerTest):
    """Gemma 4's template: calls as <|tool_call>call:name{...}<tool_call|>, results inside the model's
    turn, thinking off unless `enable_thinking` is true."""

    tiny, template = "gemma4", "google-gemma-4-31B-it.jinja"

    def test_thinking_is_off_unless_asked_for(self):
        off = self.chat("Hi", max_tokens=6)
        # The prompt closes an empty thought channel: nothing the model writes is reasoning.
        self.assertFalse(getattr(off.choices[0].message, "reasoning_content", None))
        on = self.chat("Hi", max_tokens=6, extra_body={"chat_template_kwargs": {"enable_thinking": True}})
        self.assertIn(on.choices[0].finish_reason, ("stop", "length"))
        # <|think|> in a system turn, and no closed channel after the generation prompt.
        self.assertNotEqual(on.usage.prompt_tokens, off.usage.prompt_tokens)
        streamed = list(self.chat("Hi", max_tokens=6, stream=True, extra_body={"chat_template_kwargs": {"enable_thinking": True}}))
        text = "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
        reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in streamed if c.choices)
        self.assertEqual((text, reasoning), (on.choices[0].message.content or "", getattr(on.choices[0].message, "reasoning_content", None) or ""))



if __name__ == "__main__":
    unittest.main()
