#!/usr/bin/env python3
"""A tiny random Ministral 3 checkpoint (Mistral3ForConditionalGeneration with a `ministral3` text model and the
Pixtral tower) with float32 references, and the same text weights as a bare Ministral3ForCausalLM.

    /opt/confab-ref/bin/python tests/reference/make_ministral3.py

Needs the reference venv (as make_mistral3.py, whose tokenizer, processor, tower sizes and image it reuses). CI never
runs this; the outputs are committed. It deletes and rewrites only fixtures/tiny/ministral3 and takes a few seconds.

What differs from fixtures/tiny/mistral3: 2 text layers, head_dim 32 (so the CPU decode kernels apply), and the
text config is transformers 5.25's Ministral3Config, with YaRN rope parameters (factor 16, beta_fast 32, beta_slow 1,
mscale = mscale_all_dim = 1, as the released configs) and the per-position query scale
1 + llama_4_scaling_beta * ln(1 + floor(position / original_max_position_embeddings)) with
original_max_position_embeddings 8 (the released models: 16384), so the scale steps every 8 positions inside these
prompts (the text chat is 45 tokens, the image chat 44, each then 16 greedy steps).

References (reference.json + .npy), from the forward pass in float32 with eager attention:
  - text: the chat [user: text] ids, first-step logits, 16 greedy ids;
  - image: the chat [user: image, text] through the processor: input_ids, image_sizes, first logits, 16 greedy ids;
  - causal_lm: the text chat through Ministral3ForCausalLM holding the same text weights (the checkpoint's
    `language_model.*` tensors with that prefix removed, its config the text_config): first logits, 16 greedy ids.
Weights are re-drawn (seed + attempt) until every greedy step's top-2 logit gap is >= 1e-2 and the ids are not
one token repeated, for both chats.
"""
import copy
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tiny_models import MIN_DISTINCT, MIN_GAP  # noqa: E402
import make_mistral3 as m3  # noqa: E402

OUT = os.path.join(HERE, "fixtures", "tiny", "ministral3")
SEED = 41303
TEXT_QUESTION = "Tell me about the weather in the mountains, by the rivers and over the cold grey sea."
TEXT_CHAT = [{"role": "user", "content": [{"type": "text", "text": TEXT_QUESTION}]}]
ROPE = {"rope_type": "yarn", "rope_theta": 1000000.0, "factor": 16.0, "original_max_position_embeddings": 8,
        "max_position_embeddings": 1024, "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
        "llama_4_scaling_beta": 0.1}


def config():
    from transformers import Mistral3Config

    cfg = m3.config()
    text = cfg.text_config.to_dict()
    for key in ("model_type", "rope_parameters", "transformers_version", "architectures", "dtype", "torch_dtype"):
        text.pop(key, None)
    # head_dim 32 (a multiple of 16, heads x head_dim still != hidden): decode steps take the CPU kernels;
    # 2 layers keep the folder under 1 MB.
    text = dict(text, model_type="ministral3", head_dim=32, num_hidden_layers=2, rope_parameters=dict(ROPE))
    vision = cfg.vision_config.to_dict()
    return Mistral3Config(text_config=text, vision_config=vision, image_token_index=m3.ID["[IMG]"],
                          spatial_merge_size=m3.MERGE, vision_feature_layer=-1, projector_hidden_act="gelu",
                          multimodal_projector_bias=False, tie_word_embeddings=False)


def greedy(model, inputs: dict):
    """Plain greedy loop with the model's cache: no logits processors, eos ignored."""
    new, gaps = [], []
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(m3.STEPS):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(m3.gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), cache=out.cache, use_cache=True)
    return first, new, gaps


def causal_lm(model):
    """Ministral3ForCausalLM holding `model`'s text weights (`language_model.` removed from their names)."""
    from transformers import Ministral3ForCausalLM

    text_config = copy.deepcopy(model.config.text_config)
    text_config._attn_implementation = "eager"
    lm = Ministral3ForCausalLM(text_config).to(torch.float32).eval()
    saved = {k: v for k, v in model.state_dict().items()}
    # Mistral3ForConditionalGeneration's state dict: model.language_model.* and lm_head.* (saved to disk as
    # language_model.model.* and language_model.lm_head.*).
    prefix = "model.language_model."
    text = {"model." + k[len(prefix):]: v for k, v in saved.items() if k.startswith(prefix)}
    text["lm_head.weight"] = saved["lm_head.weight"]
    lm.load_state_dict(text, strict=True)
    return lm


def main() -> None:
    from PIL import Image
    from transformers import Mistral3ForConditionalGeneration, __version__ as tf_version

    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "media"))
    m3.make_tokenizer(OUT)
    processor = m3.make_processor(OUT)
    shutil.copyfile(m3.PHOTO, os.path.join(OUT, "media", "photo.jpg"))
    image = Image.open(os.path.join(OUT, "media", "photo.jpg")).convert("RGB")

    text_prompt = processor.apply_chat_template(TEXT_CHAT, tokenize=False)
    text_inputs = dict(processor(text=[text_prompt], return_tensors="pt"))
    image_prompt = processor.apply_chat_template(m3.IMAGE_CHAT, tokenize=False)
    image_inputs = dict(processor(text=[image_prompt], images=[image], return_tensors="pt"))
    for inputs in (text_inputs, image_inputs):
        inputs.pop("attention_mask", None)
    print("prompt tokens: text", text_inputs["input_ids"].shape[1], "image", image_inputs["input_ids"].shape[1])

    cfg = config()
    for attempt in range(40):
        torch.manual_seed(SEED + attempt)
        model = Mistral3ForConditionalGeneration(cfg).to(torch.float32).eval()
        m3.randomize(model, SEED + attempt)
        model.config._attn_implementation = "eager"
        for sub in (model.model.vision_tower.config, model.model.language_model.config):
            sub._attn_implementation = "eager"
        runs = [greedy(model, dict(text_inputs)), greedy(model, dict(image_inputs))]
        if all(min(g) >= MIN_GAP and len(set(n)) >= MIN_DISTINCT for _, n, g in runs):
            break
        print(f"  attempt {attempt}: min gap {min(min(g) for _, _, g in runs):.2e}, drawing another")
    else:
        raise RuntimeError("no robust weights")
    model.save_pretrained(OUT)

    loaded = Mistral3ForConditionalGeneration.from_pretrained(OUT, dtype=torch.float32,
                                                              attn_implementation="eager").eval()
    assert type(loaded.model.language_model).__name__ == "Ministral3Model", type(loaded.model.language_model)
    text_first, text_new, text_gaps = greedy(loaded, dict(text_inputs))
    first, new, gaps = greedy(loaded, dict(image_inputs))
    assert new == runs[1][1] and np.array_equal(first, runs[1][0]), "the reloaded folder computes something else"
    lm_first, lm_new, lm_gaps = greedy(causal_lm(loaded), {"input_ids": text_inputs["input_ids"]})
    lm_diff = float(np.abs(lm_first - text_first).max())
    assert lm_new == text_new and lm_diff < 1e-5, (lm_new, text_new, lm_diff)
    ids = [int(x) for x in image_inputs["input_ids"][0]]
    reference = {
        "name": "ministral3",
        "producer": f"transformers {tf_version}",
        "compute": (f"transformers {tf_version}, torch {torch.__version__} on the CPU, float32, "
                    "Mistral3ForConditionalGeneration with a Ministral3 text model (attn_implementation='eager') and "
                    "Ministral3ForCausalLM, forward passes with the model's cache (no generate()); PixtralProcessor "
                    "with PixtralImageProcessorPil"),
        "seed": SEED,
        "weights_attempt": attempt,
        "steps": m3.STEPS,
        "rope_parameters": ROPE,
        "text": {
            "messages": TEXT_CHAT,
            "prompt": text_prompt,
            "input_ids": [int(x) for x in text_inputs["input_ids"][0]],
            "first_logits": [float(x) for x in text_first],
            "greedy_ids": text_new,
            "min_gap": min(text_gaps),
        },
        "image": {
            "messages": m3.IMAGE_CHAT,
            "prompt": image_prompt,
            "images": ["media/photo.jpg"],
            "image_sizes": [[int(v) for v in row] for row in image_inputs["image_sizes"]],
            "input_ids": ids,
            "first_logits": [float(x) for x in first],
            "greedy_ids": new,
            "min_gap": min(gaps),
        },
        "causal_lm": {
            "weights": "the checkpoint's language_model.* tensors, `language_model.` removed; config: text_config",
            "first_logits": [float(x) for x in lm_first],
            "greedy_ids": lm_new,
            "min_gap": min(lm_gaps),
            "max_abs_diff_to_text": lm_diff,
        },
    }
    m3.write_json(os.path.join(OUT, "reference.json"), reference, indent=1)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT} ({total / 1e3:.0f} kB): {len(reference['text']['input_ids'])} / {len(ids)} prompt tokens, "
          f"greedy {new} / {text_new}, min gaps {min(gaps):.3f} / {min(text_gaps):.3f}, causal LM diff {lm_diff:.1e}")


if __name__ == "__main__":
    main()
