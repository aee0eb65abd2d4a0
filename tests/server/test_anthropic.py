"""`confab serve`'s Messages API driven by the real `anthropic` Python client (pinned in
scripts/setup.sh), in the style of test_openai.py, whose Server it reuses.

On the default model (SmolLM2, whose template has no tools: the engine teaches it the fallback
`<tool_call>` format in the system prompt) and on the tiny Gemma 4 fixture (which reads
images). Replies are a few tokens: what is checked is the API. Every error must come in
Anthropic's shape, and the server must still answer after each.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_anthropic.py -v
"""
from __future__ import annotations

import base64
import json
import unittest
import urllib.error
import urllib.request

import anthropic

from test_openai import GEMMA4, KEY, Server, default_model

# The SDK no longer has sampling arguments; the server still reads them from the body.
GREEDY = {"temperature": 0}
WEATHER = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


class MessagesTest(unittest.TestCase):
    server: Server
    client: anthropic.Anthropic
    key = "unused"

    @classmethod
    def start(cls, *args: str):
        cls.server = Server(*args)
        # The SDK adds /v1/messages itself.
        cls.root = cls.server.base_url.removesuffix("/v1")
        cls.client = anthropic.Anthropic(base_url=cls.root, api_key=cls.key, max_retries=0, timeout=120)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def create(self, content, **kwargs):
        kwargs.setdefault("max_tokens", 4)
        kwargs.setdefault("messages", [{"role": "user", "content": content}])
        return self.client.messages.create(model=self.server.model, extra_body=GREEDY, **kwargs)

    def assert_error(self, error: anthropic.APIStatusError, status: int, kind: str, mentions: str | None = None):
        self.assertEqual(error.status_code, status)
        body = error.response.json()
        self.assertEqual(set(body), {"type", "error"})
        self.assertEqual(body["type"], "error")
        self.assertEqual(set(body["error"]), {"type", "message"})
        self.assertEqual(body["error"]["type"], kind)
        if mentions is not None:
            self.assertIn(mentions, body["error"]["message"])

    def assert_still_serving(self):
        reply = self.create("Hi", max_tokens=1)
        self.assertEqual(reply.usage.output_tokens, 1)


class SmolLM2(MessagesTest):
    key = KEY

    @classmethod
    def setUpClass(cls):
        model = default_model()
        if not model.is_file():
            raise unittest.SkipTest(f"the default model is not installed at {model}; run scripts/setup.sh")
        cls.start("--model", str(model), "--api-key", KEY, "--max-body-mib", "1")

    def test_a_plain_message(self):
        reply = self.create("Name a colour.", max_tokens=6)
        self.assertTrue(reply.id.startswith("msg_"))
        self.assertEqual((reply.type, reply.role, reply.model), ("message", "assistant", self.server.model))
        self.assertEqual([block.type for block in reply.content], ["text"])
        self.assertTrue(reply.content[0].text)
        self.assertIn(reply.stop_reason, ("end_turn", "max_tokens"))
        self.assertIsNone(reply.stop_sequence)
        self.assertLessEqual(reply.usage.output_tokens, 6)
        self.assertGreater(reply.usage.input_tokens + reply.usage.cache_read_input_tokens, 0)
        self.assertEqual(reply.usage.cache_creation_input_tokens, 0)

    def test_streaming_is_the_event_sequence_and_says_what_the_whole_reply_says(self):
        ask = dict(system="Answer in one word.", max_tokens=6)
        whole = self.create("Name a colour.", **ask)
        events = list(self.create("Name a colour.", stream=True, **ask))
        types = [event.type for event in events]  # the SDK drops `ping`
        self.assertEqual(types[0], "message_start")
        self.assertEqual(types[1], "content_block_start")
        self.assertEqual(set(types[2:-3]), {"content_block_delta"})
        self.assertEqual(types[-3:], ["content_block_stop", "message_delta", "message_stop"])
        self.assertEqual(events[0].message.content, [])
        self.assertIsNone(events[0].message.stop_reason)
        self.assertEqual(events[1].content_block.type, "text")
        text = "".join(event.delta.text for event in events if event.type == "content_block_delta")
        self.assertEqual(text, whole.content[0].text, "greedy: the stream says what the whole answer said")
        self.assertEqual(events[-2].delta.stop_reason, whole.stop_reason)
        self.assertEqual(events[-2].usage.output_tokens, whole.usage.output_tokens)
        # The SDK's own accumulator reads the same message out of the events.
        with self.client.messages.stream(model=self.server.model, messages=[{"role": "user", "content": "Name a colour."}], extra_body=GREEDY, **ask) as stream:
            final = stream.get_final_message()
        self.assertEqual(final.content[0].text, whole.content[0].text)
        prompt = whole.usage.input_tokens + whole.usage.cache_read_input_tokens
        self.assertEqual(final.usage.input_tokens + final.usage.cache_read_input_tokens, prompt)

    def test_a_tool_use_and_tool_result_round_trip(self):
        question = {"role": "user", "content": "What is the weather in Paris?"}
        first = self.create(None, messages=[question], tools=[WEATHER], tool_choice={"type": "tool", "name": "get_weather"}, max_tokens=80)
        calls = [block for block in first.content if block.type == "tool_use"]
        self.assertEqual(len(calls), 1, first.content)
        self.assertTrue(calls[0].id.startswith("toolu_"))
        self.assertEqual(calls[0].name, "get_weather")
        self.assertIsInstance(calls[0].input, dict)
        self.assertEqual(first.stop_reason, "tool_use")
        # Streamed, the call is a tool_use block whose input comes as input_json_delta.
        forced = dict(messages=[question], tools=[WEATHER], tool_choice={"type": "tool", "name": "get_weather"}, max_tokens=80)
        with self.client.messages.stream(model=self.server.model, extra_body=GREEDY, **forced) as stream:
            streamed = stream.get_final_message()
        streamed_calls = [block for block in streamed.content if block.type == "tool_use"]
        self.assertEqual([(c.name, c.input) for c in streamed_calls], [(calls[0].name, calls[0].input)])
        self.assertEqual(streamed.stop_reason, "tool_use")
        result = {"type": "tool_result", "tool_use_id": calls[0].id, "content": "18 C and sunny."}
        second = self.create(
            None, messages=[question, {"role": "assistant", "content": first.content}, {"role": "user", "content": [result]}],
            tools=[WEATHER], max_tokens=4,
        )
        self.assertEqual(second.role, "assistant")
        self.assertTrue(second.content)
        self.assertIn(second.stop_reason, ("end_turn", "max_tokens", "tool_use"))

    def test_count_tokens_is_the_prompt_a_reply_reads(self):
        ask = dict(system="Be brief.", messages=[{"role": "user", "content": "What is the weather in Oslo?"}], tools=[WEATHER])
        counted = self.client.messages.count_tokens(model=self.server.model, **ask)
        reply = self.client.messages.create(model=self.server.model, max_tokens=1, extra_body=GREEDY, **ask)
        # Anthropic's input tokens exclude those read from the cache; together they are the prompt.
        self.assertEqual(counted.input_tokens, reply.usage.input_tokens + reply.usage.cache_read_input_tokens)
        without_tools = self.client.messages.count_tokens(model=self.server.model, system="Be brief.", messages=ask["messages"])
        self.assertLess(without_tools.input_tokens, counted.input_tokens, "the tools are part of the prompt")

    def test_a_repeated_long_system_prompt_is_read_from_the_cache(self):
        system = "You are a terse assistant for a bicycle shop. " * 20
        ask = lambda q: self.create(q, system=system, max_tokens=1)
        ask("Do you sell bells?")
        second = ask("Do you sell lights?")
        self.assertGreater(second.usage.cache_read_input_tokens, 150)
        self.assertGreater(second.usage.input_tokens, 0, "the new question is computed")

    def test_stop_sequences_are_reported(self):
        free = self.create("List three fruits.", max_tokens=8).content[0].text
        words = free.split()
        self.assertGreaterEqual(len(words), 2, free)
        stopped = self.create("List three fruits.", max_tokens=8, stop_sequences=[words[1]])
        self.assertEqual(stopped.content[0].text if stopped.content else "", free[: free.index(words[1])])
        self.assertEqual((stopped.stop_reason, stopped.stop_sequence), ("stop_sequence", words[1]))

    def test_the_stop_sequence_that_matched_is_named_among_several(self):
        free = self.create("List three fruits.", max_tokens=8).content[0].text
        words = free.split()
        self.assertGreaterEqual(len(words), 3, free)
        # Listed after ones that match later or never: the earliest match ends the reply.
        stops = ["never-appears", words[2], words[1]]
        expected = min((free.index(s), i, s) for i, s in enumerate(stops) if s in free)[2]
        stopped = self.create("List three fruits.", max_tokens=8, stop_sequences=stops)
        self.assertEqual(stopped.content[0].text if stopped.content else "", free[: free.index(expected)])
        self.assertEqual((stopped.stop_reason, stopped.stop_sequence), ("stop_sequence", expected))
        events = list(self.create("List three fruits.", max_tokens=8, stop_sequences=stops, stream=True))
        self.assertEqual(events[-2].type, "message_delta")
        self.assertEqual((events[-2].delta.stop_reason, events[-2].delta.stop_sequence), ("stop_sequence", expected))

    def test_a_tool_result_that_answers_no_call(self):
        with self.assertRaises(anthropic.BadRequestError) as caught:
            self.create([{"type": "tool_result", "tool_use_id": "toolu_nope", "content": "18 C"}], tools=[WEATHER])
        self.assert_error(caught.exception, 400, "invalid_request_error", "toolu_nope")
        self.assert_still_serving()

    def test_an_unknown_tool_in_tool_choice(self):
        with self.assertRaises(anthropic.BadRequestError) as caught:
            self.create("Hi", tools=[WEATHER], tool_choice={"type": "tool", "name": "get_stock_price"})
        self.assert_error(caught.exception, 400, "invalid_request_error", "get_stock_price")
        self.assert_still_serving()

    def test_malformed_content_blocks(self):
        for content in ([{"type": "text"}], [{"type": "hologram", "data": "x"}], [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]):
            with self.subTest(content=content), self.assertRaises(anthropic.BadRequestError) as caught:
                self.create(content)
            self.assert_error(caught.exception, 400, "invalid_request_error", "messages[0].content[0]")
        self.assertIn("does not download", caught.exception.response.json()["error"]["message"])
        self.assert_still_serving()

    def test_missing_max_tokens(self):
        # The SDK requires max_tokens, so the request goes without it.
        request = urllib.request.Request(
            self.root + "/v1/messages", data=json.dumps({"model": self.server.model, "messages": [{"role": "user", "content": "Hi"}]}).encode(),
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"},
        )
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        self.assertEqual(caught.exception.code, 400)
        body = json.load(caught.exception)
        self.assertEqual(body["type"], "error")
        self.assertEqual(body["error"]["type"], "invalid_request_error")
        self.assertIn("max_tokens", body["error"]["message"])
        self.assert_still_serving()

    def test_a_body_that_is_not_json(self):
        request = urllib.request.Request(
            self.root + "/v1/messages", data=b'{"model": "x", "messages": [', headers={"Authorization": f"Bearer {KEY}", "content-type": "application/json"},
        )
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        self.assertEqual(caught.exception.code, 400)
        self.assertEqual(json.load(caught.exception)["error"]["type"], "invalid_request_error")
        self.assert_still_serving()

    def test_an_oversized_body_and_a_wrong_method(self):
        with self.assertRaises(anthropic.APIStatusError) as caught:
            self.create("x" * ((1 << 20) + 1000))
        self.assert_error(caught.exception, 413, "request_too_large")
        request = urllib.request.Request(self.root + "/v1/messages", headers={"x-api-key": KEY})
        with self.assertRaises(urllib.error.HTTPError) as wrong_method:
            urllib.request.urlopen(request, timeout=30)
        self.assertEqual(wrong_method.exception.code, 405)
        self.assertEqual(json.load(wrong_method.exception)["type"], "error")
        self.assert_still_serving()

    def test_a_wrong_key(self):
        other = anthropic.Anthropic(base_url=self.root, api_key="wrong", max_retries=0)
        with self.assertRaises(anthropic.AuthenticationError) as caught:
            other.messages.create(model=self.server.model, max_tokens=1, messages=[{"role": "user", "content": "Hi"}])
        self.assert_error(caught.exception, 401, "authentication_error", "x-api-key")
        with self.assertRaises(anthropic.AuthenticationError):
            other.messages.count_tokens(model=self.server.model, messages=[{"role": "user", "content": "Hi"}])
        self.assert_still_serving()

    def test_an_unknown_model(self):
        with self.assertRaises(anthropic.NotFoundError) as caught:
            self.client.messages.create(model="claude-sonnet-4-5", max_tokens=1, messages=[{"role": "user", "content": "Hi"}])
        self.assert_error(caught.exception, 404, "not_found_error", self.server.model)
        self.assert_still_serving()


class TinyGemma4(MessagesTest):
    """The tiny random Gemma 4 reads images; its words are noise, its token counts are not."""

    @classmethod
    def setUpClass(cls):
        cls.start("--model", str(GEMMA4))

    def test_an_image(self):
        png = base64.b64encode((GEMMA4 / "media" / "gradient.png").read_bytes()).decode()
        image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
        text_only = self.create("What is this?", max_tokens=2)
        with_image = self.create([image, {"type": "text", "text": "What is this?"}], max_tokens=2)
        self.assertEqual(with_image.usage.output_tokens, 2)
        prompt = lambda reply: reply.usage.input_tokens + reply.usage.cache_read_input_tokens
        # The image's soft tokens (63 for this fixture, see media_reference.json) and its markers.
        self.assertGreaterEqual(prompt(with_image) - prompt(text_only), 63)
        counted = self.client.messages.count_tokens(model=self.server.model, messages=[{"role": "user", "content": [image, {"type": "text", "text": "What is this?"}]}])
        self.assertEqual(counted.input_tokens, prompt(with_image))


if __name__ == "__main__":
    unittest.main()
