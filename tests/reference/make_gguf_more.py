#!/usr/bin/env python3
"""GGUF files of the tiny ministral3, gemma4, gpt_oss and gpt_oss_mxfp4 checkpoints, written with the `gguf`
package the way llama.cpp's converter (conversion/mistral3.py, llama.py, gemma.py, gpt_oss.py) writes the
`mistral3`, `gemma4` and `gpt-oss` architectures, with references for the quantized ones.

    /opt/confab-ref/bin/python tests/reference/make_gguf_more.py

Needs the `gguf` package (0.19), mlx and mlx-lm 0.32.2, numpy, safetensors, tokenizers and transformers
(gguf's LlamaHfVocab loads the tokenizer through it): the reference venv of
docs/tests.md ('Reference fixtures') has them all. Works offline. CI never runs this; the outputs are
committed. It deletes and rewrites only ministral3_gguf/, gemma4_gguf/, gpt_oss_gguf/ and gguf_blocks/
below (under 1 MB a file but gemma4's F32, 1.27 MB, its text weights' size), in a few seconds.

Sources: the safetensors fixtures under tests/reference/fixtures/tiny/ (ministral3 from make_ministral3.py,
gemma4 from make_gemma4.py, gpt_oss and gpt_oss_mxfp4 from make_gpt_oss.py) and their reference.json (transformers, float32; torch is
not in the reference venv any more, so the quantized references come from mlx-lm).

What it makes:

  ministral3_gguf/ministral3-f32.gguf   the text model, every tensor F32: must give ministral3/reference.json's
                     `causal_lm` first-step logits and greedy ids (its `text` prompt);
                     reference-f32.json holds them in the schema the other GGUF tests read, with the chat.
  ministral3_gguf/ministral3-q8_0.gguf, -q4_0.gguf
                     the matrices whose rows are a multiple of 32 wide in Q8_0 / Q4_0, the rest F32;
  ministral3_gguf/ministral3-q5_0.gguf, -q5_1.gguf
                     likewise in Q5_0 (the embeddings Q4_0, the head Q8_0) and Q5_1 (the embeddings Q4_1);
                     reference-<type>.json for each: mlx-lm's float32 forward pass with each
                     quantized matrix replaced by gguf.quants.dequantize() of its blocks (the converter's
                     reordering undone).
  gemma4_gguf/gemma4-f32.gguf            the text model, every tensor F32: must give gemma4/reference.json (transformers
                     5.24, the multimodal checkpoint's text path).
  gemma4_gguf/gemma4-q8_0.gguf, -q4_0.gguf, reference-q8_0.json, reference-q4_0.json
                     as ministral3's (mlx-lm 0.32.2's gemma4_text, on the released config dialect).
  gemma4_gguf/tokenizer/  the tiny checkpoint's tokenizer respelled as Gemma 4's tokenizer.json is (see
                     gemma4_style_tokenizer), with its tokenizer_config.json and chat template: the
                     vocabulary the three gemma4 files carry, as the converter writes Gemma 4's.
  gemma4_gguf/tokenizer_reference.json
                     the `tokenizers` package's ids for that tokenizer.json on varied texts (with and
                     without BOS) and on gemma4/reference.json's chat: the GGUF's tokenizer must give them.
  gpt_oss_gguf/gpt_oss-f32.gguf          every tensor F32 (experts dense): must give gpt_oss/reference.json.
  gpt_oss_gguf/gpt_oss_mxfp4-mxfp4.gguf  the experts MXFP4 as the converter repacks OpenAI's blocks (the same
                     e2m1 values and e8m0 scales, bytes moved), the rest F32: must give
                     gpt_oss_mxfp4/reference.json (transformers on the dequantized experts).

  gguf_blocks/blocks.gguf
                     for the block reader's decoders (crates/engine/src/model/format/gguf_blocks.rs), a 4 x 256
                     tensor of each type it widens (F16, BF16, Q5_0, Q5_1, MXFP4, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)
                     and beside each, as `<type>.expected` in F32, gguf.quants.dequantize() of its blocks: the
                     decoder must give those float32 values bit for bit. Q5_0, Q5_1 and MXFP4 blocks are gguf's
                     quantization of random rows, F16 and BF16 random rows; the K-quants (which gguf cannot
                     quantize to) random bytes with finite float16 super-block scales.

The mlx-lm reference is checked first on the unquantized weights against transformers' reference.json
(the same ids, first-step logits within 1e-4), so that the two references agree where they meet. gpt-oss
has no quantized-matrix file: mlx-lm 0.32.2's gpt_oss does not agree with transformers on these tiny
checkpoints (nor load the MXFP4 one: its gather_qmm call passes an argument mlx 0.32.2 refuses), and
the venv has no torch; the MXFP4 experts need no other reference, being the checkpoint's values exactly.

The converter's changes, per architecture:

  mistral3 (Mistral3Model.Ministral3Model, a LlamaModel) the text tensors only (`language_model.` removed,
           the vision tower and projector left to the mmproj file); Q and K rows permuted per head for
           ggml's interleaved RoPE (LlamaModel.permute: each head's halves interleaved), the rest renamed as
           llama's; metadata as llama's (vocab_size, rope.dimension_count) plus YaRN's (rope.scaling.type
           yarn, factor, original_context_length, yarn_beta_fast/slow), yarn_log_multiplier (mscale_all_dim)
           and attention.temperature_scale (llama_4_scaling_beta).
  gemma4   (Gemma4Model, a Gemma3Model without the 1 + w norms) the text tensors by gguf's name map for
           gemma4 (layer_scalar as layer_output_scale.weight); key_length/value_length the full layers'
           head size, *_swa the sliding ones'; head_count_kv and feed_forward_length per layer (double-wide
           MLPs in the shared-KV layers); sliding_window_pattern, shared_kv_layers,
           embedding_length_per_layer_input, rope.dimension_count(_swa), final_logit_softcapping; the full
           layers' proportional RoPE as a rope_freqs tensor (1 for the rotated pairs, 1e30 for the rest).
           K = V on the full layers shows as their missing attn_v. (The converter takes the full layers'
           sizes from global_head_dim / num_global_key_value_heads; this checkpoint's config says them in
           transformers 5.24's per_layer_config.) The vocabulary as Gemma4Model.set_vocab writes it
           (tokenizer model `gemma4`: gguf's LlamaHfVocab tokens, scores and types, the merges, no space
           prefix, BOS added), from gemma4_gguf/tokenizer/ (this tiny checkpoint's own is byte-level).
  gpt-oss  (GptOssModel) experts split: transformers' gate_up_proj [E, H, 2I] (gate and up interleaved along
           the last axis) transposed and split into ffn_gate_exps and ffn_up_exps [E, I, H], down_proj
           transposed to ffn_down_exps [E, H, I], biases likewise split; MXFP4 blocks ([E, out, in/32, 16],
           element 2k in byte k's low nibble) repacked to ggml's MXFP4 (one e8m0 byte then 16 bytes whose
           low nibbles are elements 0-15 and high nibbles 16-31); sinks as attn_sinks.weight; the router
           as ffn_gate_inp; metadata: expert_count, expert_used_count, expert_feed_forward_length,
           sliding_window and YaRN's keys (llama.cpp fixes the alternating layers, sliding first, and the
           SwiGLU's alpha 1.702 and limit 7).

The tokenizer is each fixture's byte-level BPE as make_gguf_families.py writes it (the converter's
_set_vocab_gpt2), with the chat template; gemma4's is Gemma 4's kind (above).
"""
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_gguf_families as families  # noqa: E402

OUT = families.OUT
MXFP4 = "MXFP4"


# ----------------------------------------------------------------------------------------------------
# mistral3

def permute(w, n_head):
    """LlamaModel.permute: each head's rows [first half, second half] -> interleaved."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


LLAMA_BLOCK = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
               "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
               "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down"}


def ministral3_text(weights):
    """The text model's tensors under Ministral3ForCausalLM's names."""
    return {k.removeprefix("language_model."): v for k, v in weights.items() if k.startswith("language_model.")}


def ministral3_tensors(weights, config):
    text = config["text_config"]
    heads, kv_heads = text["num_attention_heads"], text["num_key_value_heads"]
    out = []
    for name, w in ministral3_text(weights).items():
        if name == "model.embed_tokens.weight":
            out.append(("token_embd.weight", w, name, lambda a: a))
        elif name == "model.norm.weight":
            out.append(("output_norm.weight", w, name, lambda a: a))
        elif name == "lm_head.weight":
            out.append(("output.weight", w, name, lambda a: a))
        else:
            _, _, layer, rest = name.split(".", 3)
            module = rest.removesuffix(".weight")
            gg = f"blk.{layer}.{LLAMA_BLOCK[module]}.weight"
            n = {"self_attn.q_proj": heads, "self_attn.k_proj": kv_heads}.get(module)
            if n:
                out.append((gg, permute(w, n), name, lambda a, n=n: unpermute(a, n)))
            else:
                out.append((gg, w, name, lambda a: a))
    return out


def ministral3_metadata(writer, config):
    import gguf

    c = config["text_config"]
    writer.add_context_length(c["max_position_embeddings"])
    writer.add_embedding_length(c["hidden_size"])
    writer.add_block_count(c["num_hidden_layers"])
    writer.add_feed_forward_length(c["intermediate_size"])
    writer.add_head_count(c["num_attention_heads"])
    writer.add_head_count_kv(c["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(c["rms_norm_eps"])
    writer.add_key_length(c["head_dim"])
    writer.add_value_length(c["head_dim"])
    writer.add_vocab_size(c["vocab_size"])
    writer.add_rope_dimension_count(c["head_dim"])
    rope = c["rope_parameters"]
    writer.add_rope_freq_base(rope["rope_theta"])
    assert rope["rope_type"] == "yarn"
    assert rope["mscale"] == rope["mscale_all_dim"], "the converter keeps only mscale_all_dim"
    writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    writer.add_rope_scaling_factor(rope["factor"])
    writer.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
    writer.add_rope_scaling_yarn_beta_fast(rope["beta_fast"])
    writer.add_rope_scaling_yarn_beta_slow(rope["beta_slow"])
    writer.add_rope_scaling_yarn_log_mul(rope["mscale_all_dim"])
    writer.add_attn_temperature_scale(rope["llama_4_scaling_beta"])


# ----------------------------------------------------------------------------------------------------
# gpt-oss

def mxfp4_to_ggml(blocks, scales):
    """OpenAI's MXFP4 ([..., groups, 16] bytes, element 2k in byte k's low nibble, 2k+1 in its high one;
    e8m0 scales [..., groups]) -> ggml's blocks ([..., groups * 17]: the scale byte, then 16 bytes whose
    low nibbles hold elements 0-15 and high nibbles elements 16-31)."""
    elements = np.stack([blocks & 0x0F, blocks >> 4], axis=-1).reshape(*blocks.shape[:-1], 32)
    qs = elements[..., :16] | (elements[..., 16:] << 4)
    packed = np.concatenate([scales[..., None], qs.astype(np.uint8)], axis=-1)
    return np.ascontiguousarray(packed.reshape(*blocks.shape[:-2], blocks.shape[-2] * 17))


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def mxfp4_dense(blocks, scales):
    """OpenAI's MXFP4 dequantized (as transformers' convert_moe_packed_tensors): [..., groups * 32]."""
    elements = np.stack([blocks & 0x0F, blocks >> 4], axis=-1).reshape(*blocks.shape[:-1], 32)
    values = E2M1[elements] * np.ldexp(np.float32(1), scales.astype(np.int32) - 127)[..., None]
    return values.reshape(*blocks.shape[:-2], blocks.shape[-2] * 32).astype(np.float32)


GPT_OSS_BLOCK = {"input_layernorm": "attn_norm", "post_attention_layernorm": "post_attention_norm",
                 "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
                 "self_attn.o_proj": "attn_output", "mlp.router": "ffn_gate_inp"}


def gpt_oss_tensors(weights, config):
    """[(gguf name, array or (raw bytes, qtype), mlx-lm name, dense array for the reference)]."""
    out = []
    for name, w in weights.items():
        if name == "model.embed_tokens.weight":
            out.append(("token_embd.weight", w, name))
            continue
        if name == "model.norm.weight":
            out.append(("output_norm.weight", w, name))
            continue
        if name == "lm_head.weight":
            out.append(("output.weight", w, name))
            continue
        _, _, layer, rest = name.split(".", 3)
        blk = f"blk.{layer}"
        mlx = f"model.layers.{layer}.mlp.experts"
        if rest == "self_attn.sinks":
            out.append((f"{blk}.attn_sinks.weight", w, name))
        elif rest == "mlp.experts.gate_up_proj":  # [E, H, 2I], gate and up interleaved
            t = np.swapaxes(w, 1, 2)
            out.append((f"{blk}.ffn_gate_exps.weight", np.ascontiguousarray(t[:, ::2]), f"{mlx}.gate_proj.weight"))
            out.append((f"{blk}.ffn_up_exps.weight", np.ascontiguousarray(t[:, 1::2]), f"{mlx}.up_proj.weight"))
        elif rest == "mlp.experts.down_proj":  # [E, I, H]
            out.append((f"{blk}.ffn_down_exps.weight", np.ascontiguousarray(np.swapaxes(w, 1, 2)), f"{mlx}.down_proj.weight"))
        elif rest == "mlp.experts.gate_up_proj_bias":
            out.append((f"{blk}.ffn_gate_exps.bias", np.ascontiguousarray(w[:, ::2]), f"{mlx}.gate_proj.bias"))
            out.append((f"{blk}.ffn_up_exps.bias", np.ascontiguousarray(w[:, 1::2]), f"{mlx}.up_proj.bias"))
        elif rest == "mlp.experts.down_proj_bias":
            out.append((f"{blk}.ffn_down_exps.bias", w, f"{mlx}.down_proj.bias"))
        elif rest == "mlp.experts.gate_up_proj_blocks":  # [E, 2I, groups, 16]: rows interleaved
            scales = weights[name.replace("_blocks", "_scales")]
            for proj, rows in (("gate", np.s_[:, ::2]), ("up", np.s_[:, 1::2])):
                b, s = blocks_rows(w, scales, rows)
                out.append((f"{blk}.ffn_{proj}_exps.weight", (mxfp4_to_ggml(b, s), MXFP4), f"{mlx}.{proj}_proj.weight"))
        elif rest == "mlp.experts.down_proj_blocks":
            scales = weights[name.replace("_blocks", "_scales")]
            out.append((f"{blk}.ffn_down_exps.weight", (mxfp4_to_ggml(w, scales), MXFP4), f"{mlx}.down_proj.weight"))
        elif rest.endswith("_scales"):
            continue
        else:
            module, suffix = rest.rsplit(".", 1)
            out.append((f"{blk}.{GPT_OSS_BLOCK[module]}.{suffix}", w, name))
    return out


def blocks_rows(blocks, scales, rows):
    return np.ascontiguousarray(blocks[rows]), np.ascontiguousarray(scales[rows])


def gpt_oss_metadata(writer, config):
    import gguf

    c = config
    writer.add_context_length(c["max_position_embeddings"])
    writer.add_embedding_length(c["hidden_size"])
    writer.add_block_count(c["num_hidden_layers"])
    writer.add_feed_forward_length(c["intermediate_size"])
    writer.add_head_count(c["num_attention_heads"])
    writer.add_head_count_kv(c["num_key_value_heads"])
    writer.add_layer_norm_rms_eps(c["rms_norm_eps"])
    writer.add_key_length(c["head_dim"])
    writer.add_value_length(c["head_dim"])
    rope = c["rope_parameters"]
    writer.add_rope_freq_base(rope["rope_theta"])
    writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    writer.add_rope_scaling_factor(rope["factor"])
    writer.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
    writer.add_rope_scaling_yarn_beta_fast(rope["beta_fast"])
    writer.add_rope_scaling_yarn_beta_slow(rope["beta_slow"])
    writer.add_sliding_window(c["sliding_window"])
    writer.add_expert_feed_forward_length(c["intermediate_size"])
    writer.add_expert_count(c["num_local_experts"])
    writer.add_expert_used_count(c["num_experts_per_tok"])
    # What llama.cpp fixes for gpt-oss, checked here so that the file means what the checkpoint does.
    assert c["layer_types"] == ["sliding_attention", "full_attention"] * (c["num_hidden_layers"] // 2)
    assert (c["swiglu_alpha"], c["swiglu_limit"]) == (1.702, 7.0) and rope.get("truncate") is False


# ----------------------------------------------------------------------------------------------------
# Writing

def write(path, arch, folder, config, tensors, qtype, overrides=None):
    """`tensors`: (gguf name, array or (raw bytes, ggml type name), ...); the quantizable ones in `qtype`
    but those `overrides` names another type for. Returns gguf name -> the float32 array a loader reads
    back (the raw and quantized ones through gguf.quants.dequantize)."""
    import gguf

    overrides = overrides or {}
    writer = gguf.GGUFWriter(path, arch)
    writer.add_name(f"tiny {os.path.basename(folder)}")
    {"mistral3": ministral3_metadata, "gpt-oss": gpt_oss_metadata, "gemma4": gemma4_metadata}[arch](writer, config)
    raw_types = {t[1][1] for t in tensors if isinstance(t[1], tuple)}
    file_type = gguf.LlamaFileType.MOSTLY_MXFP4_MOE if raw_types else {
        None: gguf.LlamaFileType.ALL_F32, "Q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "Q4_0": gguf.LlamaFileType.MOSTLY_Q4_0,
        "Q5_0": gguf.LlamaFileType.MOSTLY_Q5_0, "Q5_1": gguf.LlamaFileType.MOSTLY_Q5_1}[qtype]
    writer.add_file_type(file_type)
    if arch == "gemma4":
        add_gemma4_vocab(writer, os.path.join(OUT, "gemma4_gguf", "tokenizer"))
    else:
        families.add_vocab(writer, folder, config)
    stored = {}
    for gg, array, *_ in tensors:
        if isinstance(array, tuple):
            raw, name = array
            t = gguf.GGMLQuantizationType[name]
            writer.add_tensor(gg, raw, raw_shape=raw.shape, raw_dtype=t)
            stored[gg] = gguf.quants.dequantize(raw, t)
            continue
        array = np.ascontiguousarray(array, dtype=np.float32)
        if qtype is not None and families.quantizable(gg, array):
            t = gguf.GGMLQuantizationType[overrides.get(gg, qtype)]
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
    # Under 1 MB, or (gemma4: 1.27 MB) no larger than the text weights and the vocabulary.
    assert os.path.getsize(path) < max(1 << 20, sum(np.asarray(t[1] if not isinstance(t[1], tuple) else t[1][0]).nbytes for t in tensors) + (32 << 10)), path
    assert gguf.GGUFReader(path).fields["general.architecture"].contents() == arch
    return stored


# ----------------------------------------------------------------------------------------------------
# References (mlx-lm, float32)

def mlx_greedy(config, weights, prompt, steps):
    """mlx-lm's model of `config` on `weights` (mlx-lm's names, float32): first-step logits, greedy ids
    through its cache, and the gaps between the top two logits at each step."""
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache
    from mlx_lm.utils import load_model

    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "config.json"), "w") as f:
            json.dump(config, f)
        mx.save_safetensors(os.path.join(tmp, "model.safetensors"), {k: mx.array(v) for k, v in weights.items()})
        model, _ = load_model(__import__("pathlib").Path(tmp))
    cache = make_prompt_cache(model)
    logits = model(mx.array([prompt]), cache=cache)[0, -1].astype(mx.float32)
    first = np.array(logits)
    ids, gaps = [], []
    for _ in range(steps):
        row = np.array(logits)
        gaps.append(families.gap(row))
        ids.append(int(row.argmax()))
        logits = model(mx.array([[ids[-1]]]), cache=cache)[0, -1].astype(mx.float32)
    return first, ids, gaps


def check_agrees(first, ids, want_logits, want_ids, what):
    diff = float(np.abs(first - np.array(want_logits)).max())
    assert diff < 1e-4 and ids == want_ids, f"{what}: mlx-lm differs from transformers by {diff}, ids {ids} vs {want_ids}"
    print(f"{what}: mlx-lm on the unquantized weights agrees with transformers ({diff:.1e}, {len(ids)} ids)")


def reference(path, name, qtype, prompt, steps, first, ids, gaps, f32, tensors, source):
    import gguf

    families.write_json(path, {
        "name": name, "source": source, "producer": "tests/reference/make_gguf_more.py",
        "compute": (f"mlx-lm 0.32.2, float32 on the CPU, greedy through its prompt cache; every {qtype} matrix "
                    f"replaced by gguf {getattr(gguf, '__version__', '0.19')} quants.dequantize() of its blocks, "
                    "the converter's reordering undone"),
        "quantization": qtype, "quantized_tensors": sorted(tensors),
        "prompt_ids": prompt, "steps": steps, "first_logits": [float(x) for x in first],
        "greedy_ids": ids, "gaps": gaps, "min_gap": min(gaps),
        "max_first_logit_change": float(np.abs(first - np.array(f32["first_logits"])).max()),
        "ids_equal_to_f32": sum(a == b for a, b in zip(ids, f32["greedy_ids"])),
    })
    print(f"{os.path.basename(path)}: {len(tensors)} {qtype} matrices; min gap {min(gaps):.4f}, "
          f"{sum(a == b for a, b in zip(ids, f32['greedy_ids']))}/{len(ids)} ids as unquantized")


def ministral3():
    folder = os.path.join(OUT, "ministral3")
    config = families.read_json(os.path.join(folder, "config.json"))
    ref = families.read_json(os.path.join(folder, "reference.json"))
    weights = families.load_weights(folder)
    out = os.path.join(OUT, "ministral3_gguf")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    tensors = ministral3_tensors(weights, config)
    prompt, steps = ref["text"]["input_ids"], ref["steps"]
    f32 = {"first_logits": ref["causal_lm"]["first_logits"], "greedy_ids": ref["causal_lm"]["greedy_ids"]}
    text = [{"role": m["role"], "content": "".join(p["text"] for p in m["content"])} for m in ref["text"]["messages"]]
    families.write_json(os.path.join(out, "reference-f32.json"), {
        "name": "ministral3-f32", "source": "ministral3/reference.json (causal_lm, text)",
        "producer": "tests/reference/make_gguf_more.py", "compute": ref["compute"],
        "prompt_ids": prompt, "steps": steps, **f32, "chat": {"messages": text, "ids": prompt},
    })
    mlx_config = {**config["text_config"], "architectures": ["Ministral3ForCausalLM"]}
    hf = ministral3_text(weights)
    check_agrees(*mlx_greedy(mlx_config, hf, prompt, steps)[:2], f32["first_logits"], f32["greedy_ids"], "ministral3")
    # Q5_0 and Q5_1, which MLX's loader fails on, with llama.cpp's habit of other types for the
    # embeddings and the head: the whole file is read by our block reader, Q4_0, Q4_1 and Q8_0 too.
    mixed = {"Q5_0": {"token_embd.weight": "Q4_0", "output.weight": "Q8_0"}, "Q5_1": {"token_embd.weight": "Q4_1"}}
    for qtype in [None, "Q8_0", "Q4_0", "Q5_0", "Q5_1"]:
        suffix = (qtype or "f32").lower()
        stored = write(os.path.join(out, f"ministral3-{suffix}.gguf"), "mistral3", folder, config, tensors, qtype,
                       mixed.get(qtype))
        if qtype is None:
            continue
        replaced = {name: inverse(stored[gg]) for gg, a, name, inverse in tensors if families.quantizable(gg, a)}
        first, ids, gaps = mlx_greedy(mlx_config, {**hf, **replaced}, prompt, steps)
        reference(os.path.join(out, f"reference-{suffix}.json"), f"ministral3-{suffix}", qtype, prompt, steps,
                  first, ids, gaps, f32, replaced, "ministral3/reference.json")
    # The F32 file's tensors undone are the checkpoint's.
    for gg, a, name, inverse in tensors:
        assert np.array_equal(inverse(a), hf[name]), gg


def gpt_oss():
    out = os.path.join(OUT, "gpt_oss_gguf")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, kind in (("gpt_oss", None), ("gpt_oss_mxfp4", MXFP4)):
        folder = os.path.join(OUT, name)
        config = families.read_json(os.path.join(folder, "config.json"))
        weights = families.load_weights(folder)
        tensors = gpt_oss_tensors(weights, config)
        path = os.path.join(out, f"{name}-{(kind or 'f32').lower()}.gguf")
        stored = write(path, "gpt-oss", folder, config, tensors, None)
        for gg, array, _ in tensors:
            if not isinstance(array, tuple):
                continue
            # gguf's own dequantization of the repacked blocks is the checkpoint's, exactly (transformers'
            # convert_moe_packed_tensors gave the reference these values).
            layer, proj = gg.split(".")[1], gg.split(".")[2].split("_")[1]
            src = f"model.layers.{layer}.mlp.experts.{'down_proj' if proj == 'down' else 'gate_up_proj'}"
            full = mxfp4_dense(weights[f"{src}_blocks"], weights[f"{src}_scales"])
            want = full[:, ::2] if proj == "gate" else full[:, 1::2] if proj == "up" else full
            assert np.array_equal(stored[gg].reshape(want.shape), want), gg
        print(f"gpt_oss_gguf/{os.path.basename(path)}: {os.path.getsize(path)} bytes (compare with {name}/reference.json)")


# ----------------------------------------------------------------------------------------------------
# gemma4 (text)

def gemma4_tensors(weights, config):
    """The text model's tensors under llama.cpp's names (gguf's own name map for `gemma4`, as the
    converter maps them); `layer_scalar` as `layer_output_scale.weight`; norms as they are (Gemma 4's
    are not stored as 1 + w); the full layers' `rope_freqs` (proportional RoPE: 1 for the rotated
    frequency pairs, 1e30 for the rest)."""
    import gguf

    c = config["text_config"]
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.GEMMA4, c["num_hidden_layers"])
    out = []
    for name, w in weights.items():
        if not name.startswith("model.language_model."):
            continue
        hf = name.replace("model.language_model.", "model.")
        base = hf.removesuffix(".weight")
        gg = names.get_name(base)
        assert gg is not None, hf
        out.append((f"{gg}.weight", w.reshape(-1) if base.endswith("layer_scalar") else w, name, lambda a: a))
    full = c["rope_parameters"]["full_attention"]
    global_head_dim = c["per_layer_config"][str(c["layer_types"].index("full_attention"))]["head_dim"]
    rotated = int(global_head_dim * full["partial_rotary_factor"] / 2)
    freqs = np.array([1.0] * rotated + [1e30] * (global_head_dim // 2 - rotated), np.float32)
    out.append(("rope_freqs.weight", freqs, None, None))
    return out


def gemma4_metadata(writer, config):
    c = config["text_config"]
    layers = c["layer_types"]
    per_layer = c["per_layer_config"]
    head_dim = lambda i: per_layer.get(str(i), {}).get("head_dim", c["head_dim"])  # noqa: E731
    kv_heads = lambda i: per_layer.get(str(i), {}).get("num_key_value_heads", c["num_key_value_heads"])  # noqa: E731
    full = layers.index("full_attention")
    sliding = layers.index("sliding_attention")
    writer.add_context_length(c["max_position_embeddings"])
    writer.add_embedding_length(c["hidden_size"])
    writer.add_block_count(c["num_hidden_layers"])
    shared = c["num_kv_shared_layers"]
    first_shared = c["num_hidden_layers"] - shared
    wide = c.get("use_double_wide_mlp", False)
    writer.add_feed_forward_length([c["intermediate_size"] * (2 if wide and i >= first_shared else 1) for i in range(len(layers))])
    writer.add_head_count(c["num_attention_heads"])
    writer.add_head_count_kv([kv_heads(i) for i in range(len(layers))])
    writer.add_layer_norm_rms_eps(c["rms_norm_eps"])
    writer.add_key_length(head_dim(full))
    writer.add_value_length(head_dim(full))
    writer.add_key_length_swa(head_dim(sliding))
    writer.add_value_length_swa(head_dim(sliding))
    rope = c["rope_parameters"]
    writer.add_rope_freq_base(rope["full_attention"]["rope_theta"])
    writer.add_rope_freq_base_swa(rope["sliding_attention"]["rope_theta"])
    writer.add_rope_dimension_count(head_dim(full))
    writer.add_rope_dimension_count_swa(int(head_dim(sliding) * rope["sliding_attention"].get("partial_rotary_factor", 1.0)))
    writer.add_final_logit_softcapping(c["final_logit_softcapping"])
    writer.add_sliding_window(c["sliding_window"])
    writer.add_sliding_window_pattern([t == "sliding_attention" for t in layers])
    writer.add_shared_kv_layers(shared)
    writer.add_embedding_length_per_layer_input(c["hidden_size_per_layer_input"])
    # What the converter leaves to the tensors: K = V on full layers (no attn_v there), the
    # MoE block (not in this checkpoint).
    assert c["attention_k_eq_v"] and not c.get("enable_moe_block")


# The texts the GGUF's tokenizer must split as the tokenizer.json does: Unicode (accents, CJK, an
# emoji none of whose bytes are tokens: byte fallback), runs of spaces, digits, code, the special
# tokens inside text, newlines alone and in runs, and an empty text.
GEMMA4_TOKENIZER_TEXTS = [
    "The capital of France is Paris.",
    "  leading and trailing spaces   ",
    "tabs\tand\nnewlines\n\n\nthree of them\r\n",
    "héllo wörld, naïve café — “quotes” 日本語のテキスト 🦀🎉",
    "1234567890 3.14159 -42 1e10 2026-12-04",
    "def f(x):\n    return x**2  # square\n\nprint(f(3))",
    "<bos><|turn>user\nWhat is 2+2?<turn|>\n<|turn>model\n<|channel>thought<channel|>4<turn|>",
    "\n",
    "",
]


def gemma4_style_tokenizer(folder, out):
    """The tiny checkpoint's tokenizer.json respelled as Gemma 4's is (transformers' GemmaTokenizer: a
    normalizer writing spaces as `▁`, BPE over characters with `<0xXX>` byte fallback, no split,
    `<bos>` added), in `out` with its tokenizer_config.json and chat template.

    The tiny checkpoint was trained byte-level; the same ids and merges respelled: a token whose bytes
    are UTF-8 text is that text with `▁` for spaces, a lone byte that is not is `<0xXX>`, and the few
    merged tokens that are a part of a character become `<unusedN>` (control, as Gemma's own); merges
    that no longer make a token of text are dropped. Every byte 0x80-0xFF is then a byte token and
    every ASCII character a token, so any text can be encoded."""
    import gguf.vocab
    from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import BPE

    source = families.read_json(os.path.join(folder, "tokenizer.json"))
    byte_of = {c: b for b, c in gguf.vocab.bytes_to_unicode().items()}
    specials = {t["content"] for t in source["added_tokens"]}

    def respell(token):
        if token in specials:
            return token, True
        raw = bytes(byte_of[c] for c in token)
        try:
            return raw.decode("utf-8").replace(" ", "▁"), True
        except UnicodeDecodeError:
            return (f"<0x{raw[0]:02X}>", False) if len(raw) == 1 else (None, False)

    vocab, unused = {}, []
    for token, i in sorted(source["model"]["vocab"].items(), key=lambda kv: kv[1]):
        spelled, _ = respell(token)
        if spelled is None:
            spelled = f"<unused{len(unused)}>"
            unused.append(spelled)
        assert spelled not in vocab, spelled
        vocab[spelled] = i
    assert all(f"<0x{b:02X}>" in vocab for b in range(0x80, 0x100))
    merges = []
    for left, right in (m.split(" ", 1) if isinstance(m, str) else m for m in source["model"]["merges"]):
        (a, a_text), (b, b_text), (ab, ab_text) = respell(left), respell(right), respell(left + right)
        if a_text and b_text and ab_text:
            assert a + b == ab and ab in vocab, (left, right)
            merges.append((a, b))

    tok = Tokenizer(BPE(vocab=vocab, merges=merges, byte_fallback=True, fuse_unk=True, dropout=None))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    added = [t["content"] for t in source["added_tokens"]] + unused
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in added])
    tok.post_processor = processors.TemplateProcessing(single="<bos> $A", pair="<bos> $A <bos> $B",
                                                       special_tokens=[("<bos>", vocab["<bos>"])])
    os.makedirs(out)
    tok.save(os.path.join(out, "tokenizer.json"))
    config = families.read_json(os.path.join(folder, "tokenizer_config.json"))
    config["add_bos_token"] = True
    # Every added token special to transformers too (as Gemma 4's config lists its markers), so the
    # converter marks them CONTROL; the chat parser's markers it then marks USER_DEFINED.
    roles = {config["bos_token"], config["eos_token"], config["pad_token"]}
    config["extra_special_tokens"] = sorted(set(config.get("extra_special_tokens", [])) | (set(added) - roles))
    with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
    shutil.copy(os.path.join(folder, "chat_template.jinja"), out)
    return tok, len(unused), len(source["model"]["merges"]) - len(merges)


def add_gemma4_vocab(writer, folder):
    """Gemma4Model.set_vocab of llama.cpp's converter: gguf's LlamaHfVocab over the tokenizer.json (score
    -1000 each, byte tokens BYTE, the tokenizer's special ids CONTROL, the chat parser's markers
    USER_DEFINED), tokenizer model `gemma4`, SpecialVocab with the merges, no space prefix, BOS added."""
    import gguf

    vocab = gguf.LlamaHfVocab(Path(folder))
    visible = {"<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", "<|tool_response>", "<tool_response|>", '<|"|>'}
    tokens, scores, types = [], [], []
    for text, score, toktype in vocab.all_tokens():
        tokens.append(text)
        scores.append(score)
        types.append(gguf.TokenType.USER_DEFINED if text.decode() in visible else toktype)
    assert len(tokens) == vocab.vocab_size
    writer.add_tokenizer_model("gemma4")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    gguf.SpecialVocab(Path(folder), load_merges=True).add_to_gguf(writer)
    writer.add_add_space_prefix(False)
    writer.add_add_bos_token(True)


def gemma4_tokenizer_reference(tok, folder, out, unused, dropped):
    """What the tokenizer.json gives (the `tokenizers` package): each text's ids with and without BOS,
    and the chat of gemma4/reference.json rendered by its template, in tokenizer_reference.json."""
    ref = families.read_json(os.path.join(folder, "reference.json"))
    texts = [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids, "ids_with_bos": tok.encode(t).ids}
             for t in GEMMA4_TOKENIZER_TEXTS]
    for t in texts:
        assert tok.decode(t["ids"], skip_special_tokens=False) == t["text"], t
    chat = dict(ref["chat"])
    chat["ids"] = tok.encode(chat["text"], add_special_tokens=False).ids
    with open(os.path.join(out, "tokenizer_reference.json"), "w", encoding="utf-8") as f:
        json.dump({"producer": f"tokenizers {__import__('tokenizers').__version__} on tokenizer/tokenizer.json",
                   "unused_tokens": unused, "dropped_merges": dropped, "texts": texts, "chat": chat}, f, indent=1, ensure_ascii=False)


def gemma4():
    folder = os.path.join(OUT, "gemma4")
    config = families.read_json(os.path.join(folder, "config.json"))
    ref = families.read_json(os.path.join(folder, "reference.json"))
    weights = families.load_weights(folder)
    out = os.path.join(OUT, "gemma4_gguf")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    tok, unused, dropped = gemma4_style_tokenizer(folder, os.path.join(out, "tokenizer"))
    gemma4_tokenizer_reference(tok, folder, out, unused, dropped)
    tensors = gemma4_tensors(weights, config)
    # mlx-lm reads the released config dialect (global_head_dim, num_global_key_value_heads), not
    # transformers 5.24's per_layer_config; the same model.
    text = dict(config["text_config"])
    per_layer = text.pop("per_layer_config")
    full = str(text["layer_types"].index("full_attention"))
    mlx_config = {**text, "model_type": "gemma4_text", "global_head_dim": per_layer[full]["head_dim"],
                  "num_global_key_value_heads": per_layer[full]["num_key_value_heads"]}
    mlx_name = lambda name: name.replace("model.language_model.", "model.")  # noqa: E731
    hf = {mlx_name(k): v for k, v in weights.items() if k.startswith("model.language_model.")}
    check_agrees(*mlx_greedy(mlx_config, hf, ref["prompt_ids"], ref["steps"])[:2], ref["first_logits"], ref["greedy_ids"], "gemma4")
    for qtype in [None, "Q8_0", "Q4_0"]:
        suffix = (qtype or "f32").lower()
        path = os.path.join(out, f"gemma4-{suffix}.gguf")
        stored = write(path, "gemma4", folder, config, tensors, qtype)
        if qtype is None:
            print(f"gemma4_gguf/gemma4-f32.gguf: {os.path.getsize(path)} bytes (compare with gemma4/reference.json)")
            continue
        replaced = {mlx_name(name): stored[gg].reshape(hf[mlx_name(name)].shape) for gg, a, name, _ in tensors
                    if name is not None and families.quantizable(gg, a)}
        first, ids, gaps = mlx_greedy(mlx_config, {**hf, **replaced}, ref["prompt_ids"], ref["steps"])
        reference(os.path.join(out, f"reference-{suffix}.json"), f"gemma4-{suffix}", qtype, ref["prompt_ids"],
                  ref["steps"], first, ids, gaps, ref, replaced, "gemma4/reference.json")


def blocks():
    import gguf

    out = os.path.join(OUT, "gguf_blocks")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    rng = np.random.default_rng(11)
    rows, columns = 4, 256
    writer = gguf.GGUFWriter(os.path.join(out, "blocks.gguf"), "blocks")
    # Where each K-quant keeps its float16 super-block scales (d, and dmin where it has one).
    halves_at = {"Q2_K": -4, "Q3_K": -2, "Q4_K": 0, "Q5_K": 0, "Q6_K": -2}
    for name in ["F16", "BF16", "Q5_0", "Q5_1", "MXFP4", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"]:
        t = gguf.GGMLQuantizationType[name]
        block, size = gguf.GGML_QUANT_SIZES[t]
        if name in halves_at:
            raw = rng.integers(0, 256, (rows, columns // block, size), dtype=np.uint8)
            # Finite float16 scales: random bytes there could be infinities or NaNs.
            halves = (rng.standard_normal((rows, columns // block, 2)) * 0.05).astype(np.float16).view(np.uint8)
            at = halves_at[name] % size
            n = 2 if name in ("Q3_K", "Q6_K") else 4
            raw[..., at:at + n] = halves[..., :n]
            raw = raw.reshape(rows, -1)
        elif name in ("F16", "BF16"):
            raw = rng.standard_normal((rows, columns)).astype(np.float32)
            raw = raw.astype(np.float16).view(np.uint8) if name == "F16" else (raw.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)
            raw = raw.reshape(rows, -1)
        else:
            raw = gguf.quants.quantize(rng.standard_normal((rows, columns)).astype(np.float32) * 0.3, t)
        writer.add_tensor(name, raw, raw_shape=raw.shape, raw_dtype=t)
        expected = gguf.quants.dequantize(raw, t).reshape(rows, columns).astype(np.float32)
        assert np.isfinite(expected).all(), name
        writer.add_tensor(f"{name}.expected", expected)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"gguf_blocks/blocks.gguf: {os.path.getsize(os.path.join(out, 'blocks.gguf'))} bytes")


def main():
    ministral3()
    gpt_oss()
    gemma4()
    blocks()


if __name__ == "__main__":
    main()
