#!/usr/bin/env python3
"""A random-weight benchmark checkpoint with the real Qwen3.5-0.8B text dimensions, bfloat16, in the Hugging
Face layout of the released model, readable by Confab and by mlx-lm 0.32.2.

    python3 bench/make_qwen3_5.py [OUT_DIR] [--time] [--layers=N]

Needs mlx 0.32.2 and tokenizers (the bench venv .deps/bench/venv or the reference venv /opt/confab-ref have
both); `--time` also needs mlx-lm 0.32.2 and loads the folder with it, runs a 128-token prefill and 16
decode steps, and prints tokens/s. OUT_DIR defaults to .deps/bench/qwen3_5-0.8b-bf16. Cached: an existing
folder (config.json present) is kept. About 1.5 GB; takes under a minute. Not run by CI, not wired into
bench/run.py. `--layers=N` keeps the first N layers (4: one linear, linear, linear, full group at
the real widths), for measurements that need the layers' shapes more than their number
(bench/prefill_chunks.py).

Layout (what Qwen/Qwen3.5-0.8B ships, text part only):
  config.json   model_type qwen3_5, Qwen3_5ForConditionalGeneration, text_config (qwen3_5_text): vocab
                248320, hidden 1024, 24 layers (linear, linear, linear, full) x 6 (layer_types and
                full_attention_interval 4), intermediate 3584, 8 heads, 2 kv heads, head_dim 256, attention
                output gate, linear key/value heads 16/16 of 128, conv kernel 4, rope_parameters {default,
                rope_theta 1e7, partial_rotary_factor 0.25, mrope_section [11, 11, 10], mrope_interleaved},
                rms_norm_eps 1e-6, tied embeddings, eos 248044 (real ids; the tokenizer here is small).
                No vision_config and no vision weights (a benchmark of the text model; the released
                checkpoint also carries model.visual.* and mtp.*, which both engines skip). A top-level
                vocab_size (not in the released config) lets bench/mlx_lm_bench.py read it.
  model.safetensors  bfloat16, names model.language_model.* (zero-centred RMSNorm weights, conv1d
                [C, 1, K], A_log float32 as released); random: N(0, 1/fan_in) matrices, embeddings
                N(0, 0.02^2), norms 0 (i.e. scale 1), gated norm 1, A_log log U(1, 16), dt_bias 1.
  tokenizer.json / tokenizer_config.json  a 512-token byte-level BPE trained here with ChatML specials
                (<|endoftext|> <|im_start|> <|im_end|> = ids 0..2); config vocab_size stays 248320: the
                benchmark feeds token ids, and ids >= 512 have embeddings but no text.
"""
import json
import os
import sys
import time

import mlx.core as mx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEFAULT_OUT = os.path.join(ROOT, ".deps", "bench", "qwen3_5-0.8b-bf16")

TEXT = {
    "model_type": "qwen3_5_text", "vocab_size": 248320, "hidden_size": 1024, "intermediate_size": 3584,
    "num_hidden_layers": 24, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
    "attention_bias": False, "attention_dropout": 0.0, "attn_output_gate": True, "hidden_act": "silu",
    "full_attention_interval": 4,
    "layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"] * 6,
    "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
    "linear_num_key_heads": 16, "linear_num_value_heads": 16, "max_position_embeddings": 262144,
    "rms_norm_eps": 1e-6, "tie_word_embeddings": True, "use_cache": True, "initializer_range": 0.02,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                        "mrope_section": [11, 11, 10], "mrope_interleaved": True},
    "bos_token_id": None, "eos_token_id": 248044, "pad_token_id": None, "dtype": "bfloat16",
}
CONFIG = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "text_config": TEXT,
    "tie_word_embeddings": True, "image_token_id": 248056, "video_token_id": 248057,
    "vision_start_token_id": 248053, "vision_end_token_id": 248054, "vocab_size": TEXT["vocab_size"],
    "dtype": "bfloat16", "transformers_version": "5.24.0",
}
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CORPUS = ("The quick brown fox jumps over the lazy dog. A benchmark feeds token ids and times the engine. "
          "Paris is the capital of France. fn main() { println!(\"hello\"); } def f(x): return x * 2\n") * 4


def weights() -> dict:
    t, h = TEXT, TEXT["hidden_size"]
    key_dim = t["linear_num_key_heads"] * t["linear_key_head_dim"]
    value_dim = t["linear_num_value_heads"] * t["linear_value_head_dim"]
    heads, kv, hd, inter = t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"], t["intermediate_size"]
    bf = mx.bfloat16
    mx.random.seed(3508)

    def mat(out, inp):
        return (mx.random.normal((out, inp)) * inp ** -0.5).astype(bf)

    w = {"model.language_model.embed_tokens.weight": (mx.random.normal((t["vocab_size"], h)) * 0.02).astype(bf),
         "model.language_model.norm.weight": mx.zeros((h,), bf)}
    for i, kind in enumerate(t["layer_types"]):
        p = f"model.language_model.layers.{i}."
        w[p + "input_layernorm.weight"] = mx.zeros((h,), bf)
        w[p + "post_attention_layernorm.weight"] = mx.zeros((h,), bf)
        w[p + "mlp.gate_proj.weight"] = mat(inter, h)
        w[p + "mlp.up_proj.weight"] = mat(inter, h)
        w[p + "mlp.down_proj.weight"] = mat(h, inter)
        if kind == "linear_attention":
            a = p + "linear_attn."
            conv_dim = 2 * key_dim + value_dim
            w[a + "in_proj_qkv.weight"] = mat(conv_dim, h)
            w[a + "in_proj_z.weight"] = mat(value_dim, h)
            w[a + "in_proj_b.weight"] = mat(t["linear_num_value_heads"], h)
            w[a + "in_proj_a.weight"] = mat(t["linear_num_value_heads"], h)
            w[a + "conv1d.weight"] = (mx.random.normal((conv_dim, 1, t["linear_conv_kernel_dim"])) * 0.5).astype(bf)
            w[a + "dt_bias"] = mx.ones((t["linear_num_value_heads"],), bf)
            w[a + "A_log"] = mx.log(mx.random.uniform(1.0, 16.0, (t["linear_num_value_heads"],)))  # float32
            w[a + "norm.weight"] = mx.ones((t["linear_value_head_dim"],), bf)
            w[a + "out_proj.weight"] = mat(h, value_dim)
        else:
            s = p + "self_attn."
            w[s + "q_proj.weight"] = mat(heads * hd * 2, h)
            w[s + "k_proj.weight"] = mat(kv * hd, h)
            w[s + "v_proj.weight"] = mat(kv * hd, h)
            w[s + "o_proj.weight"] = mat(h, heads * hd)
            w[s + "q_norm.weight"] = mx.zeros((hd,), bf)
            w[s + "k_norm.weight"] = mx.zeros((hd,), bf)
    return w


def write_tokenizer(folder: str) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=512, min_frequency=1, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([CORPUS], trainer=trainer)
    tok.save(os.path.join(folder, "tokenizer.json"))
    added = {str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
                      "special": True} for i, s in enumerate(SPECIALS)}
    config = {"add_bos_token": False, "add_prefix_space": False, "added_tokens_decoder": added, "bos_token": None,
              "chat_template": CHAT_TEMPLATE, "clean_up_tokenization_spaces": False, "eos_token": "<|im_end|>",
              "model_max_length": 262144, "pad_token": "<|endoftext|>", "tokenizer_class": "PreTrainedTokenizerFast",
              "unk_token": None}
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2)


def make(folder: str) -> None:
    if os.path.exists(os.path.join(folder, "config.json")):
        print(f"{folder}: exists, kept")
        return
    os.makedirs(folder, exist_ok=True)
    w = weights()
    mx.eval(w)
    n = sum(v.size for v in w.values())
    mx.save_safetensors(os.path.join(folder, "model.safetensors"), w, metadata={"format": "pt"})
    write_tokenizer(folder)
    with open(os.path.join(folder, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": None, "eos_token_id": 248044, "pad_token_id": 248044,
                   "do_sample": True, "temperature": 0.6, "top_k": 20, "top_p": 0.95}, f, indent=2)
    with open(os.path.join(folder, "config.json"), "w") as f:  # last: its presence marks a finished folder
        json.dump(CONFIG, f, indent=2)
    print(f"{folder}: {n / 1e6:.0f}M parameters, bfloat16")


def time_mlx_lm(folder: str, prompt_tokens: int = 128, steps: int = 16) -> None:
    import mlx_lm
    from mlx_lm.models.cache import make_prompt_cache
    from mlx_lm.utils import load

    model, _ = load(folder)
    prompt = mx.array([[(i * 7919 + 13) % TEXT["vocab_size"] for i in range(prompt_tokens)]])
    for label in ("warm-up", "timed"):
        cache = make_prompt_cache(model)
        tic = time.perf_counter()
        logits = model(prompt, cache=cache)[:, -1]
        token = mx.argmax(logits, axis=-1)
        mx.eval(token)
        prefill = time.perf_counter() - tic
        tic = time.perf_counter()
        for _ in range(steps):
            token = mx.argmax(model(token[:, None], cache=cache)[:, -1], axis=-1)
            mx.eval(token)
        decode = time.perf_counter() - tic
        ok = bool(mx.all(mx.isfinite(logits)).item())
    print(f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}, {mx.default_device()}): {label} run, prefill "
          f"{prompt_tokens} tokens {prompt_tokens / prefill:.1f} tok/s ({prefill:.2f} s), decode {steps} steps "
          f"{steps / decode:.2f} tok/s, logits finite: {ok}")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    folder = os.path.abspath(args[0]) if args else DEFAULT_OUT
    layers = [int(a.split("=", 1)[1]) for a in sys.argv[1:] if a.startswith("--layers=")]
    if layers:
        TEXT["num_hidden_layers"] = layers[0]
        TEXT["layer_types"] = TEXT["layer_types"][: layers[0]]
    make(folder)
    if "--time" in sys.argv:
        time_mlx_lm(folder)


if __name__ == "__main__":
    main()
