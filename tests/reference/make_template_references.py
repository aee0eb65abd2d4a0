#!/usr/bin/env python3
"""What transformers renders with the real Qwen3.5 and Gemma 4 chat templates, for conversations with
tools, calls (with reasoning), tool results and the generation prompt with thinking on and off.

    .deps/bench/venv/bin/python tests/reference/make_template_references.py

Needs transformers (5.25 in the bench venv) with its tokenizers and jinja2; no torch. Works offline:
the templates are the committed copies in fixtures/templates/ (see the README there), the special
tokens come from the tiny checkpoints' tokenizers (fixtures/tiny/qwen3_5, fixtures/tiny/gemma4).
Writes fixtures/templates/reference.json: for each case, the template file, the variables it was
rendered with (messages in the shape the engine gives templates: content a string, calls with their
arguments as an object), and the text `tokenizer.apply_chat_template(..., tokenize=False)` gives.
The engine's tests render the same cases with its own template engine and must give the same text.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "fixtures", "templates")
TINY = os.path.join(HERE, "fixtures", "tiny")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "days": {"type": "integer", "description": "How many days ahead."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Searches the web.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filters": {"type": "object", "properties": {"site": {"type": "string"}, "max": {"type": "number"}}},
                "exact": {"type": "boolean"},
            },
            "required": ["query"],
        },
    },
}
TOOLS = [WEATHER, SEARCH]

ASK = {"role": "user", "content": "What is the weather in Paris, and any events?"}
SYSTEM = {"role": "system", "content": "You are terse."}
CALLS = {
    "role": "assistant",
    "content": "",
    "reasoning_content": "I need the weather and a search.",
    "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
        {
            "id": "call_2",
            "type": "function",
            "function": {
                "name": "search",
                "arguments": {"query": "Paris events", "tags": ["music", "art"], "filters": {"site": "example.org", "max": 2.5}, "exact": True},
            },
        },
    ],
}
RESULTS = [
    {"role": "tool", "content": "Sunny, 21 C.", "tool_call_id": "call_1"},
    {"role": "tool", "content": "{\"events\": [\"Jazz at nine\"]}", "tool_call_id": "call_2", "name": "search"},
]
ANSWER = {"role": "assistant", "content": "Sunny, 21 C; jazz at nine.", "reasoning_content": "Both came back."}

# (name, messages, tools, add_generation_prompt, switches)
CASES = [
    ("plain", [ASK], None, True, {}),
    ("plain_thinking_off", [ASK], None, True, {"enable_thinking": False}),
    ("tools", [SYSTEM, ASK], TOOLS, True, {}),
    ("tools_thinking_on", [SYSTEM, ASK], TOOLS, True, {"enable_thinking": True}),
    ("tools_thinking_off", [SYSTEM, ASK], TOOLS, True, {"enable_thinking": False}),
    # A call the model made, not answered yet (the round trip reads the assistant's part back).
    ("calls", [ASK, CALLS], TOOLS, False, {}),
    ("calls_with_text", [ASK, {**CALLS, "content": "Let me look."}], TOOLS, False, {}),
    ("results", [ASK, CALLS, *RESULTS], TOOLS, True, {}),
    ("results_thinking_on", [ASK, CALLS, *RESULTS], TOOLS, True, {"enable_thinking": True}),
    ("results_thinking_off", [ASK, CALLS, *RESULTS], TOOLS, True, {"enable_thinking": False}),
    ("next_question", [SYSTEM, ASK, CALLS, *RESULTS, ANSWER, {"role": "user", "content": "And tomorrow?"}], TOOLS, True, {}),
]

MODELS = [
    # (template file, tiny checkpoint whose tokenizer gives the special tokens)
    ("Qwen3.5-4B.jinja", "qwen3_5"),
    ("google-gemma-4-31B-it.jinja", "gemma4"),
]


def main() -> None:
    from transformers import AutoTokenizer, __version__

    out = {"producer": f"tests/reference/make_template_references.py, transformers {__version__}", "tools": TOOLS, "templates": {}}
    for file, tiny in MODELS:
        with open(os.path.join(TEMPLATES, file)) as f:
            template = f.read()
        tokenizer = AutoTokenizer.from_pretrained(os.path.join(TINY, tiny))
        cases = []
        for name, messages, tools, generation, switches in CASES:
            text = tokenizer.apply_chat_template(
                messages, tools=tools, add_generation_prompt=generation, tokenize=False, chat_template=template, **switches
            )
            cases.append({"name": name, "messages": messages, "tools": tools is not None, "add_generation_prompt": generation, "switches": switches, "text": text})
        tokens = {name: getattr(tokenizer, name) for name in ("bos_token", "eos_token") if getattr(tokenizer, name)}
        out["templates"][file] = {"tokens": tokens, "cases": cases}
    path = os.path.join(TEMPLATES, "reference.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
