#!/usr/bin/env python3
"""Tiny Qwen3.5 checkpoints WITH a multi-token-prediction head (`mtp.*`), and the head's logits from
mlx-vlm's Qwen3.5 MTP drafter.

    python3 -m venv /tmp/venv-mtp
    /tmp/venv-mtp/bin/pip install "mlx[cpu]==0.32.4" mlx-vlm==0.7.10 --no-deps
    /tmp/venv-mtp/bin/pip install numpy safetensors requests huggingface_hub Pillow transformers
    /tmp/venv-mtp/bin/python tests/reference/make_qwen3_5_mtp.py

(mlx-vlm 0.7.10 needs mlx >= 0.32.4, newer than the reference venv's 0.32.2; its other dependencies —
opencv, datasets, mlx-audio, a server — are not needed for the modules used here. No torch.)

The reference: mlx-vlm 0.7.10's `Qwen3_5MTPDraftModel` (mlx_vlm/speculative/drafters/qwen3_5_mtp), the
drafter mlx-vlm runs for Qwen3.5/3.6 (`--draft-kind mtp`). It is the reference because it is the published
MLX implementation of this head for these checkpoints, runs on MLX's CPU backend here as our engine does,
and reads the checkpoints' own `mtp.*` names (its `sanitize` shifts the zero-centred norms and splits the
fused experts as the main model's do). Its formula is vLLM's qwen3_next_mtp one: h = fc([norm_e(embed(t));
norm_h(hidden)]), the decoder layers (full attention), norm; logits by the target's output head; `hidden`
is the target's final hidden state after its final norm (mlx-vlm's `return_hidden`), the token the one
after that hidden state's position.

For qwen3_5 and qwen3_5_moe (made by make_qwen3_5.py) it writes tests/reference/fixtures/tiny/<name>_mtp/:
the same config (text_config.mtp_num_hidden_layers = 1), tokenizer and weights, plus seeded random mtp.*
tensors with the published names and shapes (one decoder layer shaped as the model's full-attention
layer, MoE where the model is), drawn as make_qwen3_5.py draws the model's (zero-centred norms 0.3 r,
projections r / sqrt(fan_in)); and mtp_reference.json:

  prompt_ids      40 ids
  bonus           the target's greedy token after the prompt
  prefill_logits  [40, vocab]: the head at every prompt position i, reading the target's hidden state at
                  i and token i + 1 (the bonus after the last), as `prefill_from_target_hidden` runs it
  first_draft     the head's greedy choice at the last prompt position (the first draft)
  draft_ids       the 4 greedy drafts after it: each draft fed back with the head's own hidden state
                  (`draft_block`) gives the next
  draft_logits    [4, vocab]: the head's logits that chose them
"""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = os.path.join(HERE, "fixtures", "tiny")
BASES = [("qwen3_5", 37001), ("qwen3_5_moe", 37002)]
DRAFTS = 4
COPIED = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"]


def mtp_tensors(tensors: dict, seed: int) -> dict:
    """mtp.* shaped as the published ones: fc [H, 2H], the pre-fc and final norms [H], and one decoder
    layer named and shaped as the model's full-attention layer (layers.3 in these fixtures)."""
    rng = np.random.default_rng(seed)
    full = "model.language_model.layers.3."
    hidden = tensors["model.language_model.norm.weight"].shape[0]
    shapes = {"mtp.fc.weight": (hidden, 2 * hidden), "mtp.pre_fc_norm_embedding.weight": (hidden,),
              "mtp.pre_fc_norm_hidden.weight": (hidden,), "mtp.norm.weight": (hidden,)}
    for name, value in tensors.items():
        if name.startswith(full):
            shapes["mtp.layers.0." + name[len(full):]] = value.shape
    out = {}
    for name, shape in sorted(shapes.items()):
        r = rng.standard_normal(shape).astype(np.float32)
        if len(shape) == 1:
            out[name] = 0.3 * r  # zero-centred norms: y = x̂ (1 + w)
        elif name.endswith(("o_proj.weight", "down_proj.weight", "experts.down_proj")):
            out[name] = r * 2.0 / np.sqrt(shape[-1])
        else:
            out[name] = r / np.sqrt(shape[-1])
        out[name] = out[name].astype(np.float32)
    return out


def make_folder(base: str, seed: int) -> str:
    from safetensors.numpy import load_file, save_file
    src, dst = os.path.join(TINY, base), os.path.join(TINY, base + "_mtp")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for f in COPIED:
        shutil.copy(os.path.join(src, f), dst)
    tensors = load_file(os.path.join(src, "model.safetensors"))
    tensors.update(mtp_tensors(tensors, seed))
    save_file(dict(sorted(tensors.items())), os.path.join(dst, "model.safetensors"), metadata={"format": "pt"})
    cfg_path = os.path.join(dst, "config.json")
    cfg = json.load(open(cfg_path))
    cfg["text_config"]["mtp_num_hidden_layers"] = 1
    cfg["text_config"]["mtp_use_dedicated_embeddings"] = False
    json.dump(cfg, open(cfg_path, "w"), indent=2, sort_keys=True)
    return dst


def reference(folder: str, base: str) -> dict:
    import mlx.core as mx
    from safetensors.numpy import load_file
    from mlx_vlm.utils import load_model
    from mlx_vlm.speculative.drafters.qwen3_5_mtp import ModelConfig, Qwen3_5MTPDraftModel

    mx.set_default_device(mx.cpu)
    target = load_model(__import__("pathlib").Path(folder))
    cfg = json.load(open(os.path.join(folder, "config.json")))
    drafter = Qwen3_5MTPDraftModel(ModelConfig.from_dict({"text_config": cfg["text_config"]}))
    raw = {k: mx.array(v) for k, v in load_file(os.path.join(folder, "model.safetensors")).items() if k.startswith("mtp.")}
    drafter.load_weights(list(drafter.sanitize(raw).items()), strict=True)
    drafter.reset(target)

    prompt = json.load(open(os.path.join(TINY, base, "reference.json")))["prompt_ids"]
    ids = mx.array([prompt], dtype=mx.int32)
    out = target.language_model(ids, cache=None, return_hidden=True)
    hidden = out.hidden_states[-1]  # [1, L, H], after the final norm
    bonus = int(mx.argmax(out.logits[0, -1]).item())
    shifted = mx.concatenate([ids[:, 1:], mx.array([[bonus]], dtype=mx.int32)], axis=1)
    h = drafter._forward_tokens(shifted, hidden, mx.int32)
    prefill_logits = drafter._lm_head_fn(h)[0].astype(mx.float32)
    # draft_block, greedy: each draft fed back with the head's own hidden state.
    tok, h_prev, draft_ids, draft_logits = mx.argmax(prefill_logits[-1]).reshape(1, 1), h[:, -1:, :], [], []
    for _ in range(DRAFTS):
        draft_ids.append(int(tok.item()))
        h_prev = drafter._forward_token(tok, h_prev, mx.int32)
        logits = drafter._lm_head_fn(h_prev)[0, -1].astype(mx.float32)
        draft_logits.append(logits)
        tok = mx.argmax(logits).reshape(1, 1)
    mx.eval(prefill_logits, *draft_logits)
    rounded = lambda a: [[float(f"{x:.7g}") for x in row] for row in np.array(a).tolist()]
    return dict(
        reference="mlx-vlm 0.7.10 Qwen3_5MTPDraftModel, mlx 0.32.4 CPU, float32",
        prompt_ids=prompt, bonus=bonus, prefill_logits=rounded(prefill_logits),
        draft_ids=draft_ids[1:] + [int(tok.item())], first_draft=draft_ids[0], draft_logits=rounded(mx.stack(draft_logits)),
    )


def main() -> None:
    for base, seed in BASES:
        folder = make_folder(base, seed)
        ref = reference(folder, base)
        with open(os.path.join(folder, "mtp_reference.json"), "w") as f:
            json.dump(ref, f, separators=(",", ":"))
        print(base + "_mtp", "bonus", ref["bonus"], "first draft", ref["first_draft"], "drafts", ref["draft_ids"])


if __name__ == "__main__":
    sys.exit(main())
