#!/usr/bin/env python3
"""MLX-quantized copies of the tiny Gemma 4 checkpoints, made and run by mlx-lm itself.

    .deps/bench/venv/bin/python tests/reference/make_gemma4_mlx4.py

Needs mlx 0.32.2 + mlx-lm 0.32.2 (and numpy). Reads fixtures/tiny/gemma4 and gemma4_moe (made by
make_gemma4.py), deletes and rewrites the folders below. CI never runs this; the outputs are committed.

What it makes, under tests/reference/fixtures/tiny/:

  gemma4_mlx4        mlx_lm.convert of gemma4 with quantize=True, q_bits 4, q_group_size 32, dtype float32,
                     and mlx-lm's own gemma4 quant_predicate (which quantizes everything it can).
  gemma4_mlx4_mixed  the same convert with a quant_predicate that writes per-layer overrides into
                     config.json's `quantization`, as mlx-lm's mixed recipes do: the embedding (also the
                     tied output head) 8-bit in groups of 64, layer 1's MLP 8-bit in groups of 64, layer
                     3's o_proj left unquantized (mlx-lm records nothing for it: no `.scales`).
  gemma4_moe_mlx4    mlx_lm.convert of gemma4_moe, q_bits 4, group 32: experts become
                     `experts.switch_glu.{gate,up,down}_proj` (split from transformers' gate_up_proj)
                     quantized per expert, and mlx-lm's predicate puts every `router.proj` at 8 bits,
                     group 64 (per-layer overrides, as the released MoE conversions have).
                     mlx-lm 0.32.2 passes `global_scale=None` to mx.gather_qmm, which mlx 0.32.2 does
                     not accept: gather_qmm_shim() drops that None (no change to the math).
  gemma4_ple_mlx4    quantized embed_tokens_per_layer: the tiny gemma4's table is 80 wide (5 layers x 16),
                     which no MLX group size divides, so mlx-lm leaves it float. This one is a text-only
                     gemma4_text built here with mlx-lm's own random init (seed 4004, norms 1 + 0.3 r,
                     layer_scalar in [0.5, 1.5]): gemma4_moe's config without MoE, 4 layers sliding/full,
                     per-layer inputs 16 wide (table [400, 64]), KV sharing 2, double-wide MLPs; then
                     the same convert (4-bit, group 32), which quantizes the table. It has no
                     transformers reference of its own (mlx-lm agrees with transformers to ~1e-5 on the
                     float gemma4 and gemma4_moe above); the prompt is gemma4_moe's.

What mlx-lm does with Gemma 4 (and so what mlx-community text checkpoints look like):
  - the towers (vision_tower, audio_tower, embed_vision, embed_audio) are dropped; config.json keeps
    vision_config/audio_config. Names become `language_model.model.*` (multimodal) or `model.*`
    (gemma4_text); the tied head is the (quantized) embedding.
  - KV-shared layers' k_proj/v_proj/k_norm are dropped (transformers 5.24 does not write them either).
  - every nn.Linear and nn.Embedding whose input width is a multiple of the group size is quantized
    (MLX supports groups of 32, 64 and 128 only). In the tiny gemma4 that leaves two kinds in float32:
    per_layer_projection (input 16) and the per-layer-input embedding table embed_tokens_per_layer
    ([400, 5 layers x 16] = 80 wide). The released models' are 256 wide per layer and get quantized.
    The engine takes both through the same quantized Embedding as embed_tokens.

Config: mlx-lm 0.32.2's gemma4_text reads `global_head_dim` and `num_global_key_value_heads` (the keys
of the released config.json), not the `per_layer_config` that transformers 5.24 writes for the tiny
model (it would default global_head_dim to 512); and gemma4's top-level `vocab_size` (default 262144)
overrides text_config's. So the converter reads a copy of the source folder whose config.json has
those keys (global_head_dim 32, num_global_key_value_heads 1, vocab_size 400) and no per_layer_config,
i.e. the released models' dialect; the converted folder's config.json is that plus `quantization`.
Before quantizing, the float copy is run through mlx-lm and compared with transformers' reference
(printed, asserted within 1e-3), so the reference below comes from an mlx-lm that agrees with
transformers on the unquantized model.

reference.json: prompt_ids (the source fixture's, i.e. fidelity_gemma4.rs's), first_logits (vocab
floats), steps 16, greedy_ids, gaps/min_gap, producer, compute; computed by mlx-lm on the quantized
folder in float32 (quantized matmuls with float32 scales/biases and activations) with
make_prompt_cache and a plain argmax loop, the whole prompt in one call.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
STEPS = 16
Q_BITS, Q_GROUP = 4, 32
KEEP = ("config.json", "model.safetensors", "generation_config.json")
COPY = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, obj, indent=2):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent)
        f.write("\n")


def released_dialect(cfg: dict) -> dict:
    """The config keys mlx-lm's gemma4 reads (see the docstring)."""
    cfg = json.loads(json.dumps(cfg))
    text = cfg.get("text_config", cfg)
    per_layer = text.pop("per_layer_config", None) or {}
    full = [v for v in per_layer.values()]
    if full:
        assert all(v == full[0] for v in full), per_layer
        text["global_head_dim"] = full[0]["head_dim"]
        text["num_global_key_value_heads"] = full[0]["num_key_value_heads"]
    if "text_config" in cfg:
        cfg["vocab_size"] = text["vocab_size"]
    return cfg


def gap(logits):
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def greedy(model, ids):
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    first = np.array(logits.astype(mx.float32))
    new, gaps = [], []
    for _ in range(STEPS):
        l = np.array(logits.astype(mx.float32))
        gaps.append(gap(l))
        new.append(int(l.argmax()))
        logits = model(mx.array([[new[-1]]]), cache=cache)[0, -1]
    return first, new, gaps


def source_copy(src: str, tmp: str) -> str:
    """The source folder with a released-dialect config.json, and its float cross-check."""
    from mlx_lm.utils import load

    dst = os.path.join(tempfile.mkdtemp(dir=tmp), os.path.basename(src))
    shutil.copytree(src, dst)
    write_json(os.path.join(dst, "config.json"), released_dialect(read_json(os.path.join(src, "config.json"))))
    ref = read_json(os.path.join(src, "reference.json"))
    model, _ = load(dst)
    first, new, _ = greedy(model, ref["prompt_ids"])
    diff = float(np.abs(first - np.array(ref["first_logits"], dtype=np.float32)).max())
    same = sum(a == b for a, b in zip(new, ref["greedy_ids"]))
    print(f"  mlx-lm float32 vs transformers on {os.path.basename(src)}: max |dlogit| {diff:.2e}, "
          f"greedy ids agree {same}/{STEPS}")
    assert diff < 1e-3 and new == ref["greedy_ids"][:STEPS], "mlx-lm disagrees with transformers on the float model"
    return dst


def mixed_predicate(path, module):
    if path.endswith("embed_tokens"):
        return {"group_size": 64, "bits": 8}
    if ".layers.1.mlp." in path:
        return {"group_size": 64, "bits": 8}
    if path.endswith(".layers.3.self_attn.o_proj"):
        return False
    return True


def build(name: str, src: str, tmp: str, predicate=None, recipe: str = "", float_copy=None) -> None:
    import mlx.core as mx
    import mlx_lm
    from mlx_lm.convert import convert
    from mlx_lm.utils import load

    src_ref = read_json(os.path.join(OUT, src, "reference.json"))
    float_copy = float_copy or source_copy(os.path.join(OUT, src), tmp)
    dst = os.path.join(OUT, name)
    if os.path.exists(dst):
        shutil.rmtree(dst)
    convert(hf_path=float_copy, mlx_path=dst, quantize=True, q_bits=Q_BITS, q_group_size=Q_GROUP,
            dtype="float32", quant_predicate=predicate)
    for f in os.listdir(dst):
        if f not in KEEP:
            os.remove(os.path.join(dst, f))
    for f in COPY:
        shutil.copy(os.path.join(float_copy, f), dst)

    model, _ = load(dst)
    from mlx.utils import tree_flatten
    dtypes = {str(v.dtype) for _, v in tree_flatten(model.parameters()) if v.dtype != mx.uint32}
    assert dtypes == {"mlx.core.float32"}, dtypes
    ids = src_ref["prompt_ids"]
    first, new, gaps = greedy(model, ids)
    cfg = read_json(os.path.join(dst, "config.json"))
    compute = (f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}) on the CPU: mlx_lm.convert of {src} "
               f"(released-dialect config) with quantize=True, q_bits={Q_BITS}, q_group_size={Q_GROUP}, "
               f"dtype float32{recipe}; quantized layers packed in uint32 with float32 scales and biases, "
               "the rest float32, activations float32; make_prompt_cache + plain argmax loop")
    ref = {
        "name": name,
        "architecture": cfg["architectures"][0],
        "model_type": cfg["model_type"],
        "producer": f"mlx-lm {mlx_lm.__version__}",
        "dtype": "float32",
        "compute": compute,
        "quantization": cfg["quantization"],
        "prompt_ids": ids,
        "first_logits": [float(x) for x in first.astype(np.float32)],
        "steps": STEPS,
        "greedy_ids": new,
        "gaps": gaps,
        "min_gap": min(gaps),
    }
    if float_copy.startswith(tmp) and os.path.basename(float_copy) == src:
        ref["float_first_logits_max_diff"] = float(np.abs(first - np.array(src_ref["first_logits"], np.float32)).max())
    write_json(os.path.join(dst, "reference.json"), ref, indent=1)
    size = sum(os.path.getsize(os.path.join(dst, f)) for f in os.listdir(dst))
    print(f"{name}: {size / 1024:.0f} KiB, min_gap {ref['min_gap']:.4f}, "
          f"vs float reference max |dlogit| {ref.get('float_first_logits_max_diff', float('nan')):.3f}, greedy {new}")
    assert ref["min_gap"] >= 1e-2, "near tie in the quantized greedy run"


def ple_source(tmp: str) -> str:
    """A float gemma4_text folder (mlx-lm's random init, seeded) whose per-layer-input table is
    quantizable: 4 layers x 16 = 64 wide. See gemma4_ple_mlx4 in the docstring."""
    import mlx.core as mx
    from mlx.utils import tree_flatten, tree_map_with_path
    from mlx_lm.models import gemma4_text

    cfg = read_json(os.path.join(OUT, "gemma4_moe", "config.json"))
    cfg = released_dialect(cfg)
    cfg.update(enable_moe_block=False, num_experts=None, top_k_experts=None, moe_intermediate_size=None,
               intermediate_size=128, hidden_size_per_layer_input=16, num_kv_shared_layers=2,
               use_double_wide_mlp=True)
    mx.random.seed(4004)
    model = gemma4_text.Model(gemma4_text.ModelArgs.from_dict(cfg))

    def randomize(path, v):
        if path.endswith("norm.weight"):
            return 1 + 0.3 * mx.random.normal(v.shape)
        if path.endswith("layer_scalar"):
            return mx.random.uniform(0.5, 1.5, v.shape)
        return v

    model.update(tree_map_with_path(randomize, model.parameters()))
    dst = os.path.join(tmp, "gemma4_ple")
    os.makedirs(dst)
    mx.save_safetensors(os.path.join(dst, "model.safetensors"), dict(tree_flatten(model.parameters())),
                        metadata={"format": "mlx"})
    write_json(os.path.join(dst, "config.json"), cfg)
    for f in COPY + ("generation_config.json",):
        shutil.copy(os.path.join(OUT, "gemma4_moe", f), dst)
    return dst


def gather_qmm_shim():
    """mlx-lm 0.32.2's QuantizedSwitchLinear passes `global_scale` (None unless nvfp4 with a tensor
    scale) to mx.gather_qmm, which mlx 0.32.2 does not take yet; drop it when None."""
    import mlx.core as mx

    original = mx.gather_qmm

    def gather_qmm(*args, global_scale=None, **kwargs):
        assert global_scale is None, "nvfp4 global scales need a newer mlx"
        return original(*args, **kwargs)

    mx.gather_qmm = gather_qmm


def main():
    gather_qmm_shim()
    with tempfile.TemporaryDirectory() as tmp:
        build("gemma4_mlx4", "gemma4", tmp)
        build("gemma4_mlx4_mixed", "gemma4", tmp, mixed_predicate,
              " and per-layer overrides (embed_tokens and layer 1's MLP 8-bit group 64, layer 3's o_proj "
              "unquantized)")
        build("gemma4_moe_mlx4", "gemma4_moe", tmp)
        build("gemma4_ple_mlx4", "gemma4_moe", tmp, float_copy=ple_source(tmp),
              recipe=" (a random gemma4_text with a quantizable per-layer-input table, see the docstring)")


if __name__ == "__main__":
    sys.exit(main())
