"""A tiny long-context checkpoint for the agent tests: the tiny Qwen3 fixture (random weights,
plain attention with RoPE, so the prefix cache serves every shared token) wearing Qwen3.5's real
chat template (tools, `<think>` reasoning, `enable_thinking`), its context raised from 256 to
131,072 positions. RoPE has no trained length limit to break on random weights, and the coding
agents' first prompts run to tens of thousands of tokens in the 512-token vocabulary.

Run: python3 tests/agents/checkpoint.py OUT_DIR   (prints the model folder)
"""
from __future__ import annotations

import json
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "reference" / "fixtures" / "tiny" / "qwen3"
TEMPLATE = ROOT / "tests" / "reference" / "fixtures" / "templates" / "Qwen3.5-4B.jinja"
CONTEXT = 131072


def make(out: pathlib.Path) -> pathlib.Path:
    model = out / "tiny-qwen3-long"
    if model.exists():
        shutil.rmtree(model)
    shutil.copytree(TINY, model, ignore=shutil.ignore_patterns("*reference*"))
    # chat_template.jinja comes before tokenizer_config.json's template.
    shutil.copyfile(TEMPLATE, model / "chat_template.jinja")
    config_path = model / "config.json"
    config = json.loads(config_path.read_text())
    config["max_position_embeddings"] = CONTEXT
    config_path.write_text(json.dumps(config, indent=2))
    return model


if __name__ == "__main__":
    print(make(pathlib.Path(sys.argv[1])))
