#!/usr/bin/env python3
"""Tiny random SmolLM3 checkpoints (NoPE layers, a thinking switch in the template) with float32 reference
outputs, and the same weights as a GGUF file written as llama.cpp writes SmolLM3.

    /opt/confab-ref/bin/python tests/reference/make_smollm3.py     # with transformers' own forward pass
    .deps/bench/venv/bin/python tests/reference/make_smollm3.py    # the same outputs, without it

Needs transformers 5 (its SmolLM3Config and tokenizer; torch is optional), mlx + mlx-lm 0.32.2, numpy,
safetensors, tokenizers and the `gguf` package: the benchmark venv has them all, the reference venv of
docs/tests.md ('Reference fixtures') has them and torch. mlx-cpu's bundled BLAS must be swapped for
Debian's OpenBLAS in either (crates/mlx-sys/fetch_mlx_wheel.py's use_openblas; the bench venv has it):
with the wheel's own reference BLAS, mlx-lm's float32 logits move by ~1e-5. Works offline. CI never
runs this; the outputs are committed. It deletes and rewrites only the folders below (about 1.2 MB) and
takes a few seconds. The outputs are byte-for-byte reproducible on the same library versions.

The reference. transformers' SmolLM3ForCausalLM needs torch, which the machine this was first written on
could not hold (no CPU-only torch on PyPI; the CUDA wheel and its libraries did not fit the disk). So:
  - the config is transformers' own SmolLM3Config (its defaults, its `no_rope_layers` derivation, the
    config.json it writes), the tokenizer and chat rendering are transformers' AutoTokenizer;
  - first-step logits and greedy ids are computed by mlx-lm 0.32.2's smollm3 (Llama blocks with NoPE
    layers; mlx-lm's llama reads only `rope_theta`, so the script passes rope_parameters' theta to it);
  - they are cross-checked against a NumPy float64 transcription of transformers 5.25's
    modeling_smollm3.py (eager attention, rotate_half RoPE skipped where no_rope_layers[i] == 0), which
    must agree within 1e-4 on the first-step logits and on all 32 greedy ids, or the script fails;
  - where torch is importable, transformers' own forward pass is compared as well (same bounds); run in
    the reference venv (torch 2.15.0 on the CPU), it agrees within 9.5e-06 (smollm3) and 2.1e-05
    (smollm3_nope), 32/32 ids each.
`compute` in reference.json says which of these ran.

What it makes, under tests/reference/fixtures/tiny/:

  smollm3         SmolLM3ForCausalLM's config (model_type smollm3): vocab 384, hidden 48, 5 layers, 3 heads,
                  1 kv head (head_dim 16), intermediate 80, rope_parameters theta 5e4, tied embeddings;
                  no_rope_layers from the default interval 4: [1, 1, 1, 0, 1] (layer 3 is NoPE), as
                  llama.cpp also assumes for GGUF. Chat template: SmolLM3's reasoning switch in small
                  (`enable_thinking`, and `/think` / `/no_think` in the system message, which win; with
                  thinking off the generation prompt holds an empty <think></think> block).
  smollm3_nope    the same weights with an explicit no_rope_layers [0, 1, 1, 0, 0] (three NoPE layers,
                  the first among them), its own reference.
  smollm3_gguf    smollm3.gguf: the `smollm3` weights as F32 GGUF, written with the `gguf` package the way
                  llama.cpp's convert_hf_to_gguf.py writes SmolLM3 (arch `smollm3`, Llama's tensor names,
                  q/k rows permuted for llama.cpp's interleaved RoPE, no NoPE key: llama.cpp fixes the
                  interval at 4), with the tokenizer (gpt2 BPE) and chat template in the metadata; and
                  smollm3-f16.gguf, the same with the matrices in F16 (norms F32, as llama.cpp's f16), and
                  reference_f16.json: its logits and ids from the NumPy transcription on the rounded
                  weights (the ids must be the F32 reference's).

Every Hugging Face folder holds config.json, generation_config.json, model.safetensors (float32),
tokenizer.json (make_tiny_models.py's `llama` tokenizer, vocab 384; ids 0..2 = <|endoftext|> <|im_start|>
<|im_end|>), tokenizer_config.json (the template above) and reference.json in make_tiny_models.py's schema,
plus `chat_cases`: the template rendered by transformers for three switch settings, {messages, switches,
text, ids}.
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
SEED = 3103
THETA = 5e4
CROSS_TOLERANCE = 1e-4

CHAT_TEMPLATE = (
    "{%- if enable_thinking is defined and enable_thinking is false -%}{%- set reasoning_mode = '/no_think' -%}"
    "{%- else -%}{%- set reasoning_mode = '/think' -%}{%- endif -%}"
    "{%- if messages[0].role == 'system' -%}"
    "{%- set system = messages[0].content -%}"
    "{%- if '/no_think' in system -%}{%- set reasoning_mode = '/no_think' -%}"
    "{%- elif '/think' in system -%}{%- set reasoning_mode = '/think' -%}{%- endif -%}"
    "{%- set system = system | replace('/no_think', '') | replace('/think', '') | trim -%}"
    "{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set system = '' -%}{%- set rest = messages -%}{%- endif -%}"
    "<|im_start|>system\n## Metadata\n\nReasoning Mode: {{ reasoning_mode }}\n\n"
    "## Custom Instructions\n\n{{ system }}<|im_end|>\n"
    "{% for m in rest %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if reasoning_mode == '/no_think' %}<think>\n\n</think>\n{% endif %}{% endif %}"
)
CHAT = [
    {"role": "system", "content": "You are a tiny model."},
    {"role": "user", "content": "What is the capital of France? Answer in one word."},
]
CHAT_CASES = [
    (CHAT, {}),
    (CHAT, {"enable_thinking": False}),
    ([{"role": "system", "content": "You are a tiny model. /no_think"}, CHAT[1]], {"enable_thinking": True}),
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

def make_config(no_rope_layers=None):
    from transformers import SmolLM3Config

    config = SmolLM3Config(
        vocab_size=384, hidden_size=48, intermediate_size=80, num_hidden_layers=5, num_attention_heads=3,
        num_key_value_heads=1, max_position_embeddings=256, rope_parameters={"rope_type": "default", "rope_theta": THETA},
        bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID, no_rope_layers=no_rope_layers,
    )
    config.architectures = ["SmolLM3ForCausalLM"]
    config.dtype = "float32"
    return config


def make_weights(config, seed):
    """make_tiny_models.randomize's scheme (spread-out logits, varied greedy text) with NumPy's generator."""
    rng = np.random.default_rng(seed)
    h, i, d = config.hidden_size, config.intermediate_size, config.hidden_size // config.num_attention_heads
    q, kv = config.num_attention_heads * d, config.num_key_value_heads * d

    def linear(out, inp, scale=1.0):
        return (rng.standard_normal((out, inp)) * scale / inp ** 0.5).astype(np.float32)

    def norm(base=1.0):
        return (base + 0.3 * rng.standard_normal(h)).astype(np.float32)

    w = {"model.embed_tokens.weight": (rng.standard_normal((config.vocab_size, h)) * 0.2).astype(np.float32)}
    for layer in range(config.num_hidden_layers):
        p = f"model.layers.{layer}"
        w[f"{p}.input_layernorm.weight"] = norm()
        w[f"{p}.self_attn.q_proj.weight"] = linear(q, h)
        w[f"{p}.self_attn.k_proj.weight"] = linear(kv, h)
        w[f"{p}.self_attn.v_proj.weight"] = linear(kv, h)
        w[f"{p}.self_attn.o_proj.weight"] = linear(h, q, 4.0)
        w[f"{p}.post_attention_layernorm.weight"] = norm()
        w[f"{p}.mlp.gate_proj.weight"] = linear(i, h)
        w[f"{p}.mlp.up_proj.weight"] = linear(i, h)
        w[f"{p}.mlp.down_proj.weight"] = linear(h, i, 4.0)
    w["model.norm.weight"] = norm(4.0)
    return w


def write_folder(name, config, weights):
    from safetensors.numpy import save_file

    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    config.save_pretrained(folder)
    save_file(weights, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": BOS_ID, "do_sample": True, "eos_token_id": EOS_ID, "pad_token_id": PAD_ID,
        "temperature": 0.6, "top_p": 0.95,
    })
    shutil.copy(os.path.join(TOKENIZER_FROM, "tokenizer.json"), folder)
    tok_config = read_json(os.path.join(TOKENIZER_FROM, "tokenizer_config.json"))
    tok_config["chat_template"] = CHAT_TEMPLATE
    write_json(os.path.join(folder, "tokenizer_config.json"), tok_config)
    return folder


# ----------------------------------------------------------------------------------------------------
# Reference runs

def gap(logits):
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def mlx_greedy(model, ids):
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    new, gaps = [], []
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    first = np.array(logits.astype(mx.float32))
    for _ in range(STEPS):
        step = np.array(logits.astype(mx.float32))
        gaps.append(gap(step))
        new.append(int(step.argmax()))
        logits = model(mx.array([[new[-1]]]), cache=cache)[0, -1]
    return first, new, gaps


def mlx_load(folder):
    import mlx.core as mx
    from mlx_lm.utils import load

    # mlx-lm's llama reads `rope_theta`, not transformers 5's rope_parameters.
    model, _ = load(folder, model_config={"rope_theta": THETA})
    model.set_dtype(mx.float32)
    return model


def numpy_logits(config, w, ids):
    """transformers 5.25's SmolLM3ForCausalLM forward (eager), transcribed in float64: logits [L, vocab]."""
    x = w["model.embed_tokens.weight"].astype(np.float64)[ids]
    n, heads, kv_heads = len(ids), config.num_attention_heads, config.num_key_value_heads
    d = config.hidden_size // heads
    inv_freq = 1.0 / THETA ** (np.arange(0, d, 2, dtype=np.float64) / d)
    angles = np.outer(np.arange(n, dtype=np.float64), inv_freq)
    cos, sin = np.cos(np.concatenate([angles, angles], -1)), np.sin(np.concatenate([angles, angles], -1))

    def rms(v, weight):
        return v / np.sqrt((v * v).mean(-1, keepdims=True) + config.rms_norm_eps) * weight.astype(np.float64)

    def lin(v, name):
        return v @ w[name].astype(np.float64).T

    def rotate(t):  # [heads, n, d]
        half = np.concatenate([-t[..., d // 2:], t[..., : d // 2]], -1)
        return t * cos + half * sin

    mask = np.triu(np.full((n, n), -np.inf), 1)
    for layer in range(config.num_hidden_layers):
        p = f"model.layers.{layer}"
        hidden = rms(x, w[f"{p}.input_layernorm.weight"])
        q = lin(hidden, f"{p}.self_attn.q_proj.weight").reshape(n, heads, d).transpose(1, 0, 2)
        k = lin(hidden, f"{p}.self_attn.k_proj.weight").reshape(n, kv_heads, d).transpose(1, 0, 2)
        v = lin(hidden, f"{p}.self_attn.v_proj.weight").reshape(n, kv_heads, d).transpose(1, 0, 2)
        if config.no_rope_layers[layer]:
            q, k = rotate(q), rotate(k)
        k, v = np.repeat(k, heads // kv_heads, 0), np.repeat(v, heads // kv_heads, 0)
        scores = q @ k.transpose(0, 2, 1) * d ** -0.5 + mask
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attn = (scores / scores.sum(-1, keepdims=True)) @ v
        x = x + lin(attn.transpose(1, 0, 2).reshape(n, heads * d), f"{p}.self_attn.o_proj.weight")
        hidden = rms(x, w[f"{p}.post_attention_layernorm.weight"])
        gate, up = lin(hidden, f"{p}.mlp.gate_proj.weight"), lin(hidden, f"{p}.mlp.up_proj.weight")
        x = x + lin(gate / (1 + np.exp(-gate)) * up, f"{p}.mlp.down_proj.weight")
    return rms(x, w["model.norm.weight"]) @ w["model.embed_tokens.weight"].astype(np.float64).T


def numpy_greedy(config, w, ids):
    """Greedy by re-running the whole sequence each step (no cache: a different path from mlx-lm's)."""
    seq, new = list(ids), []
    first = numpy_logits(config, w, seq)[-1]
    for _ in range(STEPS):
        new.append(int(numpy_logits(config, w, seq)[-1].argmax()))
        seq.append(new[-1])
    return first, new


def transformers_greedy(folder, ids):
    """transformers' own forward pass, where torch is installed; None otherwise."""
    try:
        import torch
        from transformers import AutoModelForCausalLM
    except ImportError:
        return None
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    new = []
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            new.append(int(out.logits[0, -1].argmax()))
            out = model(torch.tensor([[new[-1]]]), past_key_values=out.past_key_values, use_cache=True)
    return first, new


def cross_check(label, got, ref_first, ref_new):
    first, new = got
    diff = float(np.abs(first - ref_first).max())
    same = sum(a == b for a, b in zip(new, ref_new))
    print(f"  {label}: max |dlogit| {diff:.2e}, greedy ids agree {same}/{STEPS}")
    if diff > CROSS_TOLERANCE or new != ref_new:
        sys.exit(f"{label} disagrees with mlx-lm")
    return diff


def chat_cases(folder):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    cases = []
    for messages, switches in CHAT_CASES:
        text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **switches)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        assert tok.decode(ids) == text
        cases.append({"messages": messages, "switches": switches, "text": text, "ids": ids})
    assert cases[0]["text"] != cases[1]["text"] and cases[1]["text"] == cases[2]["text"], "the switch must switch"
    return cases


def make_reference(name, folder, config, weights):
    import mlx.core as mx
    import mlx_lm
    import transformers

    model = mlx_load(folder)
    for attempt in range(20):
        rng = np.random.default_rng(SEED + attempt)
        ids = [int(x) for x in rng.integers(3, config.vocab_size, size=PROMPT_LEN)]
        first, new, gaps = mlx_greedy(model, ids)
        if min(gaps) >= MIN_GAP and len(set(new)) >= MIN_DISTINCT:
            break
        print(f"  prompt attempt {attempt}: min gap {min(gaps):.2e}, {len(set(new))} distinct ids, drawing another")
    else:
        raise RuntimeError("no robust prompt")
    numpy_diff = cross_check("NumPy float64 transcription of modeling_smollm3.py", numpy_greedy(config, weights, ids), first, new)
    compute = (f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}) smollm3 in float32 on the CPU, "
               f"make_prompt_cache + plain argmax loop; cross-checked against a NumPy float64 transcription of "
               f"transformers {transformers.__version__}'s SmolLM3ForCausalLM (max |dlogit| {numpy_diff:.1e}, "
               f"{STEPS}/{STEPS} ids)")
    hf = transformers_greedy(folder, ids)
    if hf is None:
        print("  transformers' forward pass: skipped (no torch)")
    else:
        hf_diff = cross_check("transformers forward (torch, eager, float32)", hf, first, new)
        compute += f" and transformers' own forward pass (max |dlogit| {hf_diff:.1e}, {STEPS}/{STEPS} ids)"
    cases = chat_cases(folder)
    ref = {
        "name": name,
        "architecture": "SmolLM3ForCausalLM",
        "model_type": "smollm3",
        "config_dialect": "transformers5",
        "producer": f"mlx-lm {mlx_lm.__version__}",
        "attn_implementation": "mlx_lm",
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
        "no_rope_layers": list(config.no_rope_layers),
        "chat": {k: cases[0][k] for k in ("messages", "text", "ids")},
        "chat_cases": cases,
    }
    write_json(os.path.join(folder, "reference.json"), ref, indent=1)
    print(f"{name}: no_rope_layers {config.no_rope_layers}, min_gap {ref['min_gap']:.4f} (attempt {attempt}), "
          f"greedy {new[:12]}...")


# ----------------------------------------------------------------------------------------------------
# GGUF

def llama_cpp_permute(weights, heads):
    """convert_hf_to_gguf.py's LlamaModel.permute: each head's rows from rotate_half order to interleaved."""
    return weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def write_gguf(src_folder, config, weights, f16):
    """One GGUF file: F32, or F16 matrices with F32 norms (as llama.cpp's --outtype f16 keeps 1-D tensors)."""
    import gguf

    folder = os.path.join(OUT, "smollm3_gguf")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "smollm3-f16.gguf" if f16 else "smollm3.gguf")
    writer = gguf.GGUFWriter(path, "smollm3")
    d = config.hidden_size // config.num_attention_heads
    writer.add_name("tiny smollm3")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_rope_freq_base(THETA)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_rope_dimension_count(d)
    writer.add_vocab_size(config.vocab_size)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if f16 else gguf.LlamaFileType.ALL_F32)

    tokenizer = read_json(os.path.join(src_folder, "tokenizer.json"))
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
    writer.add_chat_template(CHAT_TEMPLATE)

    names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
             "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    def matrix(w):
        return np.ascontiguousarray(w.astype(np.float16) if f16 else w)

    writer.add_tensor("token_embd.weight", matrix(weights["model.embed_tokens.weight"]))
    for layer in range(config.num_hidden_layers):
        for hf, cpp in names.items():
            w = weights[f"model.layers.{layer}.{hf}.weight"]
            if hf == "self_attn.q_proj":
                w = llama_cpp_permute(w, config.num_attention_heads)
            elif hf == "self_attn.k_proj":
                w = llama_cpp_permute(w, config.num_key_value_heads)
            writer.add_tensor(f"blk.{layer}.{cpp}.weight", matrix(w) if w.ndim == 2 else w)
    writer.add_tensor("output_norm.weight", weights["model.norm.weight"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"smollm3_gguf/{os.path.basename(path)}: {os.path.getsize(path)} bytes, arch smollm3 "
          "(compare with smollm3/reference.json)")


def f16_reference(config, weights, ref):
    """What smollm3-f16.gguf should give: the NumPy transcription on the F16-rounded matrices, whose greedy
    ids must be the F32 reference's."""
    rounded = {k: w.astype(np.float16).astype(np.float32) if w.ndim == 2 else w for k, w in weights.items()}
    first, new = numpy_greedy(config, rounded, ref["prompt_ids"])
    if new != ref["greedy_ids"]:
        sys.exit("F16 rounding changes the greedy ids; pick another seed")
    diff = float(np.abs(first - np.array(ref["first_logits"])).max())
    write_json(os.path.join(OUT, "smollm3_gguf", "reference_f16.json"), {
        "name": "smollm3_gguf/smollm3-f16.gguf",
        "compute": ("NumPy float64 transcription of transformers' SmolLM3ForCausalLM (as for smollm3) on the "
                    "smollm3 weights with every matrix rounded to float16 (norms float32), full re-run per step"),
        "prompt_ids": ref["prompt_ids"],
        "first_logits": [float(x) for x in first.astype(np.float32)],
        "steps": STEPS,
        "greedy_ids": new,
        "max_diff_from_f32_reference": diff,
    }, indent=1)
    print(f"smollm3_gguf/reference_f16.json: logits move by up to {diff:.2e} from the F32 reference, same ids")


def main():
    config = make_config()
    assert config.no_rope_layers == [1, 1, 1, 0, 1], config.no_rope_layers
    weights = make_weights(config, SEED)
    folder = write_folder("smollm3", config, weights)
    make_reference("smollm3", folder, config, weights)
    shutil.rmtree(os.path.join(OUT, "smollm3_gguf"), ignore_errors=True)
    write_gguf(folder, config, weights, f16=False)
    write_gguf(folder, config, weights, f16=True)
    f16_reference(config, weights, read_json(os.path.join(folder, "reference.json")))

    nope = make_config(no_rope_layers=[0, 1, 1, 0, 0])
    make_reference("smollm3_nope", write_folder("smollm3_nope", nope, weights), nope, weights)


if __name__ == "__main__":
    main()
