#!/usr/bin/env python3
"""The reference side of bench/documents.py: the same passages and questions embedded by mlx-lm
0.32.2 with the same weights and pooling (the transformer's final normed hidden states averaged
over every token and normalized: what sentence-transformers' Transformer + Pooling(mean) +
Normalize compute), then vector search by brute-force cosine in numpy. Prints one JSON line:
vector recall@k, how far Confab's vectors are from these (1 - cosine, the largest), and the
embedding time per passage and per question.

    python bench/documents_reference.py FOLDER DUMP.json QUESTIONS.json [K]

DUMP.json is what `document_retrieval --dump-passages` wrote ({passages: [{document, text,
vector}], questions: [{question, vector}]}, in order). Tokens as Confab's embedding path makes
them: the folder's tokenizer.json with its post-processor (`add_special_tokens=True`).
"""
import json
import sys
import time

import mlx.core as mx
import numpy as np
from mlx_lm import load
from tokenizers import Tokenizer


def main():
    folder, dump_path, questions_path = sys.argv[1:4]
    k = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    model, _ = load(folder)
    tokenizer = Tokenizer.from_file(f"{folder}/tokenizer.json")
    dump = json.load(open(dump_path))
    passages, ours_q = dump["passages"], dump["questions"]
    questions = json.load(open(questions_path))

    def embed(text):
        ids = tokenizer.encode(text, add_special_tokens=True).ids
        hidden = model.model(mx.array([ids]))[0]
        vector = hidden.astype(mx.float32).mean(axis=0)
        vector = vector / mx.maximum(mx.linalg.norm(vector), 1e-12)
        mx.eval(vector)
        return np.array(vector)

    embed("warm up")
    started = time.perf_counter()
    matrix = np.stack([embed(p["text"]) for p in passages])
    passage_seconds = time.perf_counter() - started
    ours = np.array([p["vector"] for p in passages], dtype=np.float64)
    ours /= np.linalg.norm(ours, axis=1, keepdims=True)
    distance = float(np.max(1 - np.sum(ours * matrix, axis=1)))
    found, question_ms = 0, []
    collapse = lambda t: " ".join(t.split())
    for q, mine in zip(questions, ours_q):
        started = time.perf_counter()
        v = embed(q["question"])
        question_ms.append((time.perf_counter() - started) * 1e3)
        m = np.array(mine["vector"])
        distance = max(distance, float(1 - v @ m / np.linalg.norm(m)))
        order = np.argsort(-(matrix @ v), kind="stable")[:k]
        if any(passages[i]["document"] == q["document"] and collapse(q["answer"]) in collapse(passages[i]["text"]) for i in order):
            found += 1
    print(json.dumps({
        "vector_recall": found / len(questions),
        "max_cosine_distance_to_ours": distance,
        "passages": len(passages),
        "passage_seconds": passage_seconds,
        "passages_per_s": len(passages) / passage_seconds,
        "question_embed_median_ms": float(np.median(question_ms)),
    }))


if __name__ == "__main__":
    main()
