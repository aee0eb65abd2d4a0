#!/usr/bin/env python3
"""Tiny random Qwen3.5 / Qwen3.5-MoE / Qwen3-Next checkpoints (hybrid Gated DeltaNet + gated attention)
with float32 reference outputs.

    /opt/confab-ref/bin/python tests/reference/make_qwen3_5.py

Needs the reference venv (see make_tiny_models.py: transformers 5.24.0, torch on the CPU, tokenizers,
safetensors, numpy, mlx + mlx-lm 0.32.2). Works offline: models are built from configs, tokenizers are
trained on make_tiny_models.CORPUS. CI never runs this; the outputs are committed. It deletes and rewrites
only the four folders below (about 3.4 MB in all) and takes about 30 seconds on the CPU. The outputs are
byte-for-byte reproducible on the same library versions.

The linear-attention layers run transformers' own torch code: the venv has neither flash-linear-attention
(`fla`), nor `causal_conv1d`, nor `kernels`, so torch_chunk_gated_delta_rule (every prefill, chunk size 64),
torch_recurrent_gated_delta_rule (single-token decode with a cache) and the torch causal_conv1d_fn /
causal_conv1d_update run; the script asserts that they were called and records it in `compute`.

What it makes, under tests/reference/fixtures/tiny/ (one Hugging Face folder per name):

  qwen3_5       Qwen3_5ForConditionalGeneration (model_type qwen3_5), laid out like the released
                Qwen3.5-0.8B: nested text_config (qwen3_5_text) + a tiny vision_config (1 block, hidden 32,
                patch 4: its model.visual.* weights are in the checkpoint; the engine may skip them).
                Text: vocab 448, hidden 64, 4 layers linear/linear/linear/full (layer_types and
                full_attention_interval 4), MLP 128, tied embeddings.
                Full attention: 4 heads, 2 kv heads, head_dim 32, output gate (q_proj is 2 x 4 x 32 rows,
                per head [query | gate]), q/k norms, partial RoPE 0.25 (8 of 32 dims rotate) with
                rope_theta 1e7 and the real mrope keys (mrope_section [2, 1, 1] sums to the 4 rotated
                frequencies, mrope_interleaved true; for text it is plain 1-D RoPE).
                Gated DeltaNet: 2 key heads x 16, 4 value heads x 16 (each key head serves 2 value heads),
                conv kernel 4.
  qwen3_5_moe   Qwen3_5MoeForConditionalGeneration (qwen3_5_moe), same shape of folder; vocab 416,
                head_dim 16 (4 of 16 dims rotate, mrope_section [1, 1, 0]), DeltaNet 2 key heads x 16,
                2 value heads x 24 (Dv != Dk); every layer MoE: 4 experts, top-2 (always renormalised),
                moe_intermediate 32, shared expert 48 with its sigmoid shared_expert_gate. The experts are
                stored FUSED as the released checkpoints are: mlp.experts.gate_up_proj [4, 64, 64]
                (rows [gate | up]) and mlp.experts.down_proj [4, 64, 32] (transformers 5.24's
                save_pretrained would write them per expert; the script rewrites the safetensors).
  qwen3_next    Qwen3NextForCausalLM (qwen3_next), flat config in the released dialect (transformers-4
                keys: rope_theta, partial_rotary_factor, full_attention_interval; no rope_parameters, no
                layer_types), vocab 480, untied lm_head (as Qwen3-Next-80B), head_dim 32, fused
                in_proj_qkvz / in_proj_ba grouped by key head (2 key heads x 16, 4 value heads x 16),
                every layer MoE (decoder_sparse_step 1, mlp_only_layers []), 4 experts top-2,
                norm_topk_prob true, experts per expert (mlp.experts.{e}.gate_proj.weight ...) as released.
  qwen3_5_mlx4  mlx_lm.convert of qwen3_5 (mlx-lm 0.32.2 reads the vision-carrying folder itself: its
                sanitize drops model.visual.*, and its config.json has no vision_config): affine 4-bit,
                group 32, every Linear and the tied embedding quantized, scales/biases float32; names
                language_model.model.layers.*; conv1d [C, K, 1] and the norms float32, the zero-centred
                norms stored as 1 + w (mlx-lm's sanitize adds 1; the gated DeltaNet norm is not shifted);
                text_config.rope_parameters has "type": "default" (mlx-lm renames rope_type).
                Reference computed by mlx-lm in float32.

Norm weights in the float folders are random: the zero-centred RMSNorms (input/post-attention/final/q/k,
y = x̂ * (1 + w)) store w = 0.3 r (final norm 3 + 0.3 r); the DeltaNet output norm (plain weight,
y = x̂ * w * silu(z)) stores 1 + 0.3 r. A_log = log(U(0.02, 1)), dt_bias = 0.5 r.

Every folder holds config.json, generation_config.json, model.safetensors (float32; *_mlx4: uint32 +
float32 scales/biases), tokenizer.json + tokenizer_config.json (byte-level BPE as make_tiny_models.py, vocab
= the model's vocab_size, ids 0..2 = <|endoftext|> <|im_start|> <|im_end|>, ChatML-like template) and
reference.json in make_tiny_models.py's schema (prompt_ids 40, first_logits, steps 32, greedy_ids, gaps,
min_gap >= 1e-2 with prompts re-drawn, chat {messages, text, ids}, compute, ...). `config_dialect` is
"transformers5" when config.json (or its text_config) has rope_parameters. For the MoE folders a prompt is
also re-drawn when, at any prefill or greedy position of any layer, the k-th and (k+1)-th router
probabilities are closer than 1e-3 (a near-tie in expert selection would flip on float32 rounding alone);
`router_min_margin` records the smallest margin.

Checks done on the way (printed, not stored): each reloaded folder's parameters equal the in-memory
model's bit for bit (catches a weight that silently failed to load); the cached greedy logits
(chunked prefill + recurrent decode) agree with one uncached forward over prompt + greedy ids;
mlx-lm float32 on every float folder against transformers' reference.
"""
import copy
import json
import os
import shutil
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tiny_models import (  # noqa: E402
    BOS_ID, EOS_ID, MIN_DISTINCT, MIN_GAP, OUT, PAD_ID, Q_BITS, Q_GROUP, STEPS, chat_example, gap, make_tokenizer,
    mlx_greedy, mlx_tree, prompt_ids, read_json, write_json)

NAMES = ["qwen3_5", "qwen3_5_moe", "qwen3_next", "qwen3_5_mlx4"]
ROUTER_MARGIN = 1e-3
F64_FIRST = 3e-5  # |float32 - float64| allowed on first_logits (the test allows 1e-4)
F64_STEPS = 1e-4  # ... and on every cached greedy step
RESIDUAL_SCALE = 2.0  # o_proj / out_proj / down_proj weights: RESIDUAL_SCALE / sqrt(fan_in)
FINAL_NORM = 2.0  # final norm weight FINAL_NORM + 0.3 r (effective 1 + FINAL_NORM)
GENERATION = dict(do_sample=True, temperature=0.6, top_p=0.95, top_k=20)
VISION = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, patch_size=4, temporal_patch_size=2,
              spatial_merge_size=2, num_position_embeddings=16)
IDS = dict(bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID)


def rope(head_dim: int, section: list) -> dict:
    assert sum(section) * 2 == int(head_dim * 0.25), "mrope_section must cover the rotated frequencies"
    return {"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
            "mrope_section": section, "mrope_interleaved": True}


def specs():
    from transformers import (Qwen3_5Config, Qwen3_5ForConditionalGeneration, Qwen3_5MoeConfig,
                              Qwen3_5MoeForConditionalGeneration, Qwen3NextConfig, Qwen3NextForCausalLM)
    common = dict(hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                  max_position_embeddings=1024, rms_norm_eps=1e-6, hidden_act="silu", linear_conv_kernel_dim=4,
                  layer_types=["linear_attention"] * 3 + ["full_attention"], **IDS)
    qwen3_5_text = dict(common, vocab_size=448, intermediate_size=128, head_dim=32, linear_num_key_heads=2,
                        linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
                        tie_word_embeddings=True, rope_parameters=rope(32, [2, 1, 1]))
    moe_text = dict(common, vocab_size=416, intermediate_size=128, head_dim=16, linear_num_key_heads=2,
                    linear_num_value_heads=2, linear_key_head_dim=16, linear_value_head_dim=24,
                    tie_word_embeddings=True, rope_parameters=rope(16, [1, 1, 0]), num_experts=4,
                    num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48)
    next_cfg = dict(common, vocab_size=480, intermediate_size=128, head_dim=32, linear_num_key_heads=2,
                    linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
                    tie_word_embeddings=False,
                    rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25},
                    num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    shared_expert_intermediate_size=48, norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[])
    return [
        dict(name="qwen3_5", seed=35001, cls=Qwen3_5ForConditionalGeneration, moe=False,
             config=Qwen3_5Config(text_config=qwen3_5_text, vision_config=dict(VISION, out_hidden_size=64),
                                  tie_word_embeddings=True)),
        dict(name="qwen3_5_moe", seed=35002, cls=Qwen3_5MoeForConditionalGeneration, moe=True,
             config=Qwen3_5MoeConfig(text_config=moe_text, vision_config=dict(VISION, out_hidden_size=64),
                                     tie_word_embeddings=True)),
        dict(name="qwen3_next", seed=35003, cls=Qwen3NextForCausalLM, moe=True, config=Qwen3NextConfig(**next_cfg)),
    ]


def text_config(cfg):
    return getattr(cfg, "text_config", None) or cfg


def randomize(model, seed: int, hidden: int) -> None:
    """make_tiny_models.randomize's recipe, for these weight names (see the module docstring for norms)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if "visual" in name:
                if p.ndim == 1:
                    p.copy_((1.0 if "norm.weight" in name else 0.0) + 0.1 * r)
                else:
                    p.copy_(r / (p[0].numel() ** 0.5))
            elif name.endswith("language_model.norm.weight") or name == "model.norm.weight":
                p.copy_(FINAL_NORM + 0.3 * r)
            elif name.endswith("linear_attn.norm.weight"):
                p.copy_(1.0 + 0.3 * r)
            elif "norm" in name:
                p.copy_(0.3 * r)
            elif name.endswith("A_log"):
                u = torch.rand(p.shape, generator=g, dtype=torch.float32)
                p.copy_(torch.log(0.02 + 0.98 * u))
            elif name.endswith("dt_bias"):
                p.copy_(0.5 * r)
            elif name.endswith("conv1d.weight"):
                p.copy_(r / p.shape[-1] ** 0.5)
            elif "embed_tokens" in name:
                p.copy_(0.2 * r)
            elif "lm_head" in name:
                p.copy_(r * 2.0 / p.shape[1] ** 0.5)
            elif name.endswith("experts.down_proj"):
                p.copy_(r * RESIDUAL_SCALE / p.shape[-1] ** 0.5)
            elif name.endswith("experts.gate_up_proj"):
                p.copy_(r / p.shape[-1] ** 0.5)
            elif "o_proj" in name or "down_proj" in name or "out_proj" in name:
                p.copy_(r * RESIDUAL_SCALE / p.shape[1] ** 0.5)
            else:
                p.copy_(r / p.shape[1] ** 0.5)


# ----------------------------------------------------------------------------------------------------
# Folder writing

def fix_config(name: str, folder: str) -> None:
    path = os.path.join(folder, "config.json")
    cfg = read_json(path)
    if "text_config" in cfg:
        tc = cfg["text_config"]
        # The released configs carry these; mlx-lm 0.32.2 picks linear/full layers by full_attention_interval
        # only (it ignores layer_types), transformers by layer_types.
        tc["full_attention_interval"] = 4
        tc["attn_output_gate"] = True
        cfg["text_config"] = dict(sorted(tc.items()))
    else:
        # Qwen3-Next as released (transformers-4 keys); mlx-lm 0.32.2's qwen3_next needs rope_theta and
        # partial_rotary_factor at the top level (no defaults), transformers 5 folds them into rope_parameters.
        rp = cfg.pop("rope_parameters")
        assert rp["rope_type"] == "default"
        cfg.pop("layer_types")
        cfg["rope_theta"] = rp["rope_theta"]
        cfg["partial_rotary_factor"] = rp["partial_rotary_factor"]
        cfg["rope_scaling"] = None
        cfg["full_attention_interval"] = 4
        cfg["torch_dtype"] = cfg.pop("dtype")
        cfg = dict(sorted(cfg.items()))
    write_json(path, cfg)


def fuse_experts(folder: str) -> None:
    """Rewrite per-expert weights (what transformers 5.24 saves) as the released fused tensors."""
    from safetensors.torch import load_file, save_file

    path = os.path.join(folder, "model.safetensors")
    w = load_file(path)
    out, experts = {}, {}
    for k, v in w.items():
        if ".mlp.experts." in k:
            prefix, rest = k.split(".mlp.experts.")
            e, proj, _ = rest.split(".")
            experts.setdefault(prefix, {}).setdefault(proj, {})[int(e)] = v
        else:
            out[k] = v
    for prefix, d in experts.items():
        n = len(d["gate_proj"])
        gate = torch.stack([d["gate_proj"][e] for e in range(n)])
        up = torch.stack([d["up_proj"][e] for e in range(n)])
        out[f"{prefix}.mlp.experts.gate_up_proj"] = torch.cat([gate, up], dim=1).contiguous()
        out[f"{prefix}.mlp.experts.down_proj"] = torch.stack([d["down_proj"][e] for e in range(n)]).contiguous()
    save_file(dict(sorted(out.items())), path, metadata={"format": "pt"})


def hf_load(cls, folder: str):
    return cls.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager",
                               experts_implementation="eager").eval()


def same_params(a, b, name: str) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys(), f"{name}: parameter names differ"
    for k in sa:
        assert torch.equal(sa[k], sb[k]), f"{name}: {k} did not load back identically"


# ----------------------------------------------------------------------------------------------------
# Reference runs

class TorchPathProbe:
    """Counts calls of transformers' torch GDN / conv functions (proves the fallback path ran)."""

    FUNCS = ["torch_chunk_gated_delta_rule", "torch_recurrent_gated_delta_rule", "causal_conv1d_fn",
             "causal_conv1d_update"]

    def __init__(self, module):
        self.module, self.calls, self.saved = module, {f: 0 for f in self.FUNCS}, {}
        for f in self.FUNCS:
            orig = getattr(module, f)
            self.saved[f] = orig

            def wrap(*a, _f=f, _orig=orig, **k):
                self.calls[_f] += 1
                return _orig(*a, **k)
            setattr(module, f, wrap)

    def restore(self):
        for f, orig in self.saved.items():
            setattr(self.module, f, orig)


class RouterProbe:
    """Smallest gap between the k-th and (k+1)-th router probability over every token and MoE layer."""

    def __init__(self, model, top_k: int):
        self.min_margin, self.hooks = float("inf"), []
        for name, m in model.named_modules():
            if name.endswith("mlp.gate"):
                self.hooks.append(m.register_forward_hook(self.hook))
        assert self.hooks
        self.k = top_k

    def hook(self, module, inputs, output):
        logits = output[0].detach().float()
        p = torch.softmax(logits, dim=-1).sort(dim=-1, descending=True).values
        self.min_margin = min(self.min_margin, float((p[:, self.k - 1] - p[:, self.k]).min()))

    def reset(self):
        self.min_margin = float("inf")


def hf_greedy(model, ids: list):
    """Plain greedy loop with the model's cache: no logits processors, eos ignored. Also returns each
    step's logits (for the uncached cross-check)."""
    new, gaps, steps = [], [], []
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            logits = out.logits[0, -1].float().numpy().copy()
            steps.append(logits)
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), past_key_values=out.past_key_values, use_cache=True)
    return first, new, gaps, steps


def f64_check(model64, ids, first, new, steps):
    """Conditioning: float64 (one uncached forward over prompt + greedy ids) against the float32 run."""
    with torch.no_grad():
        logits = model64(input_ids=torch.tensor([ids + new[:-1]]), use_cache=False).logits[0].numpy()
    full = logits[len(ids) - 1:]
    return float(np.abs(full[0] - first).max()), float(np.abs(full - np.stack(steps)).max())


def robust_prompt(run, seed: int, vocab: int, router=None, model64=None):
    """make_tiny_models.robust_prompt, plus the router-margin rule for MoE models and the float64 rule."""
    for attempt in range(20):
        ids = prompt_ids(seed + attempt, vocab)
        if router:
            router.reset()
        first, new, gaps, steps = run(ids)
        margin = router.min_margin if router else None
        d64 = f64_check(model64, ids, first, new, steps) if model64 is not None else (0.0, 0.0)
        if (min(gaps) >= MIN_GAP and len(set(new)) >= MIN_DISTINCT and (margin is None or margin >= ROUTER_MARGIN)
                and d64[0] <= F64_FIRST and d64[1] <= F64_STEPS):
            return attempt, ids, first, new, gaps, steps, margin, d64
        print(f"  prompt attempt {attempt}: min gap {min(gaps):.2e}, {len(set(new))} distinct ids, router margin "
              f"{margin}, float64 diff first {d64[0]:.1e} steps {d64[1]:.1e}, drawing another")
    raise RuntimeError("no robust prompt")


def dialect(cfg: dict) -> str:
    return "transformers5" if "rope_parameters" in cfg.get("text_config", cfg) else "transformers4"


def reference(name, folder, seed, attempt, ids, first, new, gaps, producer, attn, compute, extra=None):
    cfg = read_json(os.path.join(folder, "config.json"))
    ref = {
        "name": name,
        "architecture": cfg["architectures"][0],
        "model_type": cfg["model_type"],
        "config_dialect": dialect(cfg),
        "producer": producer,
        "attn_implementation": attn,
        "dtype": "float32",
        "compute": compute,
        "seed": seed,
        "prompt_attempt": attempt,
        "prompt_ids": ids,
        "first_logits": [float(x) for x in first.astype(np.float32)],
        "steps": STEPS,
        "greedy_ids": new,
        "gaps": gaps,
        "min_gap": min(gaps),
        "min_gap_step": int(np.argmin(gaps)),
        "eos_token_id": EOS_ID,
        "chat": chat_example(folder),
    }
    ref.update(extra or {})
    return ref


def build_hf(spec) -> dict:
    from transformers import GenerationConfig, __version__ as tf_version

    name, seed, cfg, cls = spec["name"], spec["seed"], spec["config"], spec["cls"]
    tcfg = text_config(cfg)
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    torch.manual_seed(seed)
    model = cls(cfg).to(torch.float32).eval()
    randomize(model, seed, tcfg.hidden_size)
    model.generation_config = GenerationConfig(**IDS, **GENERATION)
    model.save_pretrained(folder)
    fix_config(name, folder)
    if name == "qwen3_5_moe":
        fuse_experts(folder)
    make_tokenizer(folder, tcfg.vocab_size)

    loaded = hf_load(cls, folder)
    same_params(model, loaded, name)
    del model
    modeling = sys.modules[cls.__module__]
    probe = TorchPathProbe(modeling)
    router = RouterProbe(loaded, tcfg.num_experts_per_tok) if spec["moe"] else None
    model64 = copy.deepcopy(loaded).to(torch.float64)
    attempt, ids, first, new, gaps, steps, margin, d64 = robust_prompt(
        lambda i: hf_greedy(loaded, i), seed, tcfg.vocab_size, router, model64)
    probe.restore()
    print(f"  {name}: torch path calls {probe.calls}")
    assert all(probe.calls.values()), probe.calls
    print(f"  {name}: float32 vs float64 (uncached): first_logits {d64[0]:.1e}, all 32 steps {d64[1]:.1e}")
    compute = (f"transformers {tf_version}, torch {torch.__version__} on the CPU, float32 weights and activations, "
               f"{cls.__name__}.from_pretrained(attn_implementation='eager'); linear-attention layers on "
               "transformers' torch fallback (no fla / causal_conv1d / kernels installed): "
               "torch_chunk_gated_delta_rule (chunk 64) + causal_conv1d_fn for the prefill, "
               "torch_recurrent_gated_delta_rule + causal_conv1d_update for each decode step; MoE experts "
               "experts_implementation='eager' (per-expert loop); the model's own cache from use_cache=True, plain "
               "argmax loop. float64_max_diff: the same weights in float64, one uncached forward over prompt + "
               "greedy ids, against these float32 logits")
    extra = {"float64_max_diff": {"first_logits": d64[0], "steps": d64[1]}}
    if margin is not None:
        extra["router_min_margin"] = margin
    ref = reference(name, folder, seed, attempt, ids, first, new, gaps, f"transformers {tf_version}", "eager",
                    compute, extra)
    write_json(os.path.join(folder, "reference.json"), ref, indent=1)
    print(f"{name}: min_gap {ref['min_gap']:.4f} (attempt {attempt}), greedy {new[:12]}...")
    return ref


def mlx_crosscheck(name: str, ref: dict) -> float:
    import mlx.core as mx
    from mlx_lm.utils import load

    model, _ = load(os.path.join(OUT, name))
    model.set_dtype(mx.float32)
    first, new, _ = mlx_greedy(model, ref["prompt_ids"])
    diff = float(np.abs(first - np.array(ref["first_logits"], dtype=np.float32)).max())
    same = sum(a == b for a, b in zip(new, ref["greedy_ids"]))
    print(f"  mlx-lm float32 cross-check {name}: max |dlogit| {diff:.2e}, greedy ids agree {same}/{STEPS}")
    return diff


def build_mlx4(src: str, seed: int) -> dict:
    import mlx.core as mx
    import mlx_lm
    from mlx_lm.convert import convert
    from mlx_lm.utils import load

    src_folder, name = os.path.join(OUT, src), f"{src}_mlx4"
    dst = os.path.join(OUT, name)
    convert(hf_path=src_folder, mlx_path=dst, quantize=True, q_bits=Q_BITS, q_group_size=Q_GROUP, dtype="float32")
    for f in os.listdir(dst):
        if f not in ("config.json", "model.safetensors", "generation_config.json"):
            os.remove(os.path.join(dst, f))
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(src_folder, f), dst)

    model, _ = load(dst)
    dtypes = {str(v.dtype) for _, v in mlx_tree(model.parameters()) if v.dtype != mx.uint32}
    assert dtypes == {"mlx.core.float32"}, dtypes
    vocab = read_json(os.path.join(dst, "config.json"))["text_config"]["vocab_size"]

    def run(ids):
        first, new, gaps = mlx_greedy(model, ids)
        return first, new, gaps, None

    attempt, ids, first, new, gaps, _, _, _ = robust_prompt(run, seed, vocab)
    compute = (f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}) on the CPU: mlx_lm.convert of {src} (the "
               "vision-carrying folder; sanitize drops model.visual.*, moves conv1d to [C, K, 1] and adds 1 to the "
               f"zero-centred norms) with quantize=True, q_bits={Q_BITS}, q_group_size={Q_GROUP}, dtype float32 "
               "(affine: every Linear and the tied embed_tokens packed in uint32 with float32 scales and biases); "
               "conv1d, norms, A_log, dt_bias float32, activations float32 throughout; gated delta rule by "
               "mlx-lm's ops path (sequential recurrence; no Metal kernel on the CPU); make_prompt_cache + plain "
               "argmax loop")
    ref = reference(name, dst, seed, attempt, ids, first, new, gaps, f"mlx-lm {mlx_lm.__version__}", "mlx_lm",
                    compute)
    write_json(os.path.join(dst, "reference.json"), ref, indent=1)
    print(f"{name}: min_gap {ref['min_gap']:.4f} (attempt {attempt}), greedy {new[:12]}...")
    return ref


def main() -> None:
    t0 = time.time()
    torch.use_deterministic_algorithms(True)
    for n in NAMES:
        if os.path.exists(os.path.join(OUT, n)):
            shutil.rmtree(os.path.join(OUT, n))
    os.makedirs(OUT, exist_ok=True)
    refs = {}
    for spec in specs():
        refs[spec["name"]] = build_hf(spec)
    for name in list(refs):
        mlx_crosscheck(name, refs[name])
    refs["qwen3_5_mlx4"] = build_mlx4("qwen3_5", 35001)
    print()
    for name, ref in refs.items():
        size = sum(os.path.getsize(os.path.join(OUT, name, f)) for f in os.listdir(os.path.join(OUT, name)))
        print(f"{name:14s} {ref['config_dialect']:14s} min_gap {ref['min_gap']:.4f}  {size / 1024:.0f} KiB")
    print(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
