#!/usr/bin/env python3
"""The default model as an embedding model, for the documents benchmark (bench/documents.py):
SmolLM2-135M-Instruct's weights with sentence-transformers' mean pooling and normalization.

    /opt/confab-ref/bin/python bench/make_smollm2_embedder.py [GGUF] [OUT]

No real embedding weights that Confab's embedding path runs (Qwen3-Embedding, EmbeddingGemma or
another llama/gemma3-architecture embedder) can be had offline here: the packages on PyPI that ship
embedding weights ship BERT models (all-MiniLM-L6-v2), which Confab does not run. So the benchmark
embeds with the chat model it has, mean-pooled. Its vectors are weak (it was never trained to
embed): the benchmark reports them as they are, beside word search and the hybrid.

Steps: the Q4_1 GGUF dequantized to a float32 Hugging Face folder (make_kv_quant_smollm2.py's
`write_folder`, checked there against transformers), the tokenizer as `confab export-tokenizer`
writes it (CONFAB_BIN names the binary, target/debug/confab by default), and sentence-transformers'
files: modules.json (Transformer, Pooling, Normalize), 1_Pooling/config.json (mean, prompt
included) and sentence_bert_config.json (max_seq_length 2048). Writes OUT, by default
target/bench/smollm2-embedder (540 MB, not committed). Needs gguf, mlx and numpy (the reference
venv has them). Works offline; a few seconds.
"""
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "reference"))

from make_kv_quant_smollm2 import DEFAULT, write_folder  # noqa: E402


def main():
    gguf_path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else ROOT / "target" / "bench" / "smollm2-embedder")
    out.mkdir(parents=True, exist_ok=True)
    config = write_folder(gguf_path, out)
    confab = os.environ.get("CONFAB_BIN", str(ROOT / "target" / "debug" / "confab"))
    subprocess.run([confab, "export-tokenizer", "--model", gguf_path, "--out", str(out)], check=True)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (out / "modules.json").write_text(json.dumps(modules, indent=1))
    (out / "1_Pooling").mkdir(exist_ok=True)
    pooling = {
        "word_embedding_dimension": config["hidden_size"],
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    }
    (out / "1_Pooling" / "config.json").write_text(json.dumps(pooling, indent=1))
    (out / "2_Normalize").mkdir(exist_ok=True)
    (out / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 2048, "do_lower_case": False}))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
