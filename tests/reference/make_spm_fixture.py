"""A tiny SentencePiece-style (`tokenizer.ggml.model = llama`) GGUF and transformers' ids for it.

Run with the reference venv:

    /opt/confab-ref/bin/python tests/reference/make_spm_fixture.py

Writes tests/reference/fixtures/tiny_spm.gguf (a vocabulary and no weights: byte tokens, the
characters and 1-5 character pieces of a short corpus with seeded random scores, one
user-defined `<think>` token) and tests/reference/fixtures/tiny_spm_tokenizer.json (the ids and
decoded text transformers gives for a few strings). crates/engine/tests/text_spm.rs checks our
GGUF tokenizer against them.
"""

import json
import random
from pathlib import Path

import gguf
from transformers import AutoTokenizer
import transformers

FIXTURES = Path(__file__).parent / "fixtures"
GGUF = FIXTURES / "tiny_spm.gguf"
OUT = FIXTURES / "tiny_spm_tokenizer.json"

CORPUS = "the quick brown fox jumps over the lazy dog hello world there then other brother mother weather"

TEXTS = [
    "the quick brown fox",
    "hello world",
    " hello  world",
    "weather über 😀",
    "<s>the</s> dog",
    "mother<think>brother",
    "unseen words: zebra, 42!",
    "",
]


def vocabulary():
    chars = sorted({c for word in CORPUS.split() for c in word} | {"▁"})
    pieces = set()
    for word in CORPUS.split():
        word = "▁" + word
        for i in range(len(word)):
            for j in range(i + 1, min(len(word), i + 5) + 1):
                pieces.add(word[i:j])
    pieces = sorted(pieces - set(chars))
    rng = random.Random(0)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + chars + pieces + ["<think>"]
    scores = [0.0] * 259 + [-1000.0 - i for i in range(len(chars))] + [-rng.random() * 10 for _ in pieces] + [0.0]
    types = [2, 3, 3] + [6] * 256 + [1] * (len(chars) + len(pieces)) + [4]
    return tokens, scores, types


def main() -> None:
    tokens, scores, types = vocabulary()
    FIXTURES.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(GGUF), "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_chat_template("{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}")
    # transformers reads a config from the same file; a few sizes keep it happy.
    writer.add_context_length(128)
    writer.add_embedding_length(8)
    writer.add_block_count(1)
    writer.add_head_count(1)
    writer.add_feed_forward_length(8)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

    tok = AutoTokenizer.from_pretrained(str(FIXTURES), gguf_file=GGUF.name)
    cases = []
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=True)
        cases.append({"text": text, "ids_with_special": ids, "decoded_skip_special": tok.decode(ids, skip_special_tokens=True)})
    fixture = {
        "generator": "tests/reference/make_spm_fixture.py",
        "transformers": transformers.__version__,
        "vocab_size": len(tok),
        "texts": cases,
    }
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GGUF} and {OUT}")


if __name__ == "__main__":
    main()
