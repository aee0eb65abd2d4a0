#!/usr/bin/env python3
"""GGUF files of the tiny gemma3, qwen3_5, qwen3_5_moe and qwen3_next checkpoints, written with the `gguf` package the way
llama.cpp's convert_hf_to_gguf.py writes those architectures, in F32 and in quantized types, with
reference outputs for the quantized ones computed from `gguf`'s own dequantization.

    /opt/confab-ref/bin/python tests/reference/make_gguf_families.py

Needs the `gguf` package (0.19), transformers 5 with torch, numpy and safetensors: the reference venv
of docs/tests.md ('Reference fixtures') has them all. Works offline. CI never runs this; the outputs
are committed. It deletes and rewrites only the folders below (under 1 MB a file, but for
qwen3_next's F32 at 1.15 MB, the size of its safetensors fixture) in about a minute.

Sources: the safetensors fixtures under tests/reference/fixtures/tiny/<name> (made by
make_tiny_models.py and make_qwen3_5.py) and their reference.json (transformers' float32 forward pass).
Text tensors only: the vision towers of the qwen3_5 fixtures are left out, as llama.cpp writes them to
a separate mmproj file.

What it makes, under tests/reference/fixtures/tiny/<name>_gguf/:

  <name>-f32.gguf    every tensor F32. Must give <name>/reference.json's ids and first-step logits.
  <name>-q8_0.gguf   the matrices (2-D, rows a multiple of 32 wide) in Q8_0, the rest F32 (norms,
  <name>-q4_0.gguf   convolution, 1-D parameters), as llama.cpp's quantizer leaves them; Q4_0 likewise.
  qwen3_5-mtp-q8_0.gguf  (qwen3_5 only) the Q8_0 file with a multi-token-prediction layer after the
                     model's own, as the converter writes Qwen3.5 by default: must give reference-q8_0.json.
  reference-q8_0.json, reference-q4_0.json: the same prompt through transformers' model with each
                     quantized matrix replaced by gguf.quants.dequantize() of its blocks (and the
                     converter's reordering undone): first-step logits, greedy ids, the gaps between
                     the top two logits at each step.

Q4_K / Q5_K / Q6_K are not written: their blocks are 256 wide (these rows are 64 to 128) and the `gguf`
package cannot quantize to them (it only dequantizes).

The converter's changes, per architecture (llama.cpp convert_hf_to_gguf.py / conversion/*.py):

  gemma3   (Gemma3Model) arch `gemma3`; every `*norm.weight` stored as 1 + w; tied head (no
           output.weight); rope.freq_base the global layers' theta; sliding_window. llama.cpp fixes the
           rest (every 6th layer global, local theta 1e4, attention scale head_dim^-0.5); where this
           tiny checkpoint differs from those fixed values the file says so in keys llama.cpp defines:
           `gemma3.attention.sliding_window_pattern` (a bool per layer) and `gemma3.attention.scale`
           (query_pre_attn_scalar^-0.5).
  qwen35, qwen35moe
           (Qwen3_5TextModel / Qwen3_5MoeTextModel = _LinearAttentionVReorderBase + Qwen3NextModel); text
           tensors only; A_log stored as ssm_a = -exp(A_log); dt_bias as ssm_dt.bias; conv1d squeezed
           to [C, K]; norms other than linear_attn.norm as 1 + w; with fewer key heads than value heads,
           the value heads reordered from grouped-by-key-head to tiled (rows of in_proj_qkv's V part,
           in_proj_z, in_proj_a/b, A_log, dt_bias, the conv's V channels; columns of out_proj); ssm.*
           sizes, full_attention_interval, rope.dimension_count = head_dim * partial_rotary_factor,
           rope.dimension_sections; experts as Qwen2MoeModel writes them: ffn_{gate,up,down}_exps stacked
           [E, out, in] (transformers' fused gate_up_proj split in two), ffn_gate_inp (router),
           ffn_*_shexp and ffn_gate_inp_shexp (shared expert and its gate), expert_* counts and widths.
  qwen3next
           (Qwen3NextModel) as qwen35moe without the value-head reordering and the rope sections; its
           in_proj_qkvz ([q, k, v, z] per key head) split into attn_qkv (all q, all k, all v) and
           attn_gate (all z); in_proj_ba kept as ssm_ba; one module per expert stacked; untied output.

The tokenizer is each fixture's byte-level BPE as the converter's _set_vocab_gpt2 writes it
(tokenizer.ggml.model gpt2, tokens, token types, merges, pre-tokenizer `gpt2`, special ids), with the
chat template.
"""
import json
import os
import re
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
QUANTS = ["Q8_0", "Q4_0"]


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_json(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")


def load_weights(folder):
    from safetensors.numpy import load_file

    return load_file(os.path.join(folder, "model.safetensors"))


# ----------------------------------------------------------------------------------------------------
# Value-head reordering (llama.cpp's _LinearAttentionVReorderBase._reorder_v_heads) and its inverse

def v_reorder(t, dim, num_k, per_k, head_dim):
    """Grouped by key head [K0v0, K0v1, K1v0, K1v1] -> tiled [K0v0, K1v0, K0v1, K1v1] along `dim`."""
    shape = list(t.shape)
    t = t.reshape(shape[:dim] + [num_k, per_k, head_dim] + shape[dim + 1:])
    return np.ascontiguousarray(np.swapaxes(t, dim, dim + 1)).reshape(shape)


def v_unorder(t, dim, num_k, per_k, head_dim):
    shape = list(t.shape)
    t = t.reshape(shape[:dim] + [per_k, num_k, head_dim] + shape[dim + 1:])
    return np.ascontiguousarray(np.swapaxes(t, dim, dim + 1)).reshape(shape)


# ----------------------------------------------------------------------------------------------------
# Architectures: HF tensors -> [(gguf name, array, inverse)] where inverse maps a (dequantized) GGUF
# array back to the HF tensor it came from, for the quantized references.

def gemma3_tensors(weights, config):
    block = {"input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm",
             "pre_feedforward_layernorm": "ffn_norm", "post_feedforward_layernorm": "post_ffw_norm",
             "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm", "self_attn.q_proj": "attn_q",
             "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    out = []
    for name, w in weights.items():
        if name == "model.embed_tokens.weight":
            gg = "token_embd.weight"
        elif name == "model.norm.weight":
            gg = "output_norm.weight"
        else:
            _, _, layer, rest = name.split(".", 3)
            gg = f"blk.{layer}.{block[rest.removesuffix('.weight')]}.weight"
        if name.endswith("norm.weight"):
            out.append((gg, w + np.float32(1.0), name, lambda a: a - np.float32(1.0)))
        else:
            out.append((gg, w, name, lambda a: a))
    return out


def gemma3_metadata(writer, config):
    import gguf

    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_key_length(config["head_dim"])
    writer.add_value_length(config["head_dim"])
    rope = config["rope_parameters"]
    writer.add_rope_freq_base(rope["full_attention"]["rope_theta"])
    assert rope["sliding_attention"]["rope_theta"] == 10000.0, "llama.cpp fixes gemma3's local theta at 1e4"
    writer.add_sliding_window(config["sliding_window"])
    # What llama.cpp would otherwise fix for gemma3 (pattern 6, head_dim^-0.5):
    writer.add_sliding_window_pattern([t == "sliding_attention" for t in config["layer_types"]])
    writer.add_float32(gguf.Keys.Attention.SCALE.format(arch="gemma3"), config["query_pre_attn_scalar"] ** -0.5)


def qwen35_text(config):
    return config.get("text_config", config)


QWEN35_BLOCK = {
    "input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm",
    "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output", "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
    "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
    "mlp.gate": "ffn_gate_inp", "mlp.shared_expert_gate": "ffn_gate_inp_shexp",
    "mlp.shared_expert.gate_proj": "ffn_gate_shexp", "mlp.shared_expert.up_proj": "ffn_up_shexp",
    "mlp.shared_expert.down_proj": "ffn_down_shexp",
    "linear_attn.in_proj_qkv": "attn_qkv", "linear_attn.in_proj_z": "attn_gate",
    "linear_attn.in_proj_a": "ssm_alpha", "linear_attn.in_proj_b": "ssm_beta", "linear_attn.in_proj_ba": "ssm_ba",
    "linear_attn.out_proj": "ssm_out", "linear_attn.norm": "ssm_norm", "linear_attn.conv1d": "ssm_conv1d",
}


def qwen35_tensors(weights, config, tiled_values=True):
    """qwen35 / qwen35moe (tiled_values: _LinearAttentionVReorderBase) and qwen3next (Qwen3NextModel:
    in_proj_qkvz split into attn_qkv and attn_gate, experts stacked, no reordering)."""
    c = qwen35_text(config)
    hk, hv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    dk, dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    per_k = hv // hk
    reorder = tiled_values and hk != hv
    ident = lambda a: a  # noqa: E731
    out = []
    experts = {}
    for name, w in weights.items():
        if name.startswith("model.visual.") or name.startswith("mtp."):
            continue  # the vision tower (llama.cpp writes it to a separate mmproj file), the MTP head
        hf = name.replace("model.language_model.", "model.")
        if hf == "model.embed_tokens.weight":
            out.append(("token_embd.weight", w, name, ident))
            continue
        if hf == "lm_head.weight":
            out.append(("output.weight", w, name, ident))
            continue
        if hf == "model.norm.weight":
            out.append(("output_norm.weight", w + np.float32(1.0), name, lambda a: a - np.float32(1.0)))
            continue
        _, _, layer, rest = hf.split(".", 3)
        if rest == "linear_attn.A_log":
            a = -np.exp(w)
            if reorder:
                a = v_reorder(a[:, None], 0, hk, per_k, 1)[:, 0]
            out.append((f"blk.{layer}.ssm_a", a, name, None))
            continue
        if rest == "linear_attn.dt_bias":
            b = v_reorder(w[:, None], 0, hk, per_k, 1)[:, 0] if reorder else w
            out.append((f"blk.{layer}.ssm_dt.bias", b, name, None))
            continue
        if rest == "mlp.experts.gate_up_proj":  # transformers' fused [E, 2I, H]: gate rows, then up rows
            i = w.shape[1] // 2
            out.append((f"blk.{layer}.ffn_gate_exps.weight", np.ascontiguousarray(w[:, :i]), (name, np.s_[:, :i]), ident))
            out.append((f"blk.{layer}.ffn_up_exps.weight", np.ascontiguousarray(w[:, i:]), (name, np.s_[:, i:]), ident))
            continue
        if rest == "mlp.experts.down_proj":  # [E, H, I]
            out.append((f"blk.{layer}.ffn_down_exps.weight", w, name, ident))
            continue
        if ".mlp.experts." in f".{rest}":  # one module per expert: stacked, as Qwen2MoeModel does
            _, _, e, proj, _ = rest.split(".")
            experts.setdefault((layer, proj), {})[int(e)] = name
            continue
        module = rest.removesuffix(".weight")
        gg = f"blk.{layer}.{QWEN35_BLOCK.get(module, module)}.weight"
        inverse = ident
        if module == "linear_attn.in_proj_qkvz":
            # [q, k, v, z] per key head -> all q, all k, all v (attn_qkv) and all z (attn_gate)
            group = 2 * dk + 2 * per_k * dv
            rows = lambda off, n: np.concatenate([k * group + off + np.arange(n) for k in range(hk)])  # noqa: E731
            qkv = np.concatenate([rows(0, dk), rows(dk, dk), rows(2 * dk, per_k * dv)])
            z = rows(2 * dk + per_k * dv, per_k * dv)
            out.append((f"blk.{layer}.attn_qkv.weight", np.ascontiguousarray(w[qkv]), (name, qkv), ident))
            out.append((f"blk.{layer}.attn_gate.weight", np.ascontiguousarray(w[z]), (name, z), ident))
            continue
        if module == "linear_attn.conv1d":
            w = w[:, 0, :]
            if reorder:
                qk = 2 * hk * dk
                w = np.concatenate([w[:qk], v_reorder(w[qk:], 0, hk, per_k, dv)])
            inverse = None
        elif rest.endswith("norm.weight") and module != "linear_attn.norm":
            w = w + np.float32(1.0)
            inverse = lambda a: a - np.float32(1.0)  # noqa: E731
        elif reorder and module == "linear_attn.in_proj_qkv":
            qk = 2 * hk * dk
            w = np.concatenate([w[:qk], v_reorder(w[qk:], 0, hk, per_k, dv)])
            inverse = lambda a, qk=qk: np.concatenate([a[:qk], v_unorder(a[qk:], 0, hk, per_k, dv)])  # noqa: E731
        elif reorder and module == "linear_attn.in_proj_z":
            w = v_reorder(w, 0, hk, per_k, dv)
            inverse = lambda a: v_unorder(a, 0, hk, per_k, dv)  # noqa: E731
        elif reorder and module in ("linear_attn.in_proj_a", "linear_attn.in_proj_b"):
            w = v_reorder(w, 0, hk, per_k, 1)
            inverse = lambda a: v_unorder(a, 0, hk, per_k, 1)  # noqa: E731
        elif reorder and module == "linear_attn.out_proj":
            w = v_reorder(w, 1, hk, per_k, dv)
            inverse = lambda a: v_unorder(a, 1, hk, per_k, dv)  # noqa: E731
        out.append((gg, np.ascontiguousarray(w), name, inverse))
    for (layer, proj), names in sorted(experts.items()):
        stacked = np.stack([weights[names[e]] for e in range(len(names))])
        gg = f"blk.{layer}.ffn_{proj.removesuffix('_proj')}_exps.weight"
        out.append((gg, stacked, [names[e] for e in range(len(names))], ident))
    return out


def qwen35_metadata(writer, config, mrope=True):
    c = qwen35_text(config)
    rope = c.get("rope_parameters") or {"rope_theta": c["rope_theta"], "partial_rotary_factor": c.get("partial_rotary_factor", 0.25)}
    writer.add_context_length(c["max_position_embeddings"])
    writer.add_embedding_length(c["hidden_size"])
    writer.add_block_count(c["num_hidden_layers"])
    writer.add_feed_forward_length(c["intermediate_size"])
    writer.add_head_count(c["num_attention_heads"])
    writer.add_head_count_kv(c["num_key_value_heads"])
    writer.add_rope_freq_base(rope["rope_theta"])
    writer.add_layer_norm_rms_eps(c["rms_norm_eps"])
    writer.add_key_length(c["head_dim"])
    writer.add_value_length(c["head_dim"])
    if c.get("num_experts"):
        writer.add_expert_count(c["num_experts"])
        writer.add_expert_used_count(c["num_experts_per_tok"])
        writer.add_expert_feed_forward_length(c["moe_intermediate_size"])
        writer.add_expert_shared_feed_forward_length(c["shared_expert_intermediate_size"])
    writer.add_ssm_conv_kernel(c["linear_conv_kernel_dim"])
    writer.add_ssm_state_size(c["linear_key_head_dim"])
    writer.add_ssm_group_count(c["linear_num_key_heads"])
    writer.add_ssm_time_step_rank(c["linear_num_value_heads"])
    writer.add_ssm_inner_size(c["linear_value_head_dim"] * c["linear_num_value_heads"])
    writer.add_full_attention_interval(c.get("full_attention_interval", 4))
    writer.add_rope_dimension_count(int(c["head_dim"] * rope.get("partial_rotary_factor", 0.25)))
    if mrope:
        writer.add_rope_dimension_sections(list(rope.get("mrope_section", [11, 11, 10])) + [0])


ARCHS = {
    "gemma3": dict(arch="gemma3", tensors=gemma3_tensors, metadata=gemma3_metadata),
    "qwen3_5": dict(arch="qwen35", tensors=qwen35_tensors, metadata=qwen35_metadata),
    "qwen3_5_moe": dict(arch="qwen35moe", tensors=qwen35_tensors, metadata=qwen35_metadata),
    "qwen3_next": dict(arch="qwen3next", tensors=lambda w, c: qwen35_tensors(w, c, tiled_values=False),
                       metadata=lambda wr, c: qwen35_metadata(wr, c, mrope=False)),
}


# ----------------------------------------------------------------------------------------------------
# Writing

def add_vocab(writer, folder, config):
    import gguf

    tokenizer = read_json(os.path.join(folder, "tokenizer.json"))
    tok_config = read_json(os.path.join(folder, "tokenizer_config.json"))
    vocab = dict(tokenizer["model"]["vocab"])
    for t in tokenizer["added_tokens"]:
        vocab.setdefault(t["content"], t["id"])
    tokens = [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    assert [vocab[t] for t in tokens] == list(range(len(tokens)))
    added = {t["id"]: t["special"] for t in tokenizer["added_tokens"]}
    types = [gguf.TokenType.CONTROL if added.get(i) else gguf.TokenType.USER_DEFINED if i in added else gguf.TokenType.NORMAL
             for i in range(len(tokens))]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    text = qwen35_text(config)
    bos = text.get("bos_token_id", config.get("bos_token_id"))
    eos = text.get("eos_token_id", config.get("eos_token_id"))
    if bos is not None:
        writer.add_bos_token_id(bos)
    writer.add_eos_token_id(eos[0] if isinstance(eos, list) else eos)
    pad = text.get("pad_token_id", config.get("pad_token_id"))
    if pad is not None:
        writer.add_pad_token_id(pad)
    writer.add_add_bos_token(bool(tok_config.get("add_bos_token", False)))
    template = tok_config.get("chat_template")
    if template is None and os.path.exists(os.path.join(folder, "chat_template.jinja")):
        with open(os.path.join(folder, "chat_template.jinja"), encoding="utf-8") as f:
            template = f.read()
    if template:
        writer.add_chat_template(template)
    return len(tokens)


def quantizable(gg_name, array):
    return array.ndim >= 2 and array.shape[-1] % 32 == 0 and "ssm_conv1d" not in gg_name


def write_gguf(path, spec, folder, config, tensors, qtype, mtp_layers=0):
    import gguf

    writer = gguf.GGUFWriter(path, spec["arch"])
    writer.add_name(f"tiny {os.path.basename(folder)}")
    if mtp_layers:
        # _Qwen35MtpMixin: block_count counts the prediction layers after the model's own.
        text = qwen35_text(config)
        config = {**config, "text_config": {**text, "num_hidden_layers": text["num_hidden_layers"] + mtp_layers}}
    spec["metadata"](writer, config)
    if mtp_layers:
        writer.add_nextn_predict_layers(mtp_layers)
    file_type = {None: gguf.LlamaFileType.ALL_F32, "Q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
                 "Q4_0": gguf.LlamaFileType.MOSTLY_Q4_0}[qtype]
    writer.add_file_type(file_type)
    add_vocab(writer, folder, config)
    stored = {}
    for gg, array, _, _ in tensors:
        array = np.ascontiguousarray(array, dtype=np.float32)
        if qtype is not None and quantizable(gg, array):
            t = gguf.GGMLQuantizationType[qtype]
            packed = gguf.quants.quantize(array, t)
            writer.add_tensor(gg, packed, raw_shape=packed.shape, raw_dtype=t)
            stored[gg] = gguf.quants.dequantize(packed, t).reshape(array.shape)
        else:
            writer.add_tensor(gg, array)
            stored[gg] = array
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return stored


# ----------------------------------------------------------------------------------------------------
# References

def gap(logits):
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def hf_greedy(model, ids, steps):
    import torch

    new, gaps = [], []
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(steps):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), past_key_values=out.past_key_values, use_cache=True)
    return first, new, gaps


def hf_model(folder, config):
    import torch
    import transformers

    cls = getattr(transformers, config["architectures"][0])
    extra = {"experts_implementation": "eager"} if qwen35_text(config).get("num_experts") else {}
    return cls.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager", **extra).eval()


def put(replaced, weights, hf, array):
    """Writes `array` where the GGUF tensor came from: a whole HF tensor, a part of one (name,
    index), or one per expert (a list of names)."""
    if isinstance(hf, list):
        for e, name in enumerate(hf):
            replaced[name] = array[e]
    elif isinstance(hf, tuple):
        name, index = hf
        replaced.setdefault(name, weights[name].copy())[index] = array
    else:
        replaced[hf] = array


def taken(weights, hf):
    if isinstance(hf, list):
        return np.stack([weights[n] for n in hf])
    if isinstance(hf, tuple):
        return weights[hf[0]][hf[1]]
    return weights[hf]


def run_with(folder, config, weights, replaced, ref):
    """transformers' model of `folder` with `replaced` (HF name -> array) swapped in."""
    import torch

    model = hf_model(folder, config)
    state = model.state_dict()
    for name, array in replaced.items():
        expert = re.fullmatch(r"(.*\.mlp\.experts)\.(\d+)\.(gate|up|down)_proj\.weight", name)
        if name not in state and expert:
            # transformers 5 fuses per-expert checkpoints at load: gate_up_proj [E, 2I, H], down_proj [E, H, I]
            base, e, proj = expert[1], int(expert[2]), expert[3]
            fused = state[f"{base}.down_proj" if proj == "down" else f"{base}.gate_up_proj"]
            half = fused.shape[1] // 2
            rows = slice(None) if proj == "down" else slice(0, half) if proj == "gate" else slice(half, None)
            fused[e, rows] = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
            continue
        assert name in state, name
        assert tuple(state[name].shape) == array.shape, (name, state[name].shape, array.shape)
        state[name] = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
    model.load_state_dict(state)
    return hf_greedy(model, ref["prompt_ids"], ref["steps"])


def main():
    import gguf

    for name, spec in ARCHS.items():
        folder = os.path.join(OUT, name)
        config = read_json(os.path.join(folder, "config.json"))
        weights = load_weights(folder)
        ref = read_json(os.path.join(folder, "reference.json"))
        tensors = spec["tensors"](weights, config)
        out = os.path.join(OUT, f"{name}_gguf")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        if name == "qwen3_5":
            # As the converter writes Qwen3.5 with its multi-token-prediction layer (one more block,
            # a full-attention layer plus nextn.* tensors): the model's own layers must give the
            # same reference. The layer's weights are the last layer's, the nextn ones random; in
            # Q8_0, which keeps the file under 1 MB.
            last = qwen35_text(config)["num_hidden_layers"] - 1
            rng = np.random.default_rng(7)
            hidden = qwen35_text(config)["hidden_size"]
            extra = [(gg.replace(f"blk.{last}.", f"blk.{last + 1}."), a, None, None) for gg, a, _, _ in tensors
                     if gg.startswith(f"blk.{last}.")]
            extra += [(f"blk.{last + 1}.nextn.eh_proj.weight", rng.standard_normal((hidden, 2 * hidden), np.float32) * 0.1, None, None)]
            extra += [(f"blk.{last + 1}.nextn.{n}.weight", np.ones(hidden, np.float32), None, None)
                      for n in ("enorm", "hnorm", "shared_head_norm")]
            path = os.path.join(out, f"{name}-mtp-q8_0.gguf")
            write_gguf(path, spec, folder, config, tensors + extra, "Q8_0", mtp_layers=1)
            print(f"{name}_gguf/{name}-mtp-q8_0.gguf: {os.path.getsize(path)} bytes, one prediction layer "
                  f"(compare with {name}_gguf/reference-q8_0.json)")
        for qtype in [None] + QUANTS:
            suffix = (qtype or "F32").lower()
            path = os.path.join(out, f"{name}-{suffix}.gguf")
            stored = write_gguf(path, spec, folder, config, tensors, qtype)
            size = os.path.getsize(path)
            # Under 1 MB, or (qwen3_next's F32: 1.15 MB) no larger than its safetensors fixture and the vocabulary.
            limit = max(1 << 20, os.path.getsize(os.path.join(folder, "model.safetensors")) + (32 << 10))
            assert size < limit, f"{path}: {size} bytes"
            # Read the file back the way a loader does, as a check on what was written.
            reader = gguf.GGUFReader(path)
            assert reader.fields["general.architecture"].contents() == spec["arch"]
            if qtype is None:
                print(f"{name}_gguf/{name}-{suffix}.gguf: {size} bytes, arch {spec['arch']} "
                      f"(compare with {name}/reference.json)")
                continue
            # The quantized matrices as gguf dequantizes them, back in the checkpoint's layout.
            replaced = {}
            for gg, array, hf, inverse in tensors:
                if quantizable(gg, array):
                    assert inverse is not None, gg
                    put(replaced, weights, hf, inverse(stored[gg]))
            first, new, gaps = run_with(folder, config, weights, replaced, ref)
            agree = sum(1 for a, b in zip(new, ref["greedy_ids"]) if a == b)
            write_json(os.path.join(out, f"reference-{suffix}.json"), {
                "name": f"{name}-{suffix}", "source": f"{name}/reference.json",
                "producer": "tests/reference/make_gguf_families.py",
                "compute": (f"{ref.get('compute', 'transformers, float32, eager')}; every {qtype} matrix replaced by "
                            f"gguf {gguf.__version__ if hasattr(gguf, '__version__') else '0.19'} quants.dequantize() "
                            "of its blocks, the converter's reordering undone"),
                "quantization": qtype, "quantized_tensors": sorted(replaced),
                "prompt_ids": ref["prompt_ids"], "steps": ref["steps"], "first_logits": [float(x) for x in first],
                "greedy_ids": new, "gaps": gaps, "min_gap": min(gaps),
                "max_first_logit_change": float(np.abs(first - np.array(ref["first_logits"])).max()),
                "ids_equal_to_f32": agree,
            })
            print(f"{name}_gguf/{name}-{suffix}.gguf: {size} bytes, {len(replaced)} {qtype} matrices; "
                  f"min gap {min(gaps):.4f}, {agree}/{len(new)} ids as F32, "
                  f"first logits moved {np.abs(first - np.array(ref['first_logits'])).max():.4f}")

        # The F32 file's tensors undone must be the checkpoint's (all but ssm_a, -exp(A_log): a
        # round trip through exp and log, checked against the float32 reference by the Rust test).
        # A norm stored as 1 + w gives back w up to the bits 1 + w cannot hold: the same 1 + w the
        # model multiplies by.
        for gg, array, hf, inverse in tensors:
            if inverse is not None:
                back, w = inverse(array), taken(weights, hf)
                assert np.array_equal(back, w) or np.array_equal(back + np.float32(1), w + np.float32(1)), gg


if __name__ == "__main__":
    main()
