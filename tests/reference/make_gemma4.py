#!/usr/bin/env python3
"""Tiny random Gemma 4 checkpoints (multimodal and text-only MoE) with float32 reference outputs.

    /opt/confab-ref/bin/python tests/reference/make_gemma4.py

Needs the reference venv (transformers 5.24, torch on the CPU, tokenizers, numpy) plus Pillow and torchvision
for the image/video processors (Gemma4ImageProcessor is the torchvision backend). The venv has neither, and
no torchvision wheel exists yet for its torch 2.15; torchvision 0.29.2 (for torch 2.14) installed beside it
works for the resize the processor needs (its C ops are not used):
    pip install --target .deps/g4pydeps --no-deps pillow torchvision==0.29.2
    PYTHONPATH=.deps/g4pydeps /opt/confab-ref/bin/python tests/reference/make_gemma4.py
Works offline:
models are built from configs, the tokenizer is trained on make_tiny_models.CORPUS. CI never runs this;
the outputs are committed. It deletes and rewrites fixtures/tiny/gemma4 and fixtures/tiny/gemma4_moe.

What it makes (Hugging Face folders under tests/reference/fixtures/tiny/):

  gemma4      Gemma4ForConditionalGeneration (model_type gemma4), text model `gemma4_text`:
              - vocab 400 (the tokenizer's own size), hidden 64, 4 heads, 2 kv heads, head_dim 16.
              - 5 layers: sliding, full, sliding, sliding, full. sliding_window 8 (the 40-token prompt and
                the 16-token prefill chunks of the test cross it). The last layer must be full.
              - full layers differ the way the large checkpoints do: global_head_dim 32 (!= head_dim) and
                attention_k_eq_v with num_global_key_value_heads 1 (keys double as values: v = k_proj(x),
                v_norm'ed but not rotated). Both end up in config.json as `per_layer_config`
                {"1": {"head_dim": 32, "num_key_value_heads": 1}, "4": ...} (transformers 5.24 writes that
                rather than global_head_dim/num_global_key_value_heads; the engine reads both).
              - RoPE per layer type: sliding `default` theta 1e4 over the whole head; full `proportional`
                theta 1e6 with partial_rotary_factor 0.25: of the 32-dim head only 4 frequency pairs rotate
                (exponents i/head_dim, i = 0,2,4,6), the other 12 pairs have frequency 0 (rotate_half pairs
                d with d + 16, so the rotated channels are 0..3 and 16..19, not the first 8).
              - per-layer inputs (PLE): hidden_size_per_layer_input 16, vocab_size_per_layer_input 400.
              - KV sharing: num_kv_shared_layers 2, so layers 3 (sliding) and 4 (full) have no k/v weights
                and reuse the keys/values of layers 2 and 1 (the last earlier layer of their type);
                use_double_wide_mlp makes those two layers' MLPs 2 x 128 wide.
              - final_logit_softcapping 30 (as the released models); attention scaling is 1.0 (q/k norms
                instead of 1/sqrt(d)); v_norm has no weight; every decoder layer has a random
                `layer_scalar` (a buffer, stored in the checkpoint) multiplying its output.
              - use_bidirectional_attention "vision": with mm_token_type_ids, sliding layers let the tokens
                of one image attend to each other both ways; full layers stay causal.
              - norms multiply by `weight` (not 1 + weight as Gemma 3): random 1 + 0.3 r.
              Vision tower: hidden 32, 2 layers, 2 heads, head_dim 16, patch_size 4 (not 16: keeps
              pixel_values tiny), pooling_kernel_size 2, position_embedding_size 64 (random table).
              Image processor: patch 4, pooling 2, max_soft_tokens 70 (the smallest supported): the
              64x48 gradient is resized to 72x56 (bicubic), 18x14 = 252 patches, 63 soft tokens.
              Audio tower: hidden 32, 2 conformer layers, 2 heads, subsampling_conv_channels [128, 16]
              (the first must equal the 128 mel bins or the forward fails), output_proj_dims 32.
              Audio feature extractor: defaults (16 kHz, 128 mels, 20 ms frames, 10 ms hop): the one-second
              chirp gives 99 mel frames and 25 audio soft tokens.
  gemma4_moe  Gemma4ForCausalLM (model_type gemma4_text, the text-only layout: names model.layers.*),
              4 layers sliding/full/sliding/full, dense MLP 64 wide, enable_moe_block with 4 experts, top-2,
              moe_intermediate 32 (each block runs the dense MLP and the routed experts side by side and sums their normed
              outputs), no per-layer inputs (hidden_size_per_layer_input 0), attention_k_eq_v on full
              layers, no KV sharing, softcapping 30. Random router scale and per_expert_scale.

Both folders hold config.json, generation_config.json, model.safetensors (float32), tokenizer.json,
tokenizer_config.json, chat_template.jinja, reference.json; gemma4 also processor_config.json (the
processor's own settings plus image processor, feature extractor and video processor), media/ (the
input image and clip) and media_reference/ (npy arrays, listed in media_reference.json).

Tokenizer: byte-level BPE trained on make_tiny_models.CORPUS to 400 ids; special ids 0..14 are Gemma 4's
names: <pad> <eos> <bos> <|turn> <turn|> <|image> <image|> <|image|> <|audio> <audio|> <|audio|> <|video|>
<|think|> <|channel> <channel|>. The real model's ids differ (e.g. image 258880); the config's
image_token_id etc. point at these.

Chat template: Gemma 4's turn format, <bos><|turn>user\\n...<turn|>\\n<|turn>model\\n ('assistant' is
rendered as 'model'; a system message gets its own <|turn>system turn); an image item in the content
renders as <|image|>, an audio item as <|audio|>, which the processor expands to <|image> + n x <|image|>
+ <image|> (and <|audio> + n x <|audio|> + <audio|>). The released template also handles tools and
thinking (<|think|>, <|channel>thought ...); that part is left out here.

reference.json (both folders): prompt_ids (40 random non-special ids), first_logits (vocab floats),
steps 16, greedy_ids (argmax with the KV cache, eos ignored), gaps/min_gap (top-1 minus top-2, >= 1e-2 by
drawing another prompt when needed), chat (messages, rendered text, ids), and for gemma4 `media` (below).

media_reference/ (gemma4): the processor's outputs for the chat [user: image, audio, text] with
add_generation_prompt: input_ids.npy [1, L] int64, attention_mask.npy, mm_token_type_ids.npy (0 text,
1 image, 3 audio), pixel_values.npy [1, 280, 48] float32 (patches flattened row-major as (py, px, c),
padded to the 280-patch budget), image_position_ids.npy [1, 280, 2] ((x, y) per patch, -1 for padding),
input_features.npy [1, 99, 128] float32 (log-mel), input_features_mask.npy [1, 99] bool; the towers'
outputs after the multimodal embedders, i.e. in the text hidden size as spliced into the sequence:
image_embeds.npy [63, 64], audio_embeds.npy [25, 64]; inputs_embeds.npy [1, L, 64] (the merged sequence,
text rows already multiplied by sqrt(hidden)); per_layer_inputs.npy [1, L, 5, 16] (the token-identity
part: at media positions the model looks up the pad id, 0); first_logits.npy [vocab]; greedy_ids (16, in
media_reference.json).

mlx-lm is not used here (no v4 dialect for Gemma 4: it was released with transformers 5 only).
"""
import json
import math
import os
import shutil
import sys
import wave

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
sys.path.insert(0, HERE)
from make_tiny_models import CORPUS  # noqa: E402

PROMPT_LEN = 40
STEPS = 16
MIN_GAP = 1e-2
VOCAB = 400
SPECIALS = ["<pad>", "<eos>", "<bos>", "<|turn>", "<turn|>", "<|image>", "<image|>", "<|image|>",
            "<|audio>", "<audio|>", "<|audio|>", "<|video|>", "<|think|>", "<|channel>", "<channel|>"]
ID = {s: i for i, s in enumerate(SPECIALS)}
PAD_ID, EOS_ID, BOS_ID = 0, 1, 2

CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- for m in messages -%}"
    "{%- set role = 'model' if m['role'] == 'assistant' else m['role'] -%}"
    "{{ '<|turn>' + role + '\\n' }}"
    "{%- if m['content'] is string -%}{{ m['content'] | trim }}"
    "{%- else -%}{%- for item in m['content'] -%}"
    "{%- if item['type'] == 'image' -%}{{ '<|image|>' }}"
    "{%- elif item['type'] == 'audio' -%}{{ '<|audio|>' }}"
    "{%- elif item['type'] == 'text' -%}{{ item['text'] | trim }}"
    "{%- endif -%}{%- endfor -%}{%- endif -%}"
    "{{ '<turn|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|turn>model\\n' }}{%- endif -%}"
)
CHAT = [
    {"role": "system", "content": "You are a tiny model."},
    {"role": "user", "content": "What is the capital of France? Answer in one word."},
]
MEDIA_CHAT = [
    {"role": "user", "content": [
        {"type": "image"},
        {"type": "audio"},
        {"type": "text", "text": "What do you see and hear?"},
    ]},
]


# ----------------------------------------------------------------------------------------------------
# Tokenizer and processor


def make_tokenizer(folder: str) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=1, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([CORPUS], trainer=trainer)
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    for s, i in ID.items():
        assert tok.token_to_id(s) == i
    tok.save(os.path.join(folder, "tokenizer.json"))
    added = {str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False,
                      "single_word": False, "special": True} for s, i in ID.items()}
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": "<bos>",
        "clean_up_tokenization_spaces": False,
        "eos_token": "<turn|>",
        "pad_token": "<pad>",
        "unk_token": None,
        "model_max_length": 1024,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "extra_special_tokens": {
            "image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
            "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>",
        },
    }
    write_json(os.path.join(folder, "tokenizer_config.json"), config)
    with open(os.path.join(folder, "chat_template.jinja"), "w") as f:
        f.write(CHAT_TEMPLATE)


def make_processor(folder: str):
    from transformers import (AutoTokenizer, Gemma4AudioFeatureExtractor, Gemma4ImageProcessor, Gemma4Processor,
                              Gemma4VideoProcessor)

    tokenizer = AutoTokenizer.from_pretrained(folder)
    vision = dict(patch_size=4, pooling_kernel_size=2, max_soft_tokens=70)
    processor = Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(),
        image_processor=Gemma4ImageProcessor(**vision),
        tokenizer=tokenizer,
        video_processor=Gemma4VideoProcessor(**vision),
        chat_template=CHAT_TEMPLATE,
        image_seq_length=70,
    )
    processor.save_pretrained(folder)
    return processor


def make_media(folder: str):
    from PIL import Image

    media = os.path.join(folder, "media")
    os.makedirs(media, exist_ok=True)
    w, h = 64, 48
    x = np.arange(w)[None, :, None]
    y = np.arange(h)[:, None, None]
    c = np.array([0, 1, 2])[None, None, :]
    rgb = ((x * 4 * (c == 0) + y * 5 * (c == 1) + (x + y) * 2 * (c == 2)) % 256).astype(np.uint8)
    image = Image.fromarray(rgb, "RGB")
    image.save(os.path.join(media, "gradient.png"))
    sr = 16000
    t = np.arange(sr) / sr
    # 200 Hz → 2 kHz linear chirp at 0.5 amplitude, 16-bit PCM.
    clip = 0.5 * np.sin(2 * np.pi * (200 * t + 0.5 * 1800 * t * t))
    pcm = np.round(clip * 32767).astype(np.int16)
    with wave.open(os.path.join(media, "chirp.wav"), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(sr)
        f.writeframes(pcm.tobytes())
    return Image.open(os.path.join(media, "gradient.png")).convert("RGB"), pcm.astype(np.float32) / 32768.0


# ----------------------------------------------------------------------------------------------------
# Models

TEXT_COMMON = dict(
    vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
    head_dim=16, global_head_dim=32, max_position_embeddings=1024, rms_norm_eps=1e-6,
    hidden_activation="gelu_pytorch_tanh", sliding_window=8, final_logit_softcapping=30.0,
    attention_k_eq_v=True, num_global_key_value_heads=1, tie_word_embeddings=True,
    pad_token_id=PAD_ID, bos_token_id=BOS_ID, eos_token_id=[EOS_ID, ID["<turn|>"]],
    rope_parameters={
        "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0},
    },
)


def multimodal_config():
    from transformers import Gemma4AudioConfig, Gemma4Config, Gemma4TextConfig, Gemma4VisionConfig

    text = Gemma4TextConfig(
        **TEXT_COMMON,
        num_hidden_layers=5,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "sliding_attention",
                     "full_attention"],
        hidden_size_per_layer_input=16, vocab_size_per_layer_input=VOCAB,
        num_kv_shared_layers=2, use_double_wide_mlp=True, use_bidirectional_attention="vision",
    )
    vision = Gemma4VisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                num_key_value_heads=2, head_dim=16, patch_size=4, pooling_kernel_size=2,
                                position_embedding_size=64)
    audio = Gemma4AudioConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              subsampling_conv_channels=[128, 16], output_proj_dims=32)
    return Gemma4Config(text_config=text, vision_config=vision, audio_config=audio,
                        boi_token_id=ID["<|image>"], eoi_token_id=ID["<image|>"], image_token_id=ID["<|image|>"],
                        video_token_id=ID["<|video|>"], boa_token_id=ID["<|audio>"],
                        eoa_token_index=ID["<audio|>"], audio_token_id=ID["<|audio|>"],
                        pad_token_id=PAD_ID, bos_token_id=BOS_ID, eos_token_id=[EOS_ID, ID["<turn|>"]])


def moe_config():
    from transformers import Gemma4TextConfig

    return Gemma4TextConfig(
        **{**TEXT_COMMON, "intermediate_size": 64},
        num_hidden_layers=4,
        layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        hidden_size_per_layer_input=0, vocab_size_per_layer_input=VOCAB,
        enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=32,
    )


def randomize(model, seed: int, hidden: int) -> None:
    """Spread-out logits and varied greedy text (see make_tiny_models.randomize), for the text model and
    the multimodal embedders; the towers keep transformers' init except the vision position table."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        named = list(model.named_parameters()) + [(n, b) for n, b in model.named_buffers() if n.endswith("layer_scalar")]
        for name, p in named:
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if "position_embedding_table" in name:
                p.copy_(0.5 * r)
                continue
            if "tower" in name:
                continue
            if name.endswith("layer_scalar"):
                p.copy_(1.0 + 0.2 * r)
            elif name.endswith("language_model.norm.weight") or name == "model.norm.weight":
                p.copy_(4.0 + 0.3 * r)
            elif "norm" in name or name.endswith("router.scale") or name.endswith("per_expert_scale"):
                p.copy_(1.0 + 0.3 * r)
            elif name.endswith("embed_tokens.weight"):
                p.copy_(r * 0.4 / hidden ** 0.5)
            elif name.endswith("embed_tokens_per_layer.weight"):
                p.copy_(r * 0.5 / 4.0)
            elif "o_proj" in name or "down_proj" in name or "per_layer_projection" in name:
                p.copy_(r * 4.0 / p.shape[-1] ** 0.5)
            else:
                p.copy_(r / p.shape[-1] ** 0.5)


# ----------------------------------------------------------------------------------------------------
# Reference runs


def gap(logits: np.ndarray) -> float:
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def greedy(model, first_inputs: dict):
    """Greedy loop with the KV cache: no logits processors, eos ignored."""
    new, gaps = [], []
    with torch.no_grad():
        out = model(**first_inputs, use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), cache=out.cache, use_cache=True)
    return first, new, gaps


def text_reference(model, seed: int) -> dict:
    for attempt in range(20):
        rng = np.random.default_rng(seed + attempt)
        ids = [int(x) for x in rng.integers(len(SPECIALS), VOCAB, size=PROMPT_LEN)]
        first, new, gaps = greedy(model, {"input_ids": torch.tensor([ids])})
        if min(gaps) >= MIN_GAP and len(set(new)) >= 4:
            break
    else:
        raise SystemExit("no prompt gave clear greedy steps")
    return {"seed": seed, "prompt_attempt": attempt, "prompt_ids": ids,
            "first_logits": [float(x) for x in first], "steps": STEPS, "greedy_ids": new,
            "gaps": gaps, "min_gap": min(gaps), "min_gap_step": int(np.argmin(gaps))}


def media_reference(model, processor, folder: str, image, clip) -> dict:
    out = os.path.join(folder, "media_reference")
    os.makedirs(out, exist_ok=True)
    text = processor.apply_chat_template(MEDIA_CHAT, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=[image], audio=[clip], return_tensors="pt")
    saved = {}
    for k, v in inputs.items():
        if isinstance(v, torch.Tensor):
            a = v.numpy()
            np.save(os.path.join(out, f"{k}.npy"), a)
            saved[k] = {"shape": list(a.shape), "dtype": str(a.dtype)}
    m = model.model
    with torch.no_grad():
        image_embeds = torch.cat(m.get_image_features(inputs["pixel_values"], inputs["image_position_ids"],
                                                      return_dict=True).pooler_output, 0)
        audio = m.get_audio_features(inputs["input_features"], inputs["input_features_mask"], return_dict=True)
        audio_embeds = audio.pooler_output[audio.attention_mask]
        ids = inputs["input_ids"]
        cfg = model.config
        media_mask = (ids == cfg.image_token_id) | (ids == cfg.audio_token_id) | (ids == cfg.video_token_id)
        llm_ids = torch.where(media_mask, cfg.text_config.pad_token_id, ids)
        embeds = m.get_input_embeddings()(llm_ids)
        embeds[ids == cfg.image_token_id] = image_embeds
        embeds[ids == cfg.audio_token_id] = audio_embeds
        per_layer = m.language_model.get_per_layer_inputs(llm_ids, None)
    for name, a in [("image_embeds", image_embeds), ("audio_embeds", audio_embeds), ("inputs_embeds", embeds),
                    ("per_layer_inputs", per_layer)]:
        np.save(os.path.join(out, f"{name}.npy"), a.numpy().astype(np.float32))
        saved[name] = {"shape": list(a.shape), "dtype": "float32"}
    first, new, gaps = greedy(model, dict(inputs))
    np.save(os.path.join(out, "first_logits.npy"), first.astype(np.float32))
    saved["first_logits"] = {"shape": list(first.shape), "dtype": "float32"}
    n_image = int((inputs["input_ids"] == model.config.image_token_id).sum())
    n_audio = int((inputs["input_ids"] == model.config.audio_token_id).sum())
    return {"messages": MEDIA_CHAT, "text": text, "image": "media/gradient.png", "audio": "media/chirp.wav",
            "image_tokens": n_image, "audio_tokens": n_audio, "arrays": saved, "steps": STEPS,
            "greedy_ids": new, "gaps": gaps, "min_gap": min(gaps)}


def write_json(path: str, obj, indent=2) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def chat_reference(folder: str) -> dict:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    text = tok.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    return {"messages": CHAT, "text": text, "ids": tok(text, add_special_tokens=False)["input_ids"]}


def build(name: str, seed: int, make_model):
    from transformers import GenerationConfig

    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    torch.manual_seed(seed)
    model = make_model()
    model.eval()
    hidden = model.config.get_text_config().hidden_size
    randomize(model, seed, hidden)
    model.save_pretrained(folder)
    GenerationConfig(bos_token_id=BOS_ID, eos_token_id=[EOS_ID, ID["<turn|>"]], pad_token_id=PAD_ID,
                     do_sample=True, top_k=64, top_p=0.95, temperature=1.0).save_pretrained(folder)
    make_tokenizer(folder)
    return folder, model


def main() -> None:
    from transformers import Gemma4ForCausalLM, Gemma4ForConditionalGeneration, __version__

    torch.set_num_threads(2)
    common = {"producer": f"transformers {__version__}", "attn_implementation": "eager", "dtype": "float32",
              "eos_token_id": ID["<turn|>"]}

    folder, model = build("gemma4", 5005, lambda: Gemma4ForConditionalGeneration._from_config(
        multimodal_config(), attn_implementation="eager", dtype=torch.float32))
    processor = make_processor(folder)
    image, clip = make_media(folder)
    ref = {"name": "gemma4", "architecture": "Gemma4ForConditionalGeneration", "model_type": "gemma4", **common,
           **text_reference(model, 5005), "chat": chat_reference(folder)}
    write_json(os.path.join(folder, "reference.json"), ref)
    write_json(os.path.join(folder, "media_reference.json"), media_reference(model, processor, folder, image, clip))

    folder, model = build("gemma4_moe", 6006, lambda: Gemma4ForCausalLM._from_config(
        moe_config(), attn_implementation="eager", dtype=torch.float32))
    ref = {"name": "gemma4_moe", "architecture": "Gemma4ForCausalLM", "model_type": "gemma4_text", **common,
           **text_reference(model, 6006), "chat": chat_reference(folder)}
    write_json(os.path.join(folder, "reference.json"), ref)

    for name in ("gemma4", "gemma4_moe"):
        total = 0
        for root, _, files in os.walk(os.path.join(OUT, name)):
            for f in files:
                total += os.path.getsize(os.path.join(root, f))
        print(f"{name}: {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
