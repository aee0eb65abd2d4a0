#!/usr/bin/env python3
"""Reference output of the default model (SmolLM2-135M-Instruct, Q4_1 GGUF) from Hugging Face
transformers in float32 on the GGUF's dequantized weights.

    /opt/confab-ref/bin/python tests/reference/make_smollm2_reference.py [GGUF]

Needs transformers, torch, gguf, numpy (CI never runs this; the outputs are committed):
  fixtures/smollm2_greedy.json      prompt ids, 32 greedy ids, decoded text, for two chats
  fixtures/smollm2_logits.npy       float32 logits of the first generated step of the first chat
"""
import json
import os
import sys

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.expanduser("~/.local/share/confab/models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf")
CHATS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [
        {"role": "system", "content": "You are a concise assistant."},
        {"role": "user", "content": "Name three primary colors."},
    ],
    [{"role": "user", "content": "Write a haiku about the sea."}],
    [{"role": "user", "content": "How many legs does a spider have?"}],
]
STEPS = 32


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    folder, name = os.path.dirname(path), os.path.basename(path)
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    model.eval()
    out = {"model": name, "steps": STEPS, "dtype": "float32", "chats": []}
    for i, chat in enumerate(CHATS):
        prompt = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
        ids = tok(prompt, add_special_tokens=False)["input_ids"]
        # A plain greedy loop: generate() would apply the checkpoint's logits processors.
        new, gaps = [], []
        with torch.no_grad():
            result = model(torch.tensor([ids]), use_cache=True)
            for step in range(STEPS):
                logits = result.logits[0, -1].float()
                if i == 0 and step == 0:
                    np.save(os.path.join(HERE, "fixtures", "smollm2_logits.npy"), logits.numpy().astype(np.float32))
                top = logits.topk(2).values
                # A small gap is a near tie that float32 summation order alone could flip.
                gaps.append(float(top[0] - top[1]))
                new.append(int(logits.argmax()))
                result = model(torch.tensor([[new[-1]]]), past_key_values=result.past_key_values, use_cache=True)
        out["chats"].append({"messages": chat, "prompt": prompt, "prompt_ids": ids, "greedy_ids": new, "min_gap": min(gaps),
                             "text": tok.decode(new)})
        print(repr(tok.decode(new)), "min gap", min(gaps), "at step", gaps.index(min(gaps)))
    with open(os.path.join(HERE, "fixtures", "smollm2_greedy.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
