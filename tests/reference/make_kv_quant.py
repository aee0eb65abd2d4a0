#!/usr/bin/env python3
"""Reference for quantized keys/values: mlx-lm 0.32.2 running a tiny llama with `QuantizedKVCache`.

    /opt/confab-ref/bin/python tests/reference/make_kv_quant.py

Writes tests/reference/fixtures/tiny/kv_quant/ (about 600 KB), a Hugging Face folder:
  a random LlamaForCausalLM made with transformers' own class (2 layers, hidden 64, 2 query heads
  sharing 1 KV head of head_dim 64 so that mlx-lm's default group of 64 divides it, untied lm_head,
  vocab 384, rope_theta 1e4), weights randomised as make_tiny_models.py does, float32; config.json
  in transformers-4 keys (mlx-lm 0.32.2's llama reads only `rope_theta`/`rope_scaling`); the
  tokenizer and chat template of make_tiny_models.py.

and reference.json:
  {
    "compute": str,          how it was computed, in words
    "prompt_ids": [int] * PROMPT_LEN,   random ids (no specials); long enough that the cache's
                             buffers grow past one 256-position step during decode
    "steps": STEPS,
    "logit_steps": [int],    the decode steps whose logits are kept (0 = the last prompt position)
    "runs": {
      "full":  {...},        mlx-lm's plain KVCache (float32), for comparison
      "kv8g64": {"bits": 8, "group_size": 64, ...},
      "kv4g64": {"bits": 4, "group_size": 64, ...},
      "kv4g32": {"bits": 4, "group_size": 32, ...}
    }
    each run: "greedy_ids": [int] * STEPS (argmax loop, eos ignored), "gaps" (top-1 minus top-2 at
    each step), "min_gap", "logits": {step: [float] * vocab} at logit_steps
  }

Quantization start: every layer's cache is a `QuantizedKVCache` from the first token (what
`generate_step(..., kv_bits=b, kv_group_size=g, quantized_kv_start=0)` converts to before the
prompt), which is what Confab does with `--kv-bits`: keys and values are quantized as they enter
the cache, the prompt's included. (mlx-lm's command line starts quantizing at 5,000 tokens by
default; up to then it keeps full-precision keys.) The prompt is fed in one call, then one token
per step.
"""
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_tiny_models as tiny  # noqa: E402  (randomize, make_tokenizer, v4_config, gap)

OUT = os.path.join(HERE, "fixtures", "tiny", "kv_quant")
SEED = 3838
PROMPT_LEN = 300
STEPS = 16
LOGIT_STEPS = [0, 1, 8, 15]
RUNS = {"full": None, "kv8g64": (8, 64), "kv4g64": (4, 64), "kv4g32": (4, 32)}
MIN_GAP = 1e-2


def build_folder():
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    cfg = LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=2, num_key_value_heads=1,
                      head_dim=64, num_hidden_layers=2, vocab_size=384, max_position_embeddings=2048,
                      rms_norm_eps=1e-5, hidden_act="silu", rope_theta=10000.0, tie_word_embeddings=False,
                      bos_token_id=tiny.BOS_ID, eos_token_id=tiny.EOS_ID, pad_token_id=tiny.PAD_ID)
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(cfg).to(torch.float32).eval()
    tiny.randomize(model, SEED, False, cfg.hidden_size)
    model.generation_config = GenerationConfig(bos_token_id=tiny.BOS_ID, eos_token_id=tiny.EOS_ID,
                                               pad_token_id=tiny.PAD_ID)
    model.save_pretrained(OUT, safe_serialization=True)
    config_path = os.path.join(OUT, "config.json")
    tiny.write_json(config_path, tiny.v4_config(tiny.read_json(config_path)))
    tiny.make_tokenizer(OUT, cfg.vocab_size)
    return cfg


def mlx_run(model, ids, quantization):
    import mlx.core as mx
    from mlx_lm.models.cache import KVCache, QuantizedKVCache

    if quantization is None:
        cache = [KVCache() for _ in model.layers]
    else:
        bits, group = quantization
        cache = [QuantizedKVCache(group_size=group, bits=bits) for _ in model.layers]
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    new, gaps, kept = [], [], {}
    for step in range(STEPS):
        l = np.array(logits.astype(mx.float32))
        if step in LOGIT_STEPS:
            kept[str(step)] = [float(x) for x in l]
        gaps.append(tiny.gap(l))
        new.append(int(l.argmax()))
        logits = model(mx.array([[new[-1]]]), cache=cache)[0, -1]
    return {"greedy_ids": new, "gaps": gaps, "min_gap": min(gaps), "logits": kept}


def main():
    import mlx.core as mx
    from mlx_lm import __version__ as mlx_lm_version
    from mlx_lm.utils import load_model

    cfg = build_folder()
    model, _ = load_model(Path(OUT))
    mx.eval(model.parameters())
    for attempt in range(20):
        rng = np.random.default_rng(SEED + attempt)
        ids = [int(x) for x in rng.integers(len(tiny.SPECIALS), cfg.vocab_size, size=PROMPT_LEN)]
        runs = {}
        for name, q in RUNS.items():
            runs[name] = mlx_run(model, ids, q)
            if q is not None:
                runs[name].update({"bits": q[0], "group_size": q[1]})
        worst = min(r["min_gap"] for r in runs.values())
        distinct = min(len(set(r["greedy_ids"])) for r in runs.values())
        if worst >= MIN_GAP and distinct >= 6:
            break
        print(f"prompt attempt {attempt}: min gap {worst:.2e}, {distinct} distinct ids; drawing another")
    else:
        raise RuntimeError("no robust prompt")
    compute = (f"mlx-lm {mlx_lm_version} (mlx {mx.__version__}) on the CPU, float32 weights and activations; "
               "every layer's cache a QuantizedKVCache (or KVCache for `full`) from the first token; the "
               "prompt in one call, then a plain argmax loop, eos ignored")
    ref = {"compute": compute, "seed": SEED, "prompt_attempt": attempt, "prompt_ids": ids, "steps": STEPS,
           "logit_steps": LOGIT_STEPS, "runs": runs}
    tiny.write_json(os.path.join(OUT, "reference.json"), ref, indent=None)
    for name, r in runs.items():
        same = sum(a == b for a, b in zip(r["greedy_ids"], runs["full"]["greedy_ids"]))
        first = np.array(r["logits"]["0"]) - np.array(runs["full"]["logits"]["0"])
        print(f"{name}: min gap {r['min_gap']:.3f}, {same}/{STEPS} ids as full precision, first logits "
              f"max |diff| from full {np.abs(first).max():.2e}; ids {r['greedy_ids']}")


if __name__ == "__main__":
    main()
