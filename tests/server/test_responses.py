"""OpenAI's Responses API on `confab serve`, driven by the real `openai` client (pinned in
scripts/setup.sh): whole and streamed responses (the SDK's own stream accumulator checks the
event sequence), function tools, `text.format` with a strict JSON Schema (and the SDK's
`responses.parse`), `previous_response_id` chains kept in the history database across a
restart, retrieve / input_items / delete, input_tokens, reasoning items, and every error in
OpenAI's shape with the server still serving.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -v
"""
from __future__ import annotations

import json
import pathlib
import shutil
import tempfile
import unittest

import jsonschema
import openai
import pydantic

from test_openai import KEY, Server, ServerTest, TinyQwen3Thinking, default_model

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city today.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False},
    "strict": True,
}
CLOCK = {"type": "function", "name": "get_time", "description": "The time now.", "parameters": {"type": "object", "properties": {}, "additionalProperties": False}}
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 20}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


class Person(pydantic.BaseModel):
    name: str
    age: int


class Responses(ServerTest):
    """The default model, SmolLM2-135M-Instruct, with a key; replies of a few tokens."""

    @classmethod
    def setUpClass(cls):
        model = default_model()
        if not model.is_file():
            raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        cls.model_path = model
        cls.home = pathlib.Path(tempfile.mkdtemp(prefix="confab-responses-"))
        cls.server = Server("--model", str(model), "--api-key", KEY, home=cls.home)
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key=KEY, max_retries=0, timeout=120)

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.home, ignore_errors=True)

    def respond(self, input, **kwargs):
        kwargs.setdefault("max_output_tokens", 4)
        kwargs.setdefault("temperature", 0)
        return self.client.responses.create(model=self.server.model, input=input, **kwargs)

    def test_whole_and_streamed_agree(self):
        whole = self.respond("Say hello.", instructions="Be brief.")
        self.assertTrue(whole.id.startswith("resp_"))
        self.assertEqual(whole.object, "response")
        self.assertIn(whole.status, ("completed", "incomplete"))
        self.assertTrue(whole.output_text)
        self.assertEqual(whole.output[0].type, "message")
        self.assertEqual(whole.usage.output_tokens, 4)
        self.assertEqual(whole.usage.total_tokens, whole.usage.input_tokens + 4)
        self.assertEqual(whole.instructions, "Be brief.")

        # The SDK's accumulator refuses an event out of place (an unknown output index, a
        # changed identity, a completion with unfinished items). A reply cut by the limit ends
        # with `response.incomplete`, which its get_final_response does not take.
        with self.client.responses.stream(
            model=self.server.model, input="Say hello.", instructions="Be brief.", max_output_tokens=4, temperature=0
        ) as stream:
            events = list(stream)
        kinds = [event.type for event in events]
        final = events[-1].response
        self.assertEqual(final.output_text, whole.output_text)
        self.assertEqual(kinds[:2], ["response.created", "response.in_progress"])
        self.assertEqual(kinds[-1], f"response.{whole.status}")
        self.assertIn("response.output_text.delta", kinds)
        numbers = [e.sequence_number for e in self.client.responses.create(model=self.server.model, input="Hi", max_output_tokens=2, stream=True)]
        self.assertEqual(numbers, list(range(len(numbers))))

    def test_a_chain_continues_from_the_cache_and_outlives_a_restart(self):
        first = self.respond("My name is Ada.", max_output_tokens=3)
        second = self.respond("What is my name?", previous_response_id=first.id, max_output_tokens=3)
        self.assertEqual(second.previous_response_id, first.id)
        self.assertGreater(second.usage.input_tokens, first.usage.input_tokens + first.usage.output_tokens)
        # Everything the first turn saw (its prompt and reply) comes from the prefix cache.
        self.assertGreaterEqual(second.usage.input_tokens_details.cached_tokens, first.usage.input_tokens)
        counted = self.client.responses.input_tokens.count(model=self.server.model, input="What is my name?", previous_response_id=first.id)
        self.assertEqual(counted.input_tokens, second.usage.input_tokens)

        kept = self.client.responses.retrieve(second.id)
        self.assertEqual((kept.id, kept.output_text), (second.id, second.output_text))
        items = self.client.responses.input_items.list(second.id)
        self.assertEqual([i.type for i in items.data], ["message"])
        self.assertEqual(items.data[0].content[0].text, "What is my name?")

        # Kept in the history database: a new server on the same data folder continues the chain.
        type(self).server.stop()
        type(self).server = Server("--model", str(self.model_path), "--api-key", KEY, home=self.home)
        self.client = type(self).client = openai.OpenAI(base_url=self.server.base_url, api_key=KEY, max_retries=0, timeout=120)
        third = self.respond("And again?", previous_response_id=second.id, max_output_tokens=2)
        self.assertGreater(third.usage.input_tokens, second.usage.input_tokens)

        deleted = self.client.responses.delete(first.id)
        self.assertIsNone(deleted)  # the SDK returns nothing for a 200
        with self.assertRaises(openai.NotFoundError) as caught:
            self.client.responses.retrieve(first.id)
        self.assert_error_shape(caught.exception, 404)
        # A chain with a deleted link cannot be continued, and says which link is gone.
        with self.assertRaises(openai.NotFoundError) as caught:
            self.respond("More?", previous_response_id=third.id)
        self.assert_error_shape(caught.exception, 404, "previous_response_id")
        self.assertIn(first.id, caught.exception.response.json()["error"]["message"])

    def test_store_false_keeps_nothing(self):
        reply = self.respond("Hi", store=False)
        self.assertFalse(reply.store)
        with self.assertRaises(openai.NotFoundError):
            self.client.responses.retrieve(reply.id)

    def test_a_named_function_is_called_and_its_output_answered(self):
        choice = {"type": "function", "name": "get_weather"}
        called = self.respond("What is the weather in Paris?", tools=[WEATHER, CLOCK], tool_choice=choice, max_output_tokens=60)
        calls = [item for item in called.output if item.type == "function_call"]
        self.assertEqual([c.name for c in calls], ["get_weather"])
        self.assertTrue(calls[0].call_id.startswith("call_"))
        jsonschema.validate(json.loads(calls[0].arguments), WEATHER["parameters"])

        with self.client.responses.stream(
            model=self.server.model, input="What is the weather in Paris?", tools=[WEATHER, CLOCK], tool_choice=choice,
            max_output_tokens=60, temperature=0,
        ) as stream:
            kinds = [event.type for event in stream]
            final = stream.get_final_response()
        self.assertIn("response.function_call_arguments.done", kinds)
        streamed = [item for item in final.output if item.type == "function_call"]
        self.assertEqual(json.loads(streamed[0].arguments), json.loads(calls[0].arguments))

        answer = self.respond(
            [{"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny, 21 degrees."}],
            previous_response_id=called.id, tools=[WEATHER, CLOCK],
        )
        self.assertGreater(answer.usage.input_tokens, called.usage.input_tokens)

        # The same conversation sent whole, without the chain, is the same prompt.
        whole = self.respond(
            [
                {"role": "user", "content": "What is the weather in Paris?"},
                {"type": "function_call", "call_id": calls[0].call_id, "name": "get_weather", "arguments": calls[0].arguments},
                {"type": "function_call_output", "call_id": calls[0].call_id, "output": "Sunny, 21 degrees."},
            ],
            tools=[WEATHER, CLOCK], store=False,
        )
        self.assertEqual(whole.usage.input_tokens, answer.usage.input_tokens)

    def test_parallel_calls_and_their_outputs_go_back_through_the_template(self):
        ask = {"role": "user", "content": "Weather in Paris and in Rome, and the time?"}
        calls = [
            {"type": "function_call", "call_id": "call_a", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call", "call_id": "call_b", "name": "get_weather", "arguments": '{"city": "Rome"}'},
            {"type": "function_call", "call_id": "call_c", "name": "get_time", "arguments": "{}"},
        ]
        outputs = [
            {"type": "function_call_output", "call_id": "call_a", "output": "Sunny"},
            {"type": "function_call_output", "call_id": "call_b", "output": "Rain"},
            {"type": "function_call_output", "call_id": "call_c", "output": "12:00"},
        ]
        one = self.respond([ask, calls[0], outputs[0]], tools=[WEATHER, CLOCK], store=False)
        three = self.respond([ask, *calls, *outputs], tools=[WEATHER, CLOCK], store=False)
        self.assertGreater(three.usage.input_tokens, one.usage.input_tokens)
        # Every call needs its output, whatever the number.
        with self.assertRaises(openai.BadRequestError) as caught:
            self.respond([ask, *calls, *outputs[:2]], tools=[WEATHER, CLOCK])
        self.assert_error_shape(caught.exception, 400, "input")
        self.assertIn("call_c", caught.exception.response.json()["error"]["message"])

    def test_required_calls_one_of_the_tools(self):
        reply = self.respond("What time is it?", tools=[WEATHER, CLOCK], tool_choice="required", max_output_tokens=60)
        calls = [item for item in reply.output if item.type == "function_call"]
        self.assertTrue(calls, reply.output_text)
        self.assertIn(calls[0].name, ("get_weather", "get_time"))

    def test_text_format_json_schema_strict(self):
        reply = self.respond(
            "Invent a person.",
            text={"format": {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}},
            max_output_tokens=60,
        )
        jsonschema.validate(json.loads(reply.output_text), PERSON)
        self.assertEqual(reply.text.format.type, "json_schema")
        parsed = self.client.responses.parse(
            model=self.server.model, input="Invent a person.", text_format=Person, max_output_tokens=60, temperature=0
        )
        self.assertIsInstance(parsed.output_parsed, Person)

    def test_a_reply_with_no_limit_ends_where_its_format_does(self):
        reply = self.client.responses.create(
            model=self.server.model, input="Is the sky blue?", temperature=0,
            text={"format": {"type": "json_schema", "name": "answer", "schema": {"type": "string", "enum": ["yes", "no"]}}},
        )
        self.assertEqual(reply.status, "completed")
        self.assertIn(json.loads(reply.output_text), ("yes", "no"))

    def test_bad_requests_are_refused_in_openais_shape(self):
        cases = [
            ({"input": "Hi", "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "array", "uniqueItems": True}}}}, "text.format"),
            ({"input": "Hi", "text": {"format": {"type": "xml"}}}, "text.format"),
            ({"input": "Hi", "tools": [WEATHER], "tool_choice": {"type": "function", "name": "get_time"}}, "tool_choice"),
            # A hosted tool is left out of the prompt; a choice of one is refused.
            ({"input": "Hi", "tools": [{"type": "web_search"}], "tool_choice": {"type": "web_search"}}, "tool_choice"),
            ({"input": "Hi", "tools": [{**CLOCK, "name": f"t{i}"} for i in range(129)]}, "tools"),
            ({"input": [{"type": "function_call_output", "call_id": "call_nope", "output": "42"}]}, "input[0].call_id"),
            ({"input": [{"role": "user", "content": [{"type": "input_text"}]}]}, "input[0].content[0]"),
            ({"input": [{"type": "bogus"}]}, "input[0]"),
            ({"input": []}, "input"),
            ({"input": "Hi", "max_output_tokens": -1}, "max_output_tokens"),
            ({"input": "Hi", "background": True}, "background"),
        ]
        for body, param in cases:
            with self.subTest(param=param), self.assertRaises(openai.BadRequestError) as caught:
                self.client.responses.create(model=self.server.model, **body)
            self.assert_error_shape(caught.exception, 400, param)
        with self.assertRaises(openai.NotFoundError) as caught:
            self.respond("Hi", previous_response_id="resp_does_not_exist")
        self.assert_error_shape(caught.exception, 404, "previous_response_id")
        with self.assertRaises(openai.NotFoundError) as caught:
            self.client.responses.delete("resp_does_not_exist")
        self.assert_error_shape(caught.exception, 404)
        self.assert_still_serving()


class TinyQwen3ReasoningItems(TinyQwen3Thinking):
    """The tiny Qwen3 with a thinking template: its reply opens in a reasoning item, unless
    `reasoning.effort` is none."""

    def test_reasoning_is_an_item_of_its_own(self):
        reply = self.client.responses.create(model=self.server.model, input="Hi", max_output_tokens=6, temperature=0)
        self.assertEqual(reply.output[0].type, "reasoning")
        self.assertTrue(reply.output[0].content[0].text)
        kinds = [e.type for e in self.client.responses.create(model=self.server.model, input="Hi", max_output_tokens=6, temperature=0, stream=True)]
        self.assertIn("response.reasoning_text.delta", kinds)

        off = self.client.responses.create(model=self.server.model, input="Hi", max_output_tokens=6, temperature=0, reasoning={"effort": "none"})
        self.assertEqual([item.type for item in off.output], ["message"])


if __name__ == "__main__":
    unittest.main()
