#!/usr/bin/env python3
"""Chat with documents, measured: retrieval quality and speed of Confab's document index against
mlx-lm with the same embedding weights.

    python3 bench/documents.py [--binary PATH] [--model FOLDER] [--set FOLDER] [--python PY] [--no-reference] [--json]

Ours: the `document_retrieval` example (crates/cli/examples; built with
`cargo build -p confab-cli --example document_retrieval`, the dev profile is optimised): each
document of the set read, chunked, embedded, indexed in a real SQLite file; each question embedded
and searched by vector, by words (FTS5 bm25) and hybrid (reciprocal rank fusion, k=60).
Reference: bench/documents_reference.py, mlx-lm 0.32.2 (bench/run.py's venv: the official mlx-cpu
wheel with Confab's OpenBLAS) embedding the same passages with the same weights and pooling,
searched by numpy cosine (vector search only: it checks our vectors and times the embedding).

Set: tests/reference/fixtures/retrieval (make_retrieval_set.py: 5 documents, 27 questions that
paraphrase their answers' passages). Model: target/bench/smollm2-embedder, the default chat model
mean-pooled (bench/make_smollm2_embedder.py makes it; no real embedding weights Confab runs can be
had offline here). Its vectors are weak: it was never trained to embed.

Prints recall@5 per mode, indexing speed (PDF pages per second and passages per second, reading,
chunking, embedding and storing included), query latency (embedding the question; the hybrid
search itself), and the ratios to the reference.

Then batching (issue 58): the 300-page PDF (tests/reference/fixtures/documents/many_pages.pdf,
make_long_documents.py) indexed alone, and the set's questions embedded, once with one passage per
forward pass (`CONFAB_EMBED_BATCH_TOKENS=0`, as before batching, and the engine's default on the
CPU) and once batched (`CONFAB_EMBED_BATCH_TOKENS=4096`, the default elsewhere, or --batch-tokens): pages per second both ways and the ratio, query latency both
ways. The same binary both times, run back to back. --no-batching skips it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from run import PY, VENV, use_openblas  # noqa: E402  the mlx-lm venv bench/run.py sets up

TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
DEFAULT_MODEL = os.path.join(TARGET, "bench", "smollm2-embedder")
MANY_PAGES = os.path.join(ROOT, "tests", "reference", "fixtures", "documents", "many_pages.pdf")


def mlx_lm_venv():
    """bench/run.py's venv: mlx-lm 0.32.2 on the official mlx-cpu wheel with Confab's OpenBLAS."""
    if not os.path.exists(PY):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([PY, "-m", "pip", "install", "-q", "mlx[cpu]==0.32.2", "mlx-lm==0.32.2", "gguf", "tokenizers"], check=True)
        site = subprocess.run([PY, "-c", "import mlx, os; print(os.path.dirname(list(mlx.__path__)[0]))"],
                              check=True, capture_output=True, text=True).stdout.strip()
        if sys.platform.startswith("linux"):
            use_openblas(site)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(TARGET, "debug", "examples", "document_retrieval"))
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--set", default=os.path.join(ROOT, "tests", "reference", "fixtures", "retrieval"))
    parser.add_argument("--python", default=PY, help="a Python with mlx-lm 0.32.2 (default: bench/run.py's venv, made if missing)")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print both sides' full results as JSON")
    parser.add_argument("--no-batching", action="store_true", help="skip the one-at-a-time against batched comparison")
    parser.add_argument("--batch-tokens", type=int, default=4096, help="the batched side's CONFAB_EMBED_BATCH_TOKENS")
    args = parser.parse_args()
    if args.python == PY and not args.no_reference:
        mlx_lm_venv()
    if not os.path.isdir(args.model):
        if args.model != DEFAULT_MODEL:
            sys.exit(f"{args.model} does not exist")
        subprocess.run([args.python, os.path.join(ROOT, "bench", "make_smollm2_embedder.py")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "passages.json")
        cmd = [args.binary, "--model", args.model, "--set", args.set, "--k", str(args.k), "--dump-passages", dump]
        ours = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        theirs = None
        if not args.no_reference:
            ref = [args.python, os.path.join(ROOT, "bench", "documents_reference.py"), args.model, dump, os.path.join(args.set, "questions.json"), str(args.k)]
            theirs = json.loads(subprocess.run(ref, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
    r, ix, q = ours["recall"], ours["index"], ours["query_ms"]
    n = ours["questions"]
    print(f"set: {ours['documents']} documents, {ix['passages']} passages ({ours['chunking']}), {n} questions; model: {args.model}")
    print(f"recall@{args.k}   vectors {r['vector']:.2f} ({round(r['vector'] * n)}/{n})   words (FTS5) {r['text']:.2f} ({round(r['text'] * n)}/{n})   hybrid (RRF k=60) {r['hybrid']:.2f} ({round(r['hybrid'] * n)}/{n})")
    if theirs:
        print(f"          mlx-lm vectors {theirs['vector_recall']:.2f} (the same passages, weights and pooling; our vectors within {theirs['max_cosine_distance_to_ours']:.1e} cosine distance of its)")
    print(f"indexing  {ix['pdf_pages_per_s']:.2f} PDF pages/s ({ix['pdf_pages']} pages in {ix['pdf_seconds']:.1f} s)   {ix['passages_per_s']:.2f} passages/s overall ({ix['seconds']:.1f} s)")
    if theirs:
        print(f"          mlx-lm embedding alone: {theirs['passages_per_s']:.2f} passages/s   ours/mlx-lm {ix['passages_per_s'] / theirs['passages_per_s']:.2f}")
    print(f"query     embed the question {q['embed_median']:.1f} ms (median)   hybrid search {q['hybrid_search_median']:.2f} ms (median)")
    if theirs:
        print(f"          mlx-lm embed the question {theirs['question_embed_median_ms']:.1f} ms   ours/mlx-lm {q['embed_median'] / theirs['question_embed_median_ms']:.2f}")
    batching = None if args.no_batching else compare_batching(args)
    if args.json:
        print(json.dumps({"ours": ours, "reference": theirs, "batching": batching}))


def run_example(args, folder, budget):
    """The example over `folder` with CONFAB_EMBED_BATCH_TOKENS=`budget` (None: the engine's default)."""
    env = dict(os.environ)
    env.pop("CONFAB_EMBED_BATCH_TOKENS", None)
    if budget is not None:
        env["CONFAB_EMBED_BATCH_TOKENS"] = str(budget)
    cmd = [args.binary, "--model", args.model, "--set", folder, "--k", str(args.k)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)


def compare_batching(args):
    """The 300-page PDF indexed one passage per pass and batched; the questions embedded both ways."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(MANY_PAGES, tmp)
        with open(os.path.join(tmp, "questions.json"), "w") as f:
            f.write("[]")
        alone = run_example(args, tmp, 0)
        batched = run_example(args, tmp, args.batch_tokens)
    alone_set = run_example(args, args.set, 0)
    batched_set = run_example(args, args.set, args.batch_tokens)
    a, b = alone["index"], batched["index"]
    budget = args.batch_tokens
    print(f"batching  300-page PDF ({b['passages']} passages): one passage per pass {a['pdf_pages_per_s']:.2f} pages/s ({a['pdf_seconds']:.1f} s)   "
          f"batched ({budget} tokens) {b['pdf_pages_per_s']:.2f} pages/s ({b['pdf_seconds']:.1f} s)   batched/one {b['pdf_pages_per_s'] / a['pdf_pages_per_s']:.2f}")
    qa, qb = alone_set["query_ms"]["embed_median"], batched_set["query_ms"]["embed_median"]
    print(f"          embed the question: one per pass {qa:.1f} ms, batched build {qb:.1f} ms (median; a question is one text either way)   batched/one {qb / qa:.2f}")
    return {"one_per_pass": alone["index"], "batched": batched["index"], "query_embed_ms": {"one_per_pass": qa, "batched": qb}}


if __name__ == "__main__":
    main()
