#!/usr/bin/env python3
"""Tiny random checkpoints of every architecture the engine loads, with float32 reference outputs.

    /opt/confab-ref/bin/python tests/reference/make_tiny_models.py

Needs the reference venv (transformers 5.x, torch on the CPU, tokenizers, mlx + mlx-lm 0.32.2, numpy,
safetensors). Works offline: models are built from configs, tokenizers are trained on the corpus below.
CI never runs this; the outputs are committed. It deletes and rewrites fixtures/tiny/ (about 3.8 MB, the
largest folder under 800 KB) and takes 30 to 50 seconds on the CPU, most of it importing torch and
transformers. The outputs are byte-for-byte reproducible on the same library versions.

What it makes, under tests/reference/fixtures/tiny/ (one Hugging Face folder per name):

  llama       LlamaForCausalLM, 2 layers, head_dim 16, GQA 4/2, rope_theta 5e5 with llama3 rope scaling
              (factor 8, low 1, high 4, original_max_position_embeddings 64: the 16-dim head has one
              unscaled, one smoothed and six scaled frequencies), untied lm_head, vocab 384.
  llama_v4    the same weights; config.json rewritten in transformers-4 keys (rope_theta + rope_scaling).
  qwen2       Qwen2ForCausalLM, 2 layers, random non-zero q/k/v biases (config.json has no
              attention_bias key: Qwen2 always has them), tied embeddings, vocab 448.
  qwen3       Qwen3ForCausalLM, 2 layers, hidden 64, 4 heads, explicit head_dim 32 (!= 64/4), random
              q_norm/k_norm, tied embeddings, vocab 512.
  gemma3      Gemma3ForCausalLM (gemma3_text), 4 layers sliding/full/sliding/full, sliding_window 8 (the
              40-token prompt crosses it), rope 1e4 local / 1e6 global, head_dim 24 (!= 64/4),
              query_pre_attn_scalar 32 (!= head_dim), gelu_pytorch_tanh, no softcapping, random norm
              weights (stored as weight-1), tied embeddings, eos a list [2, 0], vocab 320. config.json
              as transformers 5 writes it (rope_parameters per layer type, layer_types, and also
              sliding_window_pattern + _sliding_window_pattern).
  gemma3_v4   the same weights; config.json in transformers-4 keys (rope_theta, rope_local_base_freq,
              rope_scaling null, sliding_window_pattern; no layer_types, no rope_parameters).
  llama_mlx4  mlx_lm.convert of llama_v4: affine 4-bit, group 32, every Linear and the embedding
              (and lm_head) quantized, scales/biases float32. Reference computed by mlx-lm.
  qwen3_mlx4  the same for qwen3 (converted from the transformers-5 folder: mlx-lm's qwen3 reads
              rope_parameters, so its config.json keeps the transformers-5 keys). Tied: the quantized
              embedding is also the output layer.

Every folder holds:
  config.json              the model config (dialect as above; "dtype"/"torch_dtype" float32)
  generation_config.json   bos/eos/pad ids and sampling defaults shaped like the real model family's
  model.safetensors        float32 weights (the *_mlx4 folders: uint32 packed weights + float32
                           scales/biases, in mlx-lm's layout and names)
  tokenizer.json           byte-level BPE trained with `tokenizers` on CORPUS, vocab = model vocab;
                           ids 0..2 are <|endoftext|> <|im_start|> <|im_end|> (special)
  tokenizer_config.json    chat template (ChatML-like), eos_token <|im_end|>, pad <|endoftext|>, no bos
  reference.json           reference outputs, schema below

reference.json:
  {
    "name": str,                 folder name
    "architecture": str,         e.g. "LlamaForCausalLM"
    "model_type": str,           config model_type
    "config_dialect": str,       "transformers5" (rope_parameters) or "transformers4" (rope_theta, ...)
    "producer": str,             "transformers 5.x.y" or "mlx-lm 0.32.2"
    "attn_implementation": str,  "eager" (transformers) or "mlx_lm" (mlx-lm's own attention)
    "dtype": "float32",          activation dtype of the reference run
    "compute": str,              how the reference was computed, in words
    "seed": int,                 weight seed; the prompt seed is seed + prompt_attempt
    "prompt_attempt": int,       0 unless the first prompt gave a near tie and another was drawn
    "prompt_ids": [int] * 40,    random ids in [3, vocab) (no special tokens, so no eos)
    "first_logits": [float] * vocab,  logits of the last prompt position (float32 values)
    "steps": 32,
    "greedy_ids": [int] * 32,    argmax loop with the KV cache, no logits processors, eos ignored
    "gaps": [float] * 32,        top-1 minus top-2 logit at each greedy step
    "min_gap": float,            min(gaps); >= 1e-2 by construction (a gap under ~1e-3 would be a tie
                                 that float32 summation order alone could flip), and the 32 ids hold at
                                 least 8 distinct values
    "min_gap_step": int,
    "eos_token_id": int,         <|im_end|>
    "chat": {"messages": [...], "text": str, "ids": [int]}
                                 the chat template rendered with add_generation_prompt by transformers'
                                 AutoTokenizer on this folder, and its ids
  }
For the *_v4 folders the reference is computed from the v4 folder itself and checked to be identical to
the transformers-5 folder's. The script also loads every float folder with mlx-lm in float32 and
prints how far its logits/greedy ids are from transformers' (a cross-check; not stored). Expected: about
2e-5 and 32/32 everywhere except `llama` (transformers-5 config): mlx-lm's llama reads only rope_theta and
rope_scaling, so it silently runs that folder with rope_theta 10000 and no llama3 scaling. (mlx-lm's
gemma3_text ignores rope_parameters too; it agrees on `gemma3` only because its defaults are 1e6/1e4.)
"""
import json
import os
import shutil
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
PROMPT_LEN = 40
STEPS = 32
MIN_GAP = 1e-2  # 10x the 1e-3 a float32 engine needs
MIN_DISTINCT = 8  # greedy ids must not be one token repeated
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
PAD_ID, BOS_ID, EOS_ID = 0, 0, 2
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CHAT = [
    {"role": "system", "content": "You are a tiny model."},
    {"role": "user", "content": "What is the capital of France? Answer in one word."},
]
Q_BITS, Q_GROUP = 4, 32

CORPUS = """\
The quick brown fox jumps over the lazy dog. A small model reads a short text and learns nothing at all,
because its weights are random numbers drawn from a fixed seed. Still, every engine that runs it must
agree with the reference to the last bit of float32 rounding, or at least to the same greedy tokens.
Paris is the capital of France. Berlin is the capital of Germany. Madrid is the capital of Spain.
Rome is the capital of Italy. Lisbon is the capital of Portugal. Vienna is the capital of Austria.
What is the capital of France? Answer in one word. You are a tiny model. You are a helpful assistant.
The user asks a question and the assistant answers it. The system message sets the tone of the chat.
Rotary position embeddings rotate pairs of query and key channels by an angle that grows with the
position; the base frequency sets how fast. Sliding window attention looks only at the last few tokens,
while global attention looks at every token before the current one. Grouped query attention shares one
key and value head between several query heads. Root mean square normalization divides by the norm and
multiplies by a learned weight. Quantization stores four bits per weight with a scale and a bias per
group of thirty-two weights. The key value cache keeps the keys and values of earlier positions so that
each new token costs one step instead of a full pass over the prompt.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 42 64 128 256 512 1024 2048 4096 3.14159 2.71828 1e-6 100%.
Code: fn main() { let x = vec![1, 2, 3]; println!("{:?}", x); } def f(x): return x * 2 + 1
for i in range(10): print(i) if a == b and c != d: pass # comment // another comment /* block */
Punctuation and symbols: ( ) [ ] { } < > = + - * / \\ | & ^ % $ # @ ! ? ~ ` ' " : ; , .
Accents and other scripts: café naïve résumé façade über straße São Paulo Kraków Ελληνικά русский
日本語 中文 한국어 العربية हिन्दी emoji: 🙂 🚀 ✨ and a few more words to round off the corpus so
that the trainer finds enough pairs to merge: morning evening weather window winter summer spring autumn
mountain river ocean forest island village city country language letter number picture question answer
"""


# ----------------------------------------------------------------------------------------------------
# Tokenizer

def make_tokenizer(folder: str, vocab_size: int) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([CORPUS], trainer=trainer)
    assert tok.get_vocab_size() == vocab_size, (tok.get_vocab_size(), vocab_size)
    for i, s in enumerate(SPECIALS):
        assert tok.token_to_id(s) == i
    tok.save(os.path.join(folder, "tokenizer.json"))
    added = {
        str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                 "single_word": False, "special": True}
        for i, s in enumerate(SPECIALS)
    }
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "model_max_length": 256,
        "pad_token": "<|endoftext|>",
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": None,
    }
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ----------------------------------------------------------------------------------------------------
# Models

COMMON = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
              max_position_embeddings=256, bos_token_id=BOS_ID, eos_token_id=EOS_ID, pad_token_id=PAD_ID)


def specs():
    from transformers import (Gemma3ForCausalLM, Gemma3TextConfig, LlamaConfig, LlamaForCausalLM,
                              Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM)
    return [
        dict(
            name="llama", seed=1001, cls=LlamaForCausalLM, gemma=False,
            config=LlamaConfig(
                **COMMON, vocab_size=384, num_hidden_layers=2, rms_norm_eps=1e-5, hidden_act="silu",
                rope_theta=500000.0, tie_word_embeddings=False,
                rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                              "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
            ),
            generation=dict(do_sample=True, temperature=0.6, top_p=0.9),
            v4=True, mlx4=True,
        ),
        dict(
            name="qwen2", seed=2002, cls=Qwen2ForCausalLM, gemma=False,
            config=Qwen2Config(
                **COMMON, vocab_size=448, num_hidden_layers=2, rms_norm_eps=1e-6, hidden_act="silu",
                rope_theta=1000000.0, tie_word_embeddings=True, use_sliding_window=False,
            ),
            generation=dict(do_sample=True, temperature=0.7, top_p=0.8, top_k=20, repetition_penalty=1.05),
            v4=False, mlx4=False,
        ),
        dict(
            name="qwen3", seed=3003, cls=Qwen3ForCausalLM, gemma=False,
            config=Qwen3Config(
                **COMMON, vocab_size=512, num_hidden_layers=2, head_dim=32, rms_norm_eps=1e-6,
                hidden_act="silu", rope_theta=1000000.0, tie_word_embeddings=True,
                use_sliding_window=False,
            ),
            generation=dict(do_sample=True, temperature=0.6, top_p=0.95, top_k=20),
            v4=False, mlx4=True,
        ),
        dict(
            name="gemma3", seed=4004, cls=Gemma3ForCausalLM, gemma=True,
            config=Gemma3TextConfig(
                **{**COMMON, "eos_token_id": [EOS_ID, PAD_ID]},
                vocab_size=320, num_hidden_layers=4, head_dim=24, rms_norm_eps=1e-6,
                hidden_activation="gelu_pytorch_tanh", sliding_window=8, sliding_window_pattern=2,
                rope_theta=1000000.0, rope_local_base_freq=10000.0, query_pre_attn_scalar=32,
                final_logit_softcapping=None, attn_logit_softcapping=None, tie_word_embeddings=True,
            ),
            generation=dict(do_sample=True, top_k=64, top_p=0.95),
            v4=True, mlx4=False,
        ),
    ]


def randomize(model, seed: int, gemma: bool, hidden: int) -> None:
    """Weights that give spread-out logits and varied greedy text.

    Hugging Face's init (std 0.02) gives near-uniform logits; plain 1/sqrt(fan_in) weights make tied models
    repeat one token (the input embedding dominates the residual stream, and its logit is |e|^2). So: small
    embeddings, residual-branch outputs (o_proj, down_proj) 4x, final norm around 4 to widen the logits,
    v bias small (a v bias adds the same vector at every position, which pulls toward one token).
    """
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            # Gemma's RMSNorm multiplies by (1 + weight): it stores weight-1.
            one = 0.0 if gemma else 1.0
            if name == "model.norm.weight":
                p.copy_(one + 3.0 + 0.3 * r)
            elif "norm" in name:
                p.copy_(one + 0.3 * r)
            elif name.endswith(".bias"):
                p.copy_((0.1 if "v_proj" in name else 0.5) * r)
            elif "embed_tokens" in name:
                # Gemma multiplies embeddings by sqrt(hidden) on input.
                p.copy_(r * (0.4 / hidden ** 0.5 if gemma else 0.2))
            elif "lm_head" in name:
                p.copy_(r * 2.0 / p.shape[1] ** 0.5)
            elif "o_proj" in name or "down_proj" in name:
                p.copy_(r * 4.0 / p.shape[1] ** 0.5)
            else:
                p.copy_(r / p.shape[1] ** 0.5)


def v4_config(cfg: dict) -> dict:
    """A transformers-5 config.json rewritten in transformers-4 keys."""
    cfg = dict(cfg)
    rp = cfg.pop("rope_parameters", None)
    cfg.pop("layer_types", None)
    if "dtype" in cfg:
        cfg["torch_dtype"] = cfg.pop("dtype")
    if cfg["model_type"] == "gemma3_text":
        full, local = rp["full_attention"], rp["sliding_attention"]
        assert local["rope_type"] == "default"
        cfg["rope_theta"] = full["rope_theta"]
        cfg["rope_local_base_freq"] = local["rope_theta"]
        scaling = {k: v for k, v in full.items() if k != "rope_theta"}
        cfg["rope_scaling"] = None if scaling.get("rope_type") == "default" else scaling
        pattern = cfg.pop("_sliding_window_pattern", None)
        cfg["sliding_window_pattern"] = cfg.get("sliding_window_pattern") or pattern
        cfg.pop("use_bidirectional_attention", None)
    else:
        cfg["rope_theta"] = rp["rope_theta"]
        scaling = {k: v for k, v in rp.items() if k != "rope_theta"}
        cfg["rope_scaling"] = None if scaling.get("rope_type") == "default" else scaling
    return dict(sorted(cfg.items()))


def read_json(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def write_json(path: str, obj, indent=2) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def dialect(cfg: dict) -> str:
    return "transformers5" if "rope_parameters" in cfg else "transformers4"


def prompt_ids(seed: int, vocab: int) -> list:
    rng = np.random.default_rng(seed)
    return [int(x) for x in rng.integers(len(SPECIALS), vocab, size=PROMPT_LEN)]


def gap(logits: np.ndarray) -> float:
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def hf_greedy(model, ids: list):
    """Plain greedy loop with the KV cache: no logits processors, eos ignored."""
    new, gaps = [], []
    with torch.no_grad():
        out = model(torch.tensor([ids]), use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(torch.tensor([[new[-1]]]), past_key_values=out.past_key_values, use_cache=True)
    return first, new, gaps


def mlx_greedy(model, ids: list):
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    new, gaps = [], []
    logits = model(mx.array([ids]), cache=cache)[0, -1]
    first = np.array(logits.astype(mx.float32))
    for _ in range(STEPS):
        l = np.array(logits.astype(mx.float32))
        gaps.append(gap(l))
        new.append(int(l.argmax()))
        logits = model(mx.array([[new[-1]]]), cache=cache)[0, -1]
    return first, new, gaps


def chat_example(folder: str) -> dict:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    text = tok.apply_chat_template(CHAT, add_generation_prompt=True, tokenize=False)
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text
    assert tok.eos_token == "<|im_end|>" and tok.eos_token_id == EOS_ID
    return {"messages": CHAT, "text": text, "ids": ids}


def reference(name, folder, seed, attempt, ids, first, new, gaps, producer, attn, compute):
    cfg = read_json(os.path.join(folder, "config.json"))
    return {
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


def hf_load(folder: str):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    return model.eval()


def robust_prompt(run, seed: int, vocab: int):
    """The first prompt (seed + attempt) whose greedy run has no near tie and is not one repeated id."""
    for attempt in range(20):
        ids = prompt_ids(seed + attempt, vocab)
        first, new, gaps = run(ids)
        if min(gaps) >= MIN_GAP and len(set(new)) >= MIN_DISTINCT:
            return attempt, ids, first, new, gaps
        print(f"  prompt attempt {attempt}: min gap {min(gaps):.2e}, {len(set(new))} distinct ids, "
              "drawing another")
    raise RuntimeError("no robust prompt")


def build_hf(spec) -> dict:
    from transformers import GenerationConfig, __version__ as tf_version

    name, seed, cfg = spec["name"], spec["seed"], spec["config"]
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    torch.manual_seed(seed)
    model = spec["cls"](cfg).to(torch.float32).eval()
    randomize(model, seed, spec["gemma"], cfg.hidden_size)
    eos = cfg.eos_token_id
    model.generation_config = GenerationConfig(bos_token_id=BOS_ID, eos_token_id=eos, pad_token_id=PAD_ID,
                                               **spec["generation"])
    model.save_pretrained(folder, safe_serialization=True)
    make_tokenizer(folder, cfg.vocab_size)

    model = hf_load(folder)
    attempt, ids, first, new, gaps = robust_prompt(lambda i: hf_greedy(model, i), seed, cfg.vocab_size)
    compute = (f"transformers {tf_version}, torch {torch.__version__} on the CPU, float32 weights and "
               "activations, eager attention, DynamicCache, plain argmax loop")
    ref = reference(name, folder, seed, attempt, ids, first, new, gaps, f"transformers {tf_version}",
                    "eager", compute)
    write_json(os.path.join(folder, "reference.json"), ref, indent=1)
    print(f"{name}: min_gap {ref['min_gap']:.4f} (attempt {attempt}), greedy {new[:12]}...")
    return ref


def build_v4(name: str, ref: dict) -> dict:
    """Copy of folder `name` with a transformers-4 config.json; reference recomputed and compared."""
    src, dst = os.path.join(OUT, name), os.path.join(OUT, f"{name}_v4")
    cfg = read_json(os.path.join(src, "config.json"))
    assert "rope_parameters" in cfg, f"{name}: config.json has no rope_parameters, no v4 rewrite needed"
    shutil.copytree(src, dst)
    write_json(os.path.join(dst, "config.json"), v4_config(cfg))
    model = hf_load(dst)
    first, new, gaps = hf_greedy(model, ref["prompt_ids"])
    v4 = dict(ref, name=f"{name}_v4", config_dialect="transformers4",
              first_logits=[float(x) for x in first.astype(np.float32)], greedy_ids=new, gaps=gaps,
              min_gap=min(gaps), min_gap_step=int(np.argmin(gaps)), chat=chat_example(dst))
    assert v4["config_dialect"] == dialect(read_json(os.path.join(dst, "config.json")))
    assert np.array_equal(np.array(v4["first_logits"]), np.array(ref["first_logits"])), f"{name}_v4 logits differ"
    assert new == ref["greedy_ids"], f"{name}_v4 greedy ids differ"
    write_json(os.path.join(dst, "reference.json"), v4, indent=1)
    print(f"{name}_v4: identical to {name}")
    return v4


def mlx_crosscheck(name: str, ref: dict) -> None:
    """mlx-lm float32 on the float folder against transformers' reference (printed, not stored)."""
    import mlx.core as mx
    from mlx_lm.utils import load

    try:
        model, _ = load(os.path.join(OUT, name))
    except Exception as e:  # noqa: BLE001 - a report, not a failure
        print(f"  mlx-lm cross-check {name}: cannot load ({type(e).__name__}: {e})")
        return
    model.set_dtype(mx.float32)
    first, new, _ = mlx_greedy(model, ref["prompt_ids"])
    diff = float(np.abs(first - np.array(ref["first_logits"], dtype=np.float32)).max())
    same = sum(a == b for a, b in zip(new, ref["greedy_ids"]))
    print(f"  mlx-lm float32 cross-check {name}: max |dlogit| {diff:.2e}, greedy ids agree {same}/{STEPS}")


def build_mlx4(name: str, src: str, seed: int) -> dict:
    import mlx.core as mx
    import mlx_lm
    from mlx_lm.convert import convert
    from mlx_lm.utils import load

    src_folder, dst = os.path.join(OUT, src), os.path.join(OUT, f"{name}_mlx4")
    convert(hf_path=src_folder, mlx_path=dst, quantize=True, q_bits=Q_BITS, q_group_size=Q_GROUP,
            dtype="float32")
    # Keep the source's tokenizer files as they are (mlx-lm re-saves them through transformers 5,
    # which moves the chat template into chat_template.jinja) and drop its generated README.
    for f in os.listdir(dst):
        if f not in ("config.json", "model.safetensors", "generation_config.json"):
            os.remove(os.path.join(dst, f))
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(src_folder, f), dst)

    model, _ = load(dst)
    dtypes = {str(v.dtype) for _, v in mlx_tree(model.parameters()) if v.dtype != mx.uint32}
    assert dtypes == {"mlx.core.float32"}, dtypes
    vocab = read_json(os.path.join(dst, "config.json"))["vocab_size"]
    attempt, ids, first, new, gaps = robust_prompt(lambda i: mlx_greedy(model, i), seed, vocab)
    compute = (f"mlx-lm {mlx_lm.__version__} (mlx {mx.__version__}) on the CPU: mlx_lm.convert of {src} "
               f"with quantize=True, q_bits={Q_BITS}, q_group_size={Q_GROUP}, dtype float32 (affine mode: "
               "every Linear, embed_tokens and lm_head packed in uint32 with float32 scales and biases); "
               "the other parameters (norms) float32, so activations are float32 throughout; "
               "make_prompt_cache + plain argmax loop")
    ref = reference(f"{name}_mlx4", dst, seed, attempt, ids, first, new, gaps,
                    f"mlx-lm {mlx_lm.__version__}", "mlx_lm", compute)
    write_json(os.path.join(dst, "reference.json"), ref, indent=1)
    print(f"{name}_mlx4: min_gap {ref['min_gap']:.4f} (attempt {attempt}), greedy {new[:12]}...")
    return ref


def mlx_tree(params):
    from mlx.utils import tree_flatten
    return tree_flatten(params)


def main() -> None:
    t0 = time.time()
    torch.use_deterministic_algorithms(True)
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    refs = {}
    for spec in specs():
        refs[spec["name"]] = build_hf(spec)
        if spec["v4"]:
            refs[f"{spec['name']}_v4"] = build_v4(spec["name"], refs[spec["name"]])
    for name in list(refs):
        mlx_crosscheck(name, refs[name])
    for spec in specs():
        if spec["mlx4"]:
            src = f"{spec['name']}_v4" if spec["v4"] else spec["name"]
            refs[f"{spec['name']}_mlx4"] = build_mlx4(spec["name"], src, spec["seed"])
    print()
    for name, ref in refs.items():
        size = sum(os.path.getsize(os.path.join(OUT, name, f)) for f in os.listdir(os.path.join(OUT, name)))
        print(f"{name:12s} {ref['config_dialect']:14s} min_gap {ref['min_gap']:.4f}  {size / 1024:.0f} KiB")
    print(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
