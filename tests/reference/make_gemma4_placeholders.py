#!/usr/bin/env python3
"""Reference for media placeholder ids typed as text: the committed tiny Gemma 4 checkpoint
(tests/reference/fixtures/tiny/gemma4, made by make_gemma4.py) run by transformers on a text-only
prompt that contains the image, audio and video placeholder ids, and on a decode step that is a
placeholder id. transformers reads every placeholder id as the pad id before both embedding
lookups (the main table and the per-layer inputs), in every forward pass; this fixture shows the
engine does the same.

    /opt/confab-ref/bin/python tests/reference/make_gemma4_placeholders.py

Needs only torch and transformers; reads the checkpoint, writes
fixtures/tiny/gemma4/placeholder_reference.json:

  prompt_ids      make_gemma4's 40-id text prompt with placeholders put in: image at 3, audio at 17,
                  video at 30, and the last id an image placeholder (so the first step reads one).
  first_logits    logits of the last prompt position (float32, vocab floats).
  steps, greedy_ids  16 greedy ids with the KV cache, eos ignored; gaps/min_gap as make_gemma4.py.
  decode_id, decode_logits  after the prompt, one decode step fed the audio placeholder id.
"""

import json
import os

import numpy as np
import torch

FOLDER = os.path.join(os.path.dirname(__file__), "fixtures", "tiny", "gemma4")
STEPS = 16


def gap(logits: np.ndarray) -> float:
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def main() -> None:
    from transformers import Gemma4ForConditionalGeneration, __version__

    torch.set_num_threads(2)
    model = Gemma4ForConditionalGeneration.from_pretrained(FOLDER, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    cfg = model.config
    with open(os.path.join(FOLDER, "reference.json")) as f:
        ids = list(json.load(f)["prompt_ids"])
    for at, token in [(3, cfg.image_token_id), (17, cfg.audio_token_id), (30, cfg.video_token_id)]:
        ids[at] = token
    ids.append(cfg.image_token_id)

    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        decode = model(input_ids=torch.tensor([[cfg.audio_token_id]]), cache=out.cache, use_cache=True)
        decode_logits = decode.logits[0, -1].float().numpy().copy()

        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        new, gaps = [], []
        for _ in range(STEPS):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), cache=out.cache, use_cache=True)

    ref = {"producer": f"transformers {__version__}", "prompt_ids": ids,
           "placeholders": {"image": cfg.image_token_id, "audio": cfg.audio_token_id, "video": cfg.video_token_id,
                            "pad": cfg.text_config.pad_token_id},
           "first_logits": [float(x) for x in first], "steps": STEPS, "greedy_ids": new, "gaps": gaps,
           "min_gap": min(gaps), "decode_id": cfg.audio_token_id,
           "decode_logits": [float(x) for x in decode_logits]}
    with open(os.path.join(FOLDER, "placeholder_reference.json"), "w") as f:
        json.dump(ref, f, indent=2)
        f.write("\n")
    print(f"min gap {min(gaps):.4f}, greedy {new}")


if __name__ == "__main__":
    main()
