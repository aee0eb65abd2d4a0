"""`POST /v1/embeddings` of `confab serve`, driven by the real `openai` Python client.

The embedding models are the tiny random checkpoints of tests/reference/make_embeddings.py, whose
reference.json holds sentence-transformers' vectors: every vector through the API must lie within
COSINE_TOLERANCE of the reference's, whether it comes back as floats or as base64 (the client's
default). Served three ways: beside a chat model (`--embedding-model`), as the served model
itself, and not at all (the error must say what to do). The chat model is the tiny `qwen3`
fixture: what is checked is the API, not the model.

Run: .deps/server/venv/bin/python -m unittest discover -s tests/server -p test_embeddings.py -v
Environment: CARGO_TARGET_DIR (where `cargo build -p confab-cli` put `confab`).
"""
from __future__ import annotations

import base64
import json
import math
import struct
import pathlib
import unittest

import openai

from test_openai import ROOT, Server

TINY = ROOT / "tests" / "reference" / "fixtures" / "tiny"
QWEN = TINY / "qwen3_embedding"
GEMMA = TINY / "embeddinggemma"
CHAT = TINY / "qwen3"
# Cosine distance (1 - cos) allowed between a served vector and sentence-transformers'.
COSINE_TOLERANCE = 1e-5


def reference(folder: pathlib.Path) -> list[dict]:
    return json.loads((folder / "reference.json").read_text())["cases"]


def cosine_distance(a, b) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return 1.0 - dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def extra_of(case: dict) -> dict:
    """Confab's own fields for a reference case: which prompt goes before the text."""
    if case["kind"] == "prompt":
        return {"prompt": case["prompt"]}
    return {"input_type": case["kind"]}


class EmbeddingCases(unittest.TestCase):
    def assert_close(self, got, want, what: str):
        self.assertEqual(len(got), len(want), what)
        distance = cosine_distance(got, want)
        self.assertLessEqual(distance, COSINE_TOLERANCE, f"{what}: {distance:.2e} from the reference")

    def assert_error(self, error: openai.APIStatusError, status: int, param: str | None, says: str):
        self.assertEqual(error.status_code, status)
        body = error.response.json()
        self.assertEqual(set(body["error"]), {"message", "type", "param", "code"})
        self.assertEqual(body["error"]["param"], param)
        self.assertIn(says, body["error"]["message"])

    def check_reference(self, client: openai.OpenAI, model: str, folder: pathlib.Path):
        for case in reference(folder):
            for encoding in ("base64", "float"):
                answer = client.embeddings.create(model=model, input=case["text"], encoding_format=encoding, extra_body=extra_of(case))
                self.assertEqual(answer.model, model)
                self.assertEqual(len(answer.data), 1)
                vector = answer.data[0].embedding
                if encoding == "base64":
                    # Asked for explicitly, the client hands the string over as it came:
                    # little-endian float32 bytes.
                    raw = base64.b64decode(vector)
                    vector = list(struct.unpack(f"<{len(raw) // 4}f", raw))
                self.assert_close(vector, case["vector"], f"{folder.name} {case['kind']} {encoding}")
                self.assertEqual(answer.usage.prompt_tokens, len(case["ids"]))
                self.assertEqual(answer.usage.total_tokens, len(case["ids"]))


class BesideAChatModel(EmbeddingCases):
    """`confab serve --model <chat> --embedding-model <Qwen3-Embedding-like>`."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model", str(CHAT), "--embedding-model", str(QWEN))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="none", max_retries=0)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def test_vectors_match_sentence_transformers(self):
        self.check_reference(self.client, "qwen3_embedding", QWEN)

    def test_the_default_client_call_gives_the_document_vector(self):
        # No encoding_format (the client asks for base64 and decodes it), no prompt: a document.
        case = next(c for c in reference(QWEN) if c["kind"] == "document")
        answer = self.client.embeddings.create(model="qwen3_embedding", input=case["text"])
        self.assert_close(answer.data[0].embedding, case["vector"], "default call")

    def test_several_inputs_in_one_request(self):
        documents = [c for c in reference(QWEN) if c["kind"] == "document"]
        answer = self.client.embeddings.create(model="qwen3_embedding", input=[c["text"] for c in documents], encoding_format="float")
        self.assertEqual([d.index for d in answer.data], list(range(len(documents))))
        for case, item in zip(documents, answer.data):
            self.assertEqual(item.object, "embedding")
            self.assert_close(item.embedding, case["vector"], case["text"])
        self.assertEqual(answer.usage.prompt_tokens, sum(len(c["ids"]) for c in documents))

    def test_dimensions_shorten_and_normalize_again(self):
        case = next(c for c in reference(QWEN) if c["kind"] == "document")
        answer = self.client.embeddings.create(model="qwen3_embedding", input=case["text"], dimensions=16, encoding_format="float")
        vector = answer.data[0].embedding
        self.assertEqual(len(vector), 16)
        self.assertAlmostEqual(math.sqrt(sum(x * x for x in vector)), 1.0, places=5)
        self.assert_close(vector, case["vector"][:16], "first 16")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.embeddings.create(model="qwen3_embedding", input="x", dimensions=65)
        self.assert_error(caught.exception, 400, "dimensions", "between 1 and 64")

    def test_both_models_are_listed_and_the_chat_model_still_chats(self):
        ids = [m.id for m in self.client.models.list()]
        self.assertEqual(ids, ["qwen3", "qwen3_embedding"])
        reply = self.client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
        self.assertTrue(reply.choices)

    def test_wrong_models_and_inputs_are_clear_errors(self):
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.chat.completions.create(model="qwen3_embedding", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
        self.assert_error(caught.exception, 400, "model", "is an embedding model")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.embeddings.create(model="qwen3", input="hello")
        self.assert_error(caught.exception, 400, "model", "is a chat model")
        with self.assertRaises(openai.NotFoundError) as caught:
            self.client.embeddings.create(model="text-embedding-3-small", input="hello")
        self.assert_error(caught.exception, 404, "model", "qwen3_embedding")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.embeddings.create(model="qwen3_embedding", input=[1, 2, 3])
        self.assert_error(caught.exception, 400, "input", "Token arrays")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.embeddings.create(model="qwen3_embedding", input="x", extra_body={"input_type": "passage"})
        self.assert_error(caught.exception, 400, "input_type", "query, document")
        # Still serving after the errors.
        self.assertEqual(len(self.client.embeddings.create(model="qwen3_embedding", input="still here").data), 1)


class AsTheServedModel(EmbeddingCases):
    """`confab serve --model <EmbeddingGemma-like>`: the served model is the embedding model."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model", str(GEMMA))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="none", max_retries=0)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def test_vectors_match_sentence_transformers(self):
        self.assertEqual(self.server.model, "embeddinggemma")
        self.check_reference(self.client, "embeddinggemma", GEMMA)

    def test_chat_is_refused_clearly(self):
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.chat.completions.create(model="embeddinggemma", messages=[{"role": "user", "content": "hi"}], max_tokens=2)
        self.assert_error(caught.exception, 400, "model", "POST /v1/embeddings")
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.completions.create(model="embeddinggemma", prompt="hi", max_tokens=2)
        self.assert_error(caught.exception, 400, "model", "is an embedding model")


class WithoutAnEmbeddingModel(EmbeddingCases):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--model", str(CHAT))
        cls.client = openai.OpenAI(base_url=cls.server.base_url, api_key="none", max_retries=0)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        assert code == 0, f"confab serve exited with {code} on Ctrl-C"

    def test_the_error_says_what_to_do(self):
        with self.assertRaises(openai.BadRequestError) as caught:
            self.client.embeddings.create(model="qwen3", input="hello")
        self.assert_error(caught.exception, 400, "model", "--embedding-model")


if __name__ == "__main__":
    unittest.main()
