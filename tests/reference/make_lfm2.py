#!/usr/bin/env python3
"""Tiny random LFM2 checkpoints (gated short-convolution layers beside attention layers) with float32
reference outputs from transformers' own Lfm2ForCausalLM.

    /opt/confab-ref/bin/python tests/reference/make_lfm2.py

Needs transformers 5 with torch (its Lfm2Config, Lfm2ForCausalLM and tokenizer), numpy and safetensors;
mlx + mlx-lm 0.32.2 for a cross-check (skipped when missing). The reference venv of docs/tests.md
('Reference fixtures') has them all. Works offline. CI never runs this; the outputs are committed. It
deletes and rewrites only the folders below (about 0.5 MB) and takes a few seconds.

The reference is transformers 5.25's Lfm2ForCausalLM (torch, eager attention, float32 on the CPU):
first-step logits of a 40-token prompt and 32 greedy ids decoded through its DynamicCache (the conv
layers' windows and the attention layers' keys and values). The script fails unless
  - the same ids come from re-running the whole sequence each step without a cache (the windowed decode
    path against the plain convolution), and
  - mlx-lm 0.32.2's lfm2 (float32, its own cache) agrees within 1e-4 on the first-step logits and on
    every id, where mlx-lm is importable.

What it makes, under tests/reference/fixtures/tiny/:

  lfm2      Lfm2Config as transformers 5 writes it (model_type lfm2, `layer_types`, `intermediate_size`,
            `norm_eps`, rope_parameters theta 5e4, tied embeddings): vocab 384, hidden 48, 6 layers
            [conv, full_attention, conv, conv, full_attention, conv], 3 heads and 1 KV head (head_dim
            16, per-head q/k RMS norms), conv_L_cache 3 (each conv layer keeps its last 2 inputs),
            conv_bias false; intermediate_size 100 through LFM2's feed-forward rules
            (block_auto_adjust_ff_dim: int(2 * 100 / 3) = 66, block_ffn_dim_multiplier 1.3: int(85.8) =
            85, block_multiple_of 8: 88), so w1/w3 are [88, 48].
  lfm2_v4   the same weights and reference with the config.json LiquidAI's released checkpoints carry
            (transformers 4.5x keys: `block_ff_dim`, `full_attn_idxs` and no `layer_types`, `rope_theta`,
            `block_dim`, `conv_dim`, ...).
  lfm2_gguf lfm2.gguf: the same weights as F32 GGUF, written with the `gguf` package the way llama.cpp's
            convert_hf_to_gguf.py writes LFM2 (arch `lfm2`; `head_count_kv` per layer, 0 for conv layers;
            `shortconv.l_cache`; the feed-forward width after the rules; the conv weight squeezed to
            [C, K]; `token_embd_norm` for the final norm; q/k rows not permuted), with the tokenizer
            (gpt2 BPE) and chat template in the metadata. Compared with lfm2/reference.json.

Each folder holds config.json, generation_config.json, model.safetensors (float32; the conv weight in
PyTorch's [C, 1, K]), tokenizer.json and tokenizer_config.json copied from make_tiny_models.py's `llama`
fixture (vocab 384, ChatML template; ids 0..2 = <|endoftext|> <|im_start|> <|im_end|>), and reference.json
in make_tiny_models.py's schema.
"""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
TOKENIZER_FROM = os.path.join(OUT, "llama")
PROMPT_LEN, STEPS, MIN_GAP, MIN_DISTINCT = 40, 32, 1e-2, 8
PAD_ID, BOS_ID, EOS_ID = 0, 0, 2
SEED = 4107
THETA = 5e4
LAYER_TYPES = ["conv", "full_attention", "conv", "conv", "full_attention", "conv"]
FF_DIM = 88  # intermediate_size 100 through the rules above
CROSS_TOLERANCE = 1e-4
CHAT = [
    {"role": "system", "content": "You are a tiny model."},
    {"role": "user", "content": "What is the capital of France? Answer in one word."},
]


def write_json(path, obj, indent=2):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def read_json(path):
    with open(path) as f:
        return json.load(f)


# ----------------------------------------------------------------------------------------------------
# Checkpoint

def make_config():
    from transformers import Lfm2Config

    config = Lfm2Config(
        vocab_size=384, hidden_size=48, intermediate_size=100, num_hidden_layers=len(LAYER_TYPES),
        num_attention_heads=3, num_key_value_heads=1, max_position_embeddings=256, norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": THETA}, conv_bias=False, conv_L_cache=3,
        block_multiple_of=8, block_ffn_dim_multiplier=1.3, block_auto_adjust_ff_dim=True,
        layer_types=LAYER_TYPES, bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID,
    )
    config.architectures = ["Lfm2ForCausalLM"]
    config.dtype = "float32"
    return config


def v4_config(config):
    """The config.json of LiquidAI's LFM2 releases (transformers 4.5x): the same model in older keys."""
    return {
        "architectures": ["Lfm2ForCausalLM"], "block_auto_adjust_ff_dim": True, "block_dim": config.hidden_size,
        "block_ff_dim": config.intermediate_size, "block_ffn_dim_multiplier": config.block_ffn_dim_multiplier,
        "block_mlp_init_scale": 1.0, "block_multiple_of": config.block_multiple_of, "block_norm_eps": config.norm_eps,
        "block_out_init_scale": 1.0, "block_use_swiglu": True, "block_use_xavier_init": True, "bos_token_id": BOS_ID,
        "conv_L_cache": config.conv_L_cache, "conv_bias": False, "conv_dim": config.hidden_size,
        "conv_dim_out": config.hidden_size, "conv_use_xavier_init": True, "eos_token_id": EOS_ID,
        "full_attn_idxs": [i for i, t in enumerate(LAYER_TYPES) if t == "full_attention"],
        "hidden_size": config.hidden_size, "initializer_range": 0.02,
        "max_position_embeddings": config.max_position_embeddings, "model_type": "lfm2", "norm_eps": config.norm_eps,
        "num_attention_heads": config.num_attention_heads, "num_heads": config.num_attention_heads,
        "num_hidden_layers": config.num_hidden_layers, "num_key_value_heads": config.num_key_value_heads,
        "pad_token_id": PAD_ID, "rope_theta": THETA, "torch_dtype": "float32", "transformers_version": "4.54.0",
        "use_cache": True, "use_pos_enc": True, "vocab_size": config.vocab_size,
    }


def make_weights(config, seed):
    """make_tiny_models.randomize's scheme (spread-out logits, varied greedy text) with NumPy's generator."""
    rng = np.random.default_rng(seed)
    h, d = config.hidden_size, config.hidden_size // config.num_attention_heads
    q, kv, k = config.num_attention_heads * d, config.num_key_value_heads * d, config.conv_L_cache

    def linear(out, inp, scale=1.0):
        return (rng.standard_normal((out, inp)) * scale / inp ** 0.5).astype(np.float32)

    def norm(n=h, base=1.0):
        return (base + 0.3 * rng.standard_normal(n)).astype(np.float32)

    w = {"model.embed_tokens.weight": (rng.standard_normal((config.vocab_size, h)) * 0.2).astype(np.float32)}
    for layer, kind in enumerate(LAYER_TYPES):
        p = f"model.layers.{layer}"
        w[f"{p}.operator_norm.weight"] = norm()
        if kind == "conv":
            w[f"{p}.conv.in_proj.weight"] = linear(3 * h, h, 2.0)
            w[f"{p}.conv.conv.weight"] = (rng.standard_normal((h, 1, k)) / k ** 0.5).astype(np.float32)
            w[f"{p}.conv.out_proj.weight"] = linear(h, h, 2.0)
        else:
            w[f"{p}.self_attn.q_proj.weight"] = linear(q, h)
            w[f"{p}.self_attn.k_proj.weight"] = linear(kv, h)
            w[f"{p}.self_attn.v_proj.weight"] = linear(kv, h)
            w[f"{p}.self_attn.out_proj.weight"] = linear(h, q, 4.0)
            w[f"{p}.self_attn.q_layernorm.weight"] = norm(d)
            w[f"{p}.self_attn.k_layernorm.weight"] = norm(d)
        w[f"{p}.ffn_norm.weight"] = norm()
        w[f"{p}.feed_forward.w1.weight"] = linear(FF_DIM, h)
        w[f"{p}.feed_forward.w3.weight"] = linear(FF_DIM, h)
        w[f"{p}.feed_forward.w2.weight"] = linear(h, FF_DIM, 4.0)
    w["model.embedding_norm.weight"] = norm(base=4.0)
    return w


def write_folder(name, config_json, weights):
    from safetensors.numpy import save_file

    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    if isinstance(config_json, dict):
        write_json(os.path.join(folder, "config.json"), config_json)
    else:
        config_json.save_pretrained(folder)
    save_file(weights, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": BOS_ID, "eos_token_id": EOS_ID, "pad_token_id": PAD_ID,
    })
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(TOKENIZER_FROM, f), folder)
    return folder


# ----------------------------------------------------------------------------------------------------
# Reference runs

def gap(logits):
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def transformers_load(folder):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    assert model.model.layers[0].feed_forward.w1.weight.shape[0] == FF_DIM
    return model


def transformers_greedy(model, ids):
    """The reference: prompt in one call, then one token per call through transformers' cache."""
    import torch

    new, gaps = [], []
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            step = out.logits[0, -1].float().numpy()
            gaps.append(gap(step))
            new.append(int(step.argmax()))
            cache = out.cache
            out = model(torch.tensor([[new[-1]]]), cache=cache, use_cache=True)
    return first, new, gaps


def transformers_uncached(model, ids):
    """Greedy by re-running the whole sequence each step (the plain convolution, no windows)."""
    import torch

    seq, new = list(ids), []
    with torch.no_grad():
        first = model(torch.tensor([seq]), use_cache=False).logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            new.append(int(model(torch.tensor([seq]), use_cache=False).logits[0, -1].argmax()))
            seq.append(new[-1])
    return first, new


def mlx_greedy(folder, config, ids):
    """mlx-lm's lfm2 in float32, or None without mlx-lm."""
    try:
        import mlx.core as mx
        from mlx_lm.models.cache import make_prompt_cache
        from mlx_lm.utils import load
    except ImportError:
        return None
    # mlx-lm's lfm2 requires `block_dim`, which transformers 5 no longer writes.
    model, _ = load(folder, model_config={"block_dim": config.hidden_size})
    model.set_dtype(mx.float32)
    cache = make_prompt_cache(model)
    new = []
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    first = np.array(logits.astype(mx.float32))
    for _ in range(STEPS):
        new.append(int(np.array(logits.astype(mx.float32)).argmax()))
        logits = model(mx.array([[new[-1]]]), cache=cache)[0, -1]
    return first, new


def cross_check(label, got, ref_first, ref_new):
    first, new = got
    diff = float(np.abs(first - ref_first).max())
    same = sum(a == b for a, b in zip(new, ref_new))
    print(f"  {label}: max |dlogit| {diff:.2e}, greedy ids agree {same}/{STEPS}")
    if diff > CROSS_TOLERANCE or new != ref_new:
        sys.exit(f"{label} disagrees with transformers' cached forward pass")
    return diff


def chat(folder):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    text = tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text
    return {"messages": CHAT, "text": text, "ids": ids}


def make_reference(folder, config):
    import torch
    import transformers

    model = transformers_load(folder)
    for attempt in range(20):
        rng = np.random.default_rng(SEED + attempt)
        ids = [int(x) for x in rng.integers(3, config.vocab_size, size=PROMPT_LEN)]
        first, new, gaps = transformers_greedy(model, ids)
        if min(gaps) >= MIN_GAP and len(set(new)) >= MIN_DISTINCT:
            break
        print(f"  prompt attempt {attempt}: min gap {min(gaps):.2e}, {len(set(new))} distinct ids, drawing another")
    else:
        raise RuntimeError("no robust prompt")
    uncached_diff = cross_check("transformers without a cache (whole sequence each step)", transformers_uncached(model, ids), first, new)
    compute = (f"transformers {transformers.__version__}, torch {torch.__version__} on the CPU, float32 weights and "
               f"activations, eager attention, DynamicCache, plain argmax loop; the same ids re-running the whole "
               f"sequence each step (first-step logits within {uncached_diff:.1e})")
    mlx = mlx_greedy(folder, config, ids)
    if mlx is None:
        print("  mlx-lm: skipped (not installed)")
    else:
        import mlx_lm
        mlx_diff = cross_check(f"mlx-lm {mlx_lm.__version__} lfm2 (float32)", mlx, first, new)
        compute += f"; mlx-lm {mlx_lm.__version__}'s lfm2 agrees within {mlx_diff:.1e}, {STEPS}/{STEPS} ids"
    return {
        "name": "lfm2",
        "architecture": "Lfm2ForCausalLM",
        "model_type": "lfm2",
        "config_dialect": "transformers5",
        "producer": f"transformers {transformers.__version__}",
        "attn_implementation": "eager",
        "dtype": "float32",
        "compute": compute,
        "seed": SEED,
        "prompt_attempt": attempt,
        "prompt_ids": ids,
        "first_logits": [float(x) for x in first.astype(np.float32)],
        "steps": STEPS,
        "greedy_ids": new,
        "gaps": gaps,
        "min_gap": min(gaps),
        "min_gap_step": int(np.argmin(gaps)),
        "eos_token_id": EOS_ID,
        "layer_types": LAYER_TYPES,
        "chat": chat(folder),
    }


# ----------------------------------------------------------------------------------------------------
# GGUF

def write_gguf(src_folder, config, weights):
    import gguf

    folder = os.path.join(OUT, "lfm2_gguf")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    path = os.path.join(folder, "lfm2.gguf")
    writer = gguf.GGUFWriter(path, "lfm2")
    d = config.hidden_size // config.num_attention_heads
    writer.add_name("tiny lfm2")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(FF_DIM)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv([config.num_key_value_heads if t == "full_attention" else 0 for t in LAYER_TYPES])
    writer.add_rope_freq_base(THETA)
    writer.add_layer_norm_rms_eps(config.norm_eps)
    writer.add_shortconv_l_cache(config.conv_L_cache)
    writer.add_rope_dimension_count(d)
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    tokenizer = read_json(os.path.join(src_folder, "tokenizer.json"))
    tok_config = read_json(os.path.join(src_folder, "tokenizer_config.json"))
    vocab = tokenizer["model"]["vocab"]
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    assert len(tokens) == config.vocab_size and [vocab[t] for t in tokens] == list(range(len(tokens)))
    specials = {t["id"] for t in tokenizer["added_tokens"] if t["special"]}
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([gguf.TokenType.CONTROL if i in specials else gguf.TokenType.NORMAL for i in range(len(tokens))])
    writer.add_token_merges(merges)
    writer.add_bos_token_id(BOS_ID)
    writer.add_eos_token_id(EOS_ID)
    writer.add_pad_token_id(PAD_ID)
    writer.add_add_bos_token(False)
    writer.add_chat_template(tok_config["chat_template"])

    names = {"operator_norm": "attn_norm", "ffn_norm": "ffn_norm", "conv.conv": "shortconv.conv",
             "conv.in_proj": "shortconv.in_proj", "conv.out_proj": "shortconv.out_proj",
             "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.out_proj": "attn_output", "self_attn.q_layernorm": "attn_q_norm",
             "self_attn.k_layernorm": "attn_k_norm", "feed_forward.w1": "ffn_gate", "feed_forward.w3": "ffn_up",
             "feed_forward.w2": "ffn_down"}
    writer.add_tensor("token_embd.weight", weights["model.embed_tokens.weight"])
    for layer in range(config.num_hidden_layers):
        for hf, cpp in names.items():
            w = weights.get(f"model.layers.{layer}.{hf}.weight")
            if w is None:
                continue
            if hf == "conv.conv":
                w = np.ascontiguousarray(w.squeeze(1))
            writer.add_tensor(f"blk.{layer}.{cpp}.weight", w)
    writer.add_tensor("token_embd_norm.weight", weights["model.embedding_norm.weight"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"lfm2_gguf/lfm2.gguf: {os.path.getsize(path)} bytes, arch lfm2 (compare with lfm2/reference.json)")


def main():
    config = make_config()
    assert config.layer_types == LAYER_TYPES
    weights = make_weights(config, SEED)
    folder = write_folder("lfm2", config, weights)
    ref = make_reference(folder, config)
    write_json(os.path.join(folder, "reference.json"), ref, indent=1)
    print(f"lfm2: min_gap {ref['min_gap']:.4f} (attempt {ref['prompt_attempt']}), greedy {ref['greedy_ids'][:12]}...")

    # The released checkpoints' config dialect: transformers must read it as the same model.
    v4 = write_folder("lfm2_v4", v4_config(config), weights)
    first, new, _ = transformers_greedy(transformers_load(v4), ref["prompt_ids"])
    cross_check("lfm2_v4 through transformers", (first, new), np.array(ref["first_logits"]), ref["greedy_ids"])
    write_json(os.path.join(v4, "reference.json"), {**ref, "name": "lfm2_v4", "config_dialect": "transformers4"}, indent=1)

    write_gguf(folder, config, weights)


if __name__ == "__main__":
    main()
