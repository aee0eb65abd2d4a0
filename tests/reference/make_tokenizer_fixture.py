"""Reference token ids and chat-template text for the default model's GGUF tokenizer.

Run with the reference venv (transformers reads the GGUF offline, no Hugging Face hub):

    /opt/confab-ref/bin/python tests/reference/make_tokenizer_fixture.py [path/to/model.gguf]

Writes tests/reference/fixtures/smollm2_tokenizer.json, which crates/engine/tests/text_smollm2.rs
checks our tokenizer and chat template against.

One correction: the GGUF says `tokenizer.ggml.pre = smollm`, which transformers' GGUF loader does not
know, so it splits text like plain GPT-2. SmolLM2's own tokenizer.json (and llama.cpp's `smollm`)
first isolate every numeral (`Digits(individual_digits=True)`), which differs on text like "①②".
We put that pre-tokenizer back, and record transformers' uncorrected ids where they differ.
"""

import hashlib
import json
import os
import sys
from pathlib import Path

from tokenizers import pre_tokenizers
from transformers import AutoTokenizer
import transformers

DEFAULT_GGUF = Path.home() / ".local/share/confab/models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"
OUT = Path(__file__).parent / "fixtures" / "smollm2_tokenizer.json"

TEXTS = [
    "Hello world",
    "Hello, world! How are you today?",
    "  leading and trailing spaces  ",
    " ",
    "",
    "The year 2024 had 366 days; pi ≈ 3.14159.",
    "12345678901234567890",
    "Other numerals: ⅓ ½ ①②③ Ⅻ",
    "email: someone@example.com, url: https://huggingface.co/HuggingFaceTB",
    "Don't won't it's we'll they're I'm you'd",
    "!!!???...---***",
    "Emoji: 🦀🎉👩‍👩‍👧 and ❤️",
    "CJK: 日本語のテキスト、中文文本，한국어 텍스트",
    "Accents: café, naïve, Zürich, São Paulo, Ångström",
    "Русский текст и ελληνικά; مرحبا بالعالم",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    'fn main() {\n\tprintln!("{}", 1 + 2);\n}',
    "Multiple\n\nnewlines\n\n\nand\ttabs\r\n",
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
    "Mixed <|endoftext|> special in the middle",
]

CONVERSATIONS = [
    [
        {"role": "user", "content": "Hi! What's 2+2?"},
        {"role": "assistant", "content": "2 + 2 = 4."},
        {"role": "user", "content": "And in Japanese? 日本語で 🦀"},
    ],
    [
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": "Name a prime."},
        {"role": "assistant", "content": "7"},
    ],
]


# A template in the style of tool-calling chat templates, written to exercise what transformers'
# Jinja environment offers: trim_blocks/lstrip_blocks, namespace, loop controls, slicing, Python
# str/dict methods, tojson (plain and indented), raise_exception, the special-token variables.
TOOLS_TEMPLATE = """{{- bos_token }}
{%- set ns = namespace(last_user=-1) %}
{%- for m in messages %}
  {%- if m.role == 'user' %}{% set ns.last_user = loop.index0 %}{% endif %}
{%- endfor %}
{%- if tools %}
system
{%- if messages[0].role == 'system' %}
{{ messages[0].content.strip() }}
{%- endif %}

You can call these functions:
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
Arguments of {{ tools[0].function.name }}:
{% for name, spec in tools[0].function.parameters.properties.items() %}
- {{ name }}: {{ spec.type }}{% if spec.description is defined %} ({{ spec.description }}){% endif %}

{% endfor %}
Schema, indented:
{{ tools[0].function.parameters | tojson(indent=2) }}
<|im_end|>
{% elif messages[0].role == 'system' %}
system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for m in messages %}
  {%- if m.role == 'system' and loop.first %}{% continue %}{% endif %}
  {%- if m.role not in ['user', 'assistant', 'tool', 'system'] %}
    {{- raise_exception('Unknown role: ' + m.role + '. Use user, assistant, tool or system.') }}
  {%- endif %}
<|im_start|>{{ m.role }}
{% if m.role == 'assistant' and '</think>' in m.content %}
{{ m.content.split('</think>')[-1].lstrip('\n') }}
{%- else %}
{{ m.content }}
{%- endif %}
{% if loop.index0 == ns.last_user %} (latest){% endif %}<|im_end|>
{% endfor %}
{%- for m in messages[::-1] %}{% if loop.first %}[last: {{ m.role | upper }}]{% break %}{% endif %}{% endfor %}
{%- if add_generation_prompt %}
<|im_start|>assistant
{% endif %}"""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city, in °C",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": 'City name, e.g. "Zürich" <b>'},
                    "days": {"type": "integer"},
                },
                "required": ["city"],
            },
        },
    },
    {"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {}}}},
]

TOOL_CHAT = [
    {"role": "system", "content": "  Be helpful.  "},
    {"role": "user", "content": "Weather in Zürich?"},
    {"role": "assistant", "content": "<think>Call the tool.</think>\n\nLet me check."},
    {"role": "tool", "content": '{"temp": 21}'},
    {"role": "user", "content": "Thanks!"},
]

TEMPLATE_CASES = [
    {"name": "tools", "messages": TOOL_CHAT, "tools": TOOLS},
    {"name": "no tools", "messages": TOOL_CHAT, "tools": None},
    {"name": "raises", "messages": [{"role": "narrator", "content": "Once upon a time"}], "tools": None},
]


def render_templates(tok) -> list:
    cases = []
    for case in TEMPLATE_CASES:
        out = dict(case, add_generation_prompt=True)
        try:
            out["rendered"] = tok.apply_chat_template(
                case["messages"],
                tools=case["tools"],
                chat_template=TOOLS_TEMPLATE,
                tokenize=False,
                add_generation_prompt=True,
            )
        except Exception as error:  # the template's raise_exception
            out["error"] = str(error)
        cases.append(out)
    return cases


def main() -> None:
    gguf = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_GGUF
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    as_loaded = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.backend_tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        ]
    )
    texts = []
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=False)
        case = {
            "text": text,
            "ids": ids,
            "ids_with_special": tok.encode(text, add_special_tokens=True),
            "decoded": tok.decode(ids),
        }
        loaded_ids = as_loaded.encode(text, add_special_tokens=False)
        if loaded_ids != ids:
            case["ids_transformers_gguf_uncorrected"] = loaded_ids
        texts.append(case)
    conversations = []
    for messages in CONVERSATIONS:
        rendered = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        conversations.append(
            {
                "messages": messages,
                "add_generation_prompt": True,
                "rendered": rendered,
                "ids": tok.encode(rendered, add_special_tokens=False),
            }
        )
    fixture = {
        "generator": "tests/reference/make_tokenizer_fixture.py",
        "transformers": transformers.__version__,
        "gguf_file": gguf.name,
        "gguf_sha256": hashlib.sha256(gguf.read_bytes()).hexdigest(),
        "bos_id": tok.bos_token_id,
        "eos_id": tok.eos_token_id,
        "vocab_size": len(tok),
        "special_ids": sorted(set(tok.all_special_ids)),
        "texts": texts,
        "conversations": conversations,
        "tools_template": TOOLS_TEMPLATE,
        "template_cases": render_templates(tok),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
