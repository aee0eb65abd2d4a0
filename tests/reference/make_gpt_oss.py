#!/usr/bin/env python3
"""A tiny random gpt-oss checkpoint (attention sinks, alternating sliding-window and full layers, YaRN
RoPE, a top-k router over experts with interleaved gate/up columns and a clamped SwiGLU, biases
everywhere) with float32 reference outputs from transformers' own GptOssForCausalLM.

    /opt/confab-ref/bin/python tests/reference/make_gpt_oss.py

Needs transformers 5 with torch (its GptOssConfig, GptOssForCausalLM and tokenizer), numpy and
safetensors. The reference venv of docs/tests.md ('Reference fixtures') has them all. Works offline. CI
never runs this; the outputs are committed. It deletes and rewrites only the gpt_oss folder below (about 0.3 MB)
and takes a few seconds; it leaves gpt_oss_harmony/chat_template.jinja (committed) in place.

The reference is transformers 5.25's GptOssForCausalLM (torch, eager attention, float32 on the CPU):
first-step logits of a 40-token prompt and 32 greedy ids decoded through its DynamicCache. The script
fails unless the same ids come from re-running the whole sequence each step without a cache (the cached
sliding windows against the plain masks), and unless the swiglu clamp bites (some gate/up values lie
beyond the limit, so a missing clamp would show).

What it makes, under tests/reference/fixtures/tiny/:

  gpt_oss   GptOssConfig as transformers 5 writes it (model_type gpt_oss): vocab 384, hidden 44, 4 layers
            [sliding_attention, full_attention, sliding_attention, full_attention] with sliding_window 8
            (the 40-token prompt is five windows long), 6 heads and 2 KV heads of head_dim 12, attention
            biases and per-head sinks, rope_parameters yarn (theta 1.5e5, factor 4, beta_fast 32,
            beta_slow 1, original_max_position_embeddings 64, truncate false), 5 experts of width 30,
            2 per token, swiglu_limit 7.0. Experts as transformers stores them: gate_up_proj [E, H, 2I]
            with gate and up interleaved along the last axis, down_proj [E, I, H], both with biases; the
            router a linear layer with a bias.

  gpt_oss_mxfp4
            the same architecture with widths MXFP4 can pack (hidden 64, expert width 32; groups of 32 along
            each expert's input), its experts as OpenAI publishes them: `gate_up_proj_blocks` [E, 2I, H/32, 16]
            uint8 (two e2m1 values a byte, low nibble first), `gate_up_proj_scales` [E, 2I, H/32] uint8
            (e8m0, bias 127), `down_proj_blocks`/`_scales` likewise, biases as they are, and config.json's
            `quantization_config` {"quant_method": "mxfp4"}. The reference is transformers' forward pass on the
            dequantized weights (transformers' own convert_moe_packed_tensors gives back exactly the dense
            weights the script dequantized itself; the dense checkpoint is written for the run, then removed).
  gpt_oss_harmony
            chat_template.jinja: the real gpt-oss chat template (harmony), as llama.cpp ships it (its
            models/templates/openai-gpt-oss-120b.jinja, the one ggml-org's gpt-oss GGUFs carry; written by
            hand from llama-server's print of it, which this script checks against llama-server's own
            example render), and renders.json: conversations (reasoning_effort default/low/high, a
            developer message, tools with a call and its result, an earlier answer) rendered by
            transformers' apply_chat_template with it, the date replaced by {DATE}.

The gpt_oss folder holds config.json, generation_config.json, model.safetensors (float32), tokenizer.json and
tokenizer_config.json copied from make_tiny_models.py's `llama` fixture (vocab 384, ChatML template), and
reference.json in make_tiny_models.py's schema.
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
SEED = 5311
LAYER_TYPES = ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]
HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 44, 6, 2, 12
EXPERTS, TOP_K, EXPERT_DIM = 5, 2, 30
SLIDING_WINDOW = 8
LIMIT = 7.0
ROPE = {"rope_type": "yarn", "rope_theta": 150000.0, "factor": 4.0, "beta_fast": 32.0, "beta_slow": 1.0,
        "original_max_position_embeddings": 64, "truncate": False}
CROSS_TOLERANCE = 1e-4
CHAT = [
    {"role": "system", "content": "You are a tiny model."},
    {"role": "user", "content": "What is the capital of France? Answer in one word."},
]


def write_json(path, obj, indent=2):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def make_config():
    from transformers import GptOssConfig

    config = GptOssConfig(
        vocab_size=384, hidden_size=HIDDEN, intermediate_size=EXPERT_DIM, num_hidden_layers=len(LAYER_TYPES),
        num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, max_position_embeddings=256,
        rms_norm_eps=1e-5, rope_parameters=dict(ROPE), sliding_window=SLIDING_WINDOW, layer_types=LAYER_TYPES,
        num_local_experts=EXPERTS, num_experts_per_tok=TOP_K, swiglu_limit=LIMIT, attention_bias=True,
        tie_word_embeddings=False, bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID,
    )
    config.architectures = ["GptOssForCausalLM"]
    config.dtype = "float32"
    return config


def make_weights(config, seed):
    """make_tiny_models.randomize's scheme (spread-out logits, varied greedy text) with NumPy's generator;
    the experts' gate/up scaled so that some values pass the swiglu limit."""
    rng = np.random.default_rng(seed)
    h, d = HIDDEN, HEAD_DIM
    q, kv = HEADS * d, KV_HEADS * d

    def normal(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def linear(out, inp, scale=1.0):
        return normal(out, inp, scale=scale / inp ** 0.5)

    def norm(n=h, base=1.0):
        return (base + 0.3 * rng.standard_normal(n)).astype(np.float32)

    w = {"model.embed_tokens.weight": normal(config.vocab_size, h, scale=0.2)}
    for layer in range(len(LAYER_TYPES)):
        p = f"model.layers.{layer}"
        w[f"{p}.input_layernorm.weight"] = norm()
        w[f"{p}.self_attn.q_proj.weight"] = linear(q, h, 2.0)
        w[f"{p}.self_attn.q_proj.bias"] = normal(q, scale=0.3)
        w[f"{p}.self_attn.k_proj.weight"] = linear(kv, h, 2.0)
        w[f"{p}.self_attn.k_proj.bias"] = normal(kv, scale=0.3)
        w[f"{p}.self_attn.v_proj.weight"] = linear(kv, h)
        w[f"{p}.self_attn.v_proj.bias"] = normal(kv, scale=0.3)
        w[f"{p}.self_attn.o_proj.weight"] = linear(h, q, 4.0)
        w[f"{p}.self_attn.o_proj.bias"] = normal(h, scale=0.3)
        # Large enough to matter against a handful of keys.
        w[f"{p}.self_attn.sinks"] = normal(HEADS, scale=1.5)
        w[f"{p}.post_attention_layernorm.weight"] = norm()
        w[f"{p}.mlp.router.weight"] = linear(EXPERTS, h, 3.0)
        w[f"{p}.mlp.router.bias"] = normal(EXPERTS, scale=0.5)
        w[f"{p}.mlp.experts.gate_up_proj"] = normal(EXPERTS, h, 2 * EXPERT_DIM, scale=4.0 / h ** 0.5)
        w[f"{p}.mlp.experts.gate_up_proj_bias"] = normal(EXPERTS, 2 * EXPERT_DIM, scale=0.5)
        w[f"{p}.mlp.experts.down_proj"] = normal(EXPERTS, EXPERT_DIM, h, scale=2.0 / EXPERT_DIM ** 0.5)
        w[f"{p}.mlp.experts.down_proj_bias"] = normal(EXPERTS, h, scale=0.3)
    w["model.norm.weight"] = norm(base=3.0)
    w["lm_head.weight"] = linear(config.vocab_size, h, 2.0)
    return w


def write_folder(name, config, weights):
    from safetensors.numpy import save_file

    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    if name.endswith("dense"):
        shutil.rmtree(os.path.dirname(folder), ignore_errors=True)
    os.makedirs(folder)
    config.save_pretrained(folder)
    save_file(weights, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": BOS_ID, "eos_token_id": EOS_ID, "pad_token_id": PAD_ID,
    })
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(TOKENIZER_FROM, f), folder)
    return folder


def gap(logits):
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def transformers_load(folder, weights):
    import torch
    from transformers import AutoModelForCausalLM

    model, info = AutoModelForCausalLM.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager", experts_implementation="eager",
        output_loading_info=True)
    missing = [k for k, v in info.items() if v and k != "error_msgs"]
    assert not missing, f"loading info: {info}"
    state = model.state_dict()
    for name, value in weights.items():
        assert np.array_equal(state[name].numpy(), value), f"{name} did not load as written"
    return model.eval()


def clamp_fraction(model, ids):
    """The fraction of gate/up values past the swiglu limit over the prompt, from hooks on the experts."""
    import torch

    seen = []

    def hook(module, args, kwargs):
        hidden, indices = args[0], args[1]
        for e in range(EXPERTS):
            rows = (indices == e).any(-1)
            if rows.any():
                gate_up = hidden[rows] @ module.gate_up_proj[e] + module.gate_up_proj_bias[e]
                seen.append(((gate_up[..., ::2] > LIMIT).sum() + (gate_up[..., 1::2].abs() > LIMIT).sum()).item()
                            / gate_up.numel())

    handles = [layer.mlp.experts.register_forward_pre_hook(hook, with_kwargs=True) for layer in model.model.layers]
    with torch.no_grad():
        model(torch.tensor([ids]), use_cache=False)
    for h in handles:
        h.remove()
    return float(np.mean(seen))


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
            out = model(torch.tensor([[new[-1]]]), cache=out.cache, use_cache=True)
    return first, new, gaps


def transformers_uncached(model, ids):
    import torch

    seq, new = list(ids), []
    with torch.no_grad():
        first = model(torch.tensor([seq]), use_cache=False).logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            new.append(int(model(torch.tensor([seq]), use_cache=False).logits[0, -1].argmax()))
            seq.append(new[-1])
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


def make_reference(folder, config, weights):
    import torch
    import transformers

    model = transformers_load(folder, weights)
    for attempt in range(20):
        rng = np.random.default_rng(SEED + attempt)
        ids = [int(x) for x in rng.integers(3, config.vocab_size, size=PROMPT_LEN)]
        first, new, gaps = transformers_greedy(model, ids)
        if min(gaps) >= MIN_GAP and len(set(new)) >= MIN_DISTINCT:
            break
        print(f"  prompt attempt {attempt}: min gap {min(gaps):.2e}, {len(set(new))} distinct ids, drawing another")
    else:
        raise RuntimeError("no robust prompt")
    clamped = clamp_fraction(model, ids)
    print(f"  gate/up values past the swiglu limit: {clamped:.1%}")
    assert clamped > 0.01, "the clamp does not bite; scale the experts up"
    uncached_diff = cross_check("transformers without a cache (whole sequence each step)",
                                transformers_uncached(model, ids), first, new)
    compute = (f"transformers {transformers.__version__}, torch {torch.__version__} on the CPU, float32 weights and "
               f"activations, eager attention (with sinks), DynamicCache, plain argmax loop; the same ids re-running "
               f"the whole sequence each step (first-step logits within {uncached_diff:.1e}); {clamped:.1%} of the "
               f"prompt's expert gate/up values lie past swiglu_limit")
    return {
        "name": "gpt_oss",
        "architecture": "GptOssForCausalLM",
        "model_type": "gpt_oss",
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
        "sliding_window": SLIDING_WINDOW,
        "chat": chat(folder),
    }


HARMONY_TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather in a city",
    "parameters": {"type": "object", "required": ["location"], "properties": {
        "location": {"type": "string", "description": "City name"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer"}}}}}]
HARMONY_CASES = [
    {"name": "default effort", "messages": CHAT},
    {"name": "high effort", "messages": CHAT, "reasoning_effort": "high"},
    {"name": "low effort, no system message", "messages": CHAT[1:], "reasoning_effort": "low"},
    {"name": "an earlier answer", "messages": CHAT + [
        {"role": "assistant", "content": "Paris."}, {"role": "user", "content": "And of Italy?"}]},
    {"name": "tools, a call and its result", "tools": HARMONY_TOOLS, "messages": [
        {"role": "system", "content": "Use tools when they help."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temperature\": 21}"}]},
]


def harmony_renders():
    """The real template rendered by transformers, for the Rust test to render alike."""
    import datetime

    from transformers import AutoTokenizer

    folder = os.path.join(OUT, "gpt_oss_harmony")
    with open(os.path.join(folder, "chat_template.jinja")) as f:
        source = f.read()
    tok = AutoTokenizer.from_pretrained(os.path.join(OUT, "gpt_oss"))
    # llama-server's example render of this template (2025-10-10): the transcription is exact.
    example = [{"role": "system", "content": "You are a helpful assistant"}, {"role": "user", "content": "Hello"},
               {"role": "assistant", "content": "Hi there"}, {"role": "user", "content": "How are you?"}]
    want = ("<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: "
            "2024-06\nCurrent date: {DATE}\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. "
            "Channel must be included for every message.<|end|><|start|>developer<|message|># Instructions\n\nYou "
            "are a helpful assistant\n\n<|end|><|start|>user<|message|>Hello<|end|><|start|>assistant<|channel|>"
            "final<|message|>Hi there<|end|><|start|>user<|message|>How are you?<|end|><|start|>assistant")
    today = datetime.date.today().strftime("%Y-%m-%d")

    def render(case):
        extra = {k: v for k, v in case.items() if k == "reasoning_effort"}
        text = tok.apply_chat_template(case["messages"], tools=case.get("tools"), chat_template=source,
                                       add_generation_prompt=True, tokenize=False, **extra)
        assert text.count(today) == 1, text
        return text.replace(today, "{DATE}")

    assert render({"messages": example}) == want, "the template does not render llama-server's example"
    renders = [{**case, "text": render(case)} for case in HARMONY_CASES]
    write_json(os.path.join(folder, "renders.json"), {"producer": "transformers apply_chat_template", "renders": renders})
    print(f"gpt_oss_harmony: {len(renders)} renders")


FP4 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], np.float32)


def mxfp4_quantize(w):
    """[..., out, in] float32 → (blocks [..., out, in/32, 16] uint8, scales [..., out, in/32] uint8): per group
    of 32 inputs, the power-of-two scale that brings its largest value within e2m1's ±6, each value the
    nearest e2m1 code (OCP MX's rounding of the scale, then nearest value)."""
    *lead, rows, cols = w.shape
    groups = w.reshape(*lead, rows, cols // 32, 32)
    amax = np.abs(groups).max(-1, keepdims=True)
    exponent = np.where(amax > 0, np.ceil(np.log2(np.maximum(amax, 1e-30) / 6.0)), 0).astype(np.int32)
    scaled = groups / np.ldexp(np.float32(1), exponent)
    codes = np.abs(scaled[..., None] - FP4[:8]).argmin(-1).astype(np.uint8) | np.where(scaled < 0, 8, 0).astype(np.uint8)
    blocks = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
    return blocks, (exponent[..., 0] + 127).astype(np.uint8)


def mxfp4_dequantize(blocks, scales):
    codes = np.stack([blocks & 0x0F, blocks >> 4], -1).reshape(*blocks.shape[:-1], 32)
    values = np.ldexp(FP4[codes], scales.astype(np.int32)[..., None] - 127)
    return values.reshape(*blocks.shape[:-2], -1).astype(np.float32)


def make_mxfp4():
    """gpt_oss_mxfp4 (packed experts) and gpt_oss_mxfp4/dense (their dequantized weights), with one
    reference from transformers on the dense form."""
    import torch
    from transformers import GptOssConfig
    from transformers.integrations.mxfp4 import convert_moe_packed_tensors

    global HIDDEN, EXPERT_DIM
    HIDDEN, EXPERT_DIM = 64, 32
    config = make_config()
    weights = make_weights(config, SEED + 100)
    packed = dict(weights)
    for layer in range(len(LAYER_TYPES)):
        for proj in ("gate_up_proj", "down_proj"):
            name = f"model.layers.{layer}.mlp.experts.{proj}"
            blocks, scales = mxfp4_quantize(np.ascontiguousarray(weights[name].transpose(0, 2, 1)))
            dense = mxfp4_dequantize(blocks, scales).transpose(0, 2, 1)
            ours = convert_moe_packed_tensors(torch.from_numpy(blocks), torch.from_numpy(scales), dtype=torch.float32)
            assert np.array_equal(ours.numpy(), dense), f"{name}: transformers dequantizes the blocks otherwise"
            weights[name] = np.ascontiguousarray(dense)
            del packed[name]
            packed[f"{name}_blocks"] = blocks.reshape(*blocks.shape[:-1], 16)
            packed[f"{name}_scales"] = scales
    blocks = packed[f"model.layers.0.mlp.experts.gate_up_proj_blocks"]
    assert blocks.shape == (EXPERTS, 2 * EXPERT_DIM, HIDDEN // 32, 16), blocks.shape
    dense_folder = write_folder(os.path.join("gpt_oss_mxfp4", "dense"), config, weights)
    ref = make_reference(dense_folder, config, weights)
    ref["name"] = "gpt_oss_mxfp4"
    ref["compute"] += "; on the MXFP4 experts dequantized (transformers' convert_moe_packed_tensors, exactly)"
    write_json(os.path.join(dense_folder, "reference.json"), ref, indent=1)
    from safetensors.numpy import save_file

    folder = os.path.join(OUT, "gpt_oss_mxfp4")
    for f in os.listdir(dense_folder):
        if f not in ("model.safetensors",):
            shutil.copy(os.path.join(dense_folder, f), folder)
    with open(os.path.join(folder, "config.json")) as f:
        config_json = json.load(f)
    config_json["quantization_config"] = {"quant_method": "mxfp4", "modules_to_not_convert": [
        "model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}
    write_json(os.path.join(folder, "config.json"), config_json)
    save_file(packed, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
    # The dense form served the reference; it is not kept (fixtures stay small).
    shutil.rmtree(dense_folder)
    print(f"gpt_oss_mxfp4: min_gap {ref['min_gap']:.4f}, greedy {ref['greedy_ids'][:12]}...")


def main():
    config = make_config()
    assert config.layer_types == LAYER_TYPES
    weights = make_weights(config, SEED)
    folder = write_folder("gpt_oss", config, weights)
    ref = make_reference(folder, config, weights)
    write_json(os.path.join(folder, "reference.json"), ref, indent=1)
    print(f"gpt_oss: min_gap {ref['min_gap']:.4f} (attempt {ref['prompt_attempt']}), greedy {ref['greedy_ids'][:12]}...")
    harmony_renders()
    make_mxfp4()


if __name__ == "__main__":
    main()
