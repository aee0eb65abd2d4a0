#!/usr/bin/env python3
"""Tiny Gemma 4 checkpoints whose audio towers vary each field of `Gemma4AudioConfig` that
transformers reads, one at a time, with transformers' references for an image + audio prompt read
from files (a JPEG photo and the 44.1 kHz stereo clip as WAV, MP3 and M4A).

    python3 -m venv /work/venvs/audio-ref && /work/venvs/audio-ref/bin/pip install torch==2.15.0 \
        transformers==5.24.0 numpy pillow==13.0.0 soundfile==0.14.0 soxr==1.1.0 torchcodec==0.17.0
    /work/venvs/audio-ref/bin/python tests/reference/make_gemma4_audio_fields.py
    /work/venvs/audio-ref/bin/python tests/reference/make_gemma4_audio_fields.py --float64

(the second adds, to the committed variants, their first-step logits computed in float64: the
exact result that transformers' float32 and the engine's are both held to)

(the venv of make_media_fidelity.py serves too; M4A needs torchcodec and the system's FFmpeg shared
libraries, as make_gemma4_media_files.py). Offline and deterministic; CI never runs it, the outputs
are committed.

Every variant is the committed tiny checkpoint fixtures/tiny/gemma4 (its text model, vision tower,
tokenizer and processor, from make_gemma4.py) with its audio tower and `embed_audio` replaced by
new random ones made from the variant's audio_config. Only those tensors are committed, one
safetensors file per variant; the test (crates/engine/tests/fidelity_gemma4_audio_fields.rs)
assembles each checkpoint as this script does: gemma4's config.json with `audio_config` replaced,
gemma4's model.safetensors without `model.audio_tower.*` and `model.embed_audio.*` plus the
variant's tensors, gemma4's tokenizer and processor files. The reference runs from that assembled
folder, loaded back by `from_pretrained`.

The base audio tower is small (hidden 16, 1 conformer layer, 2 heads, subsampling channels
[128, 8], output_proj_dims 16; every other field transformers' default); each variant changes one
field (`field`, `value`), and two more are the shapes the issue found drifting (hidden 32 with 4
heads, channels [128, 32], output 48; hidden 48 with 2 heads, channels [128, 8], output 24), once
with random towers and once (`*_init`) as make_gemma4.py makes a tower: 2 layers, transformers' own
initialisation (only embed_audio random).
Weights are random enough that every field shows in the logits: linear weights r / sqrt(fan in),
norm and LayerNorm weights 1 + 0.3 r, per_dim_scale 0.5 r, the output projection's bias 0.1 r, and
the clipped linears' bounds finite (input and output within ±(1 + |r|)), so clipping bites.

Fields transformers reads and what varies them here: hidden_size, num_hidden_layers,
num_attention_heads, subsampling_conv_channels (its first entry must be the 128 mel bins: the
subsampling projection takes (channels[0] / 4) x channels[1] inputs, which only match the convs'
output when they are), conv_kernel_size, residual_weight, attention_chunk_size,
attention_context_left, attention_context_right, attention_logit_cap,
attention_invalid_logits_value (it only shows where a query has no key to attend to: no variant
can make that visible in the output), use_clipped_linears, rms_norm_eps (the subsampling
LayerNorms, the light convolution's norms and `embed_audio`'s norm; the other norms keep 1e-6),
gradient_clipping, output_proj_dims. hidden_act is any of transformers' ACT2FN names; the engine
runs silu/swish and refuses others by name (its test checks that, no fixture needed).
initializer_range only initialises. The feature extractor reads nothing from audio_config.

Writes fixtures/tiny/gemma4_audio_fields/: {name}.safetensors (the variant's tower and embedder),
{name}.logits.npy ([3, vocab] float32, the first-step logits for WAV, MP3 and M4A in that order),
wav.input_features.npy and wav.input_features_mask.npy (the feature extractor's output for the
WAV clip, [frames, 128] float32 and [frames] bool), {name}.audio_embeds.npy (the tower and
embed_audio on those features: [soft tokens, text hidden] float32), and variants.json: per variant its name, field and value, audio_config (as config.json holds it),
the seed, and per clip kind the prompt length, soft-token counts, greedy ids (STEPS, with the KV
cache, eos ignored) and top-1 gaps.
"""

import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_gemma4 import CHAT_TEMPLATE, MEDIA_CHAT, gap  # noqa: E402

BASE = os.path.join(HERE, "fixtures", "tiny", "gemma4")
OUT = os.path.join(HERE, "fixtures", "tiny", "gemma4_audio_fields")
ROOT = os.path.dirname(os.path.dirname(HERE))
IMAGE = "tests/reference/fixtures/media_fidelity/photo_baseline420.jpg"
CLIPS = [
    ("wav", "tests/reference/fixtures/media_fidelity/clip_44100_stereo.wav", "soundfile"),
    ("mp3", "tests/reference/fixtures/media_fidelity/clip_44100_stereo.mp3", "soundfile"),
    ("m4a", "tests/reference/fixtures/media_fidelity/clip_44100_stereo.m4a", "torchcodec"),
]
STEPS = 8
MIN_GAP = 1e-2
BASE_FILES = ["chat_template.jinja", "generation_config.json", "processor_config.json", "tokenizer.json",
              "tokenizer_config.json"]
AUDIO_PREFIXES = ("model.audio_tower.", "model.embed_audio.")

BASE_AUDIO = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2, subsampling_conv_channels=[128, 8],
                  output_proj_dims=16)
# (name, field, value): one field changed from BASE_AUDIO; the last two change several (the shapes).
VARIANTS = [
    ("base", None, None),
    ("hidden_size", "hidden_size", 24),
    ("num_hidden_layers", "num_hidden_layers", 2),
    ("num_attention_heads", "num_attention_heads", 4),
    ("subsampling_channels_4", "subsampling_conv_channels", [128, 4]),
    ("subsampling_channels_16", "subsampling_conv_channels", [128, 16]),
    ("conv_kernel_size", "conv_kernel_size", 3),
    ("residual_weight", "residual_weight", 0.25),
    ("attention_chunk_size", "attention_chunk_size", 8),
    ("attention_context_left", "attention_context_left", 6),
    ("attention_context_right", "attention_context_right", 3),
    ("attention_logit_cap", "attention_logit_cap", 2.0),
    ("attention_invalid_logits_value", "attention_invalid_logits_value", -1.0e4),
    ("use_clipped_linears", "use_clipped_linears", False),
    ("rms_norm_eps", "rms_norm_eps", 0.05),
    ("gradient_clipping", "gradient_clipping", 0.5),
    ("output_proj_dims", "output_proj_dims", 24),
    ("issue_hidden32_heads4", None, dict(hidden_size=32, num_attention_heads=4, subsampling_conv_channels=[128, 32],
                                         output_proj_dims=48)),
    ("issue_hidden48_heads2", None, dict(hidden_size=48, num_attention_heads=2, subsampling_conv_channels=[128, 8],
                                         output_proj_dims=24)),
    # The issue's shapes as make_gemma4.py makes a tower: 2 layers, transformers' own initialisation.
    ("issue_hidden32_heads4_init", None, dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                              subsampling_conv_channels=[128, 32], output_proj_dims=48)),
    ("issue_hidden48_heads2_init", None, dict(hidden_size=48, num_hidden_layers=2, num_attention_heads=2,
                                              subsampling_conv_channels=[128, 8], output_proj_dims=24)),
]
# Variants whose tower keeps transformers' initialisation (only embed_audio random, as make_gemma4.py).
TRANSFORMERS_INIT = {"issue_hidden32_heads4_init", "issue_hidden48_heads2_init"}


def audio_fields(field, value) -> dict:
    fields = dict(BASE_AUDIO)
    if field is not None:
        fields[field] = value
    elif isinstance(value, dict):
        fields.update(value)
    return fields


def randomize_audio(model, seed: int, tower: bool) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        named = list(model.model.audio_tower.named_parameters()) + list(model.model.audio_tower.named_buffers())
        named = named if tower else []
        named += [("embed_audio." + n, p) for n, p in model.model.embed_audio.named_parameters()]
        for name, p in named:
            if name.endswith("inv_timescales") or name.endswith("softcap"):
                continue  # computed from the config, not stored
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if name.endswith("_min"):
                p.copy_(-(1.0 + r.abs()))
            elif name.endswith("_max"):
                p.copy_(1.0 + r.abs())
            elif "norm" in name:
                p.copy_(1.0 + 0.3 * r)
            elif name.endswith("per_dim_scale"):
                p.copy_(0.5 * r)
            elif name.endswith("bias"):
                p.copy_(0.1 * r)
            elif p.ndim >= 2:
                p.copy_(r / (p[0].numel() ** 0.5))
            else:
                raise SystemExit(f"no rule for {name} {tuple(p.shape)}")


def make_variant(base_model, fields: dict, seed: int, work: str, tower_random: bool) -> tuple[dict, dict]:
    """The base model with a new audio tower and embedder: (its audio tensors, its config.json's audio_config)."""
    from transformers import Gemma4AudioConfig
    from transformers.models.gemma4.modeling_gemma4 import Gemma4AudioModel, Gemma4MultimodalEmbedder

    torch.manual_seed(seed)
    config = Gemma4AudioConfig(**fields)
    model = base_model
    model.config.audio_config = config
    model.model.audio_tower = Gemma4AudioModel(config).eval()
    model.model.embed_audio = Gemma4MultimodalEmbedder(config, model.config.text_config)
    randomize_audio(model, seed, tower_random)
    saved = os.path.join(work, "saved")
    shutil.rmtree(saved, ignore_errors=True)
    model.save_pretrained(saved)
    from safetensors.torch import load_file

    tensors = {k: v for k, v in load_file(os.path.join(saved, "model.safetensors")).items() if k.startswith(AUDIO_PREFIXES)}
    with open(os.path.join(saved, "config.json")) as f:
        audio_config = json.load(f)["audio_config"]
    return tensors, audio_config


def assemble(folder: str, tensors: dict, audio_config: dict) -> None:
    """As the engine's test does: gemma4's files, its config with this audio_config, its weights with these audio tensors."""
    from safetensors.torch import load_file, save_file

    os.makedirs(folder, exist_ok=True)
    for name in BASE_FILES:
        shutil.copy(os.path.join(BASE, name), folder)
    with open(os.path.join(BASE, "config.json")) as f:
        config = json.load(f)
    config["audio_config"] = audio_config
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    weights = {k: v for k, v in load_file(os.path.join(BASE, "model.safetensors")).items() if not k.startswith(AUDIO_PREFIXES)}
    weights.update(tensors)
    save_file(weights, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})


def processor():
    from transformers import AutoTokenizer, Gemma4Processor
    from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
    from transformers.models.gemma4.image_processing_pil_gemma4 import Gemma4ImageProcessorPil

    # As make_gemma4_media_files.py: the PIL image processor, no video processor.
    Gemma4Processor.check_argument_for_proper_class = lambda self, name, arg: None
    return Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(),
        image_processor=Gemma4ImageProcessorPil(patch_size=4, pooling_kernel_size=2, max_soft_tokens=70),
        tokenizer=AutoTokenizer.from_pretrained(BASE),
        video_processor=None,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=70,
    )


def prompts(proc) -> list:
    from transformers.audio_utils import load_audio
    from transformers.image_utils import load_image

    image = load_image(os.path.join(ROOT, IMAGE))
    text = proc.apply_chat_template(MEDIA_CHAT, tokenize=False, add_generation_prompt=True)
    out = []
    for kind, path, backend in CLIPS:
        clip = load_audio(os.path.join(ROOT, path), sampling_rate=16000, backend=backend)
        out.append((kind, path, proc(text=[text], images=[image], audio=[clip], return_tensors="pt")))
    return out


def run(model, inputs) -> tuple:
    new, gaps = [], []
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), cache=out.cache, use_cache=True)
    return first, new, gaps


def main() -> None:
    from transformers import Gemma4ForConditionalGeneration, __version__

    torch.set_num_threads(2)
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    proc = processor()
    inputs = prompts(proc)
    entries = []
    np.save(os.path.join(OUT, "wav.input_features.npy"), inputs[0][2]["input_features"][0].numpy())
    np.save(os.path.join(OUT, "wav.input_features_mask.npy"), inputs[0][2]["input_features_mask"][0].numpy())
    with tempfile.TemporaryDirectory() as work:
        for index, (name, field, value) in enumerate(VARIANTS):
            fields = audio_fields(field, value)
            for attempt in range(10):
                seed = 4300 + 100 * index + attempt
                base = Gemma4ForConditionalGeneration.from_pretrained(BASE, dtype=torch.float32,
                                                                      attn_implementation="eager")
                tensors, audio_config = make_variant(base, fields, seed, work, name not in TRANSFORMERS_INIT)
                folder = os.path.join(work, name)
                shutil.rmtree(folder, ignore_errors=True)
                assemble(folder, tensors, audio_config)
                model, info = Gemma4ForConditionalGeneration.from_pretrained(
                    folder, dtype=torch.float32, attn_implementation="eager", output_loading_info=True)
                assert not any(info.values()), info
                model.eval()
                runs = [(kind, path, x, *run(model, x)) for kind, path, x in inputs]
                if min(min(r[5]) for r in runs) >= MIN_GAP:
                    break
            else:
                raise SystemExit(f"{name}: no seed gave clear greedy steps")
            from safetensors.torch import save_file

            save_file(tensors, os.path.join(OUT, f"{name}.safetensors"), metadata={"format": "pt"})
            # The tower alone, on transformers' own features of the WAV clip: what embed_audio gives.
            wav = inputs[0][2]
            with torch.no_grad():
                audio = model.model.get_audio_features(wav["input_features"], wav["input_features_mask"], return_dict=True)
            np.save(os.path.join(OUT, f"{name}.audio_embeds.npy"), audio.pooler_output[audio.attention_mask].numpy())
            np.save(os.path.join(OUT, f"{name}.logits.npy"), np.stack([r[3] for r in runs]).astype(np.float32))
            clips = {}
            for kind, path, x, first, new, gaps in runs:
                ids = x["input_ids"][0]
                clips[kind] = {"audio": path, "prompt_tokens": int(len(ids)),
                               "image_tokens": int((ids == model.config.image_token_id).sum()),
                               "audio_tokens": int((ids == model.config.audio_token_id).sum()),
                               "greedy_ids": new, "gaps": gaps, "min_gap": min(gaps)}
            entries.append({"name": name, "field": field, "value": value if field is not None else fields,
                            "seed": seed, "tower_init": "transformers" if name in TRANSFORMERS_INIT else "random", "audio_config": audio_config, "clips": clips})
            print(f"{name}: seed {seed}, min gap {min(c['min_gap'] for c in clips.values()):.4f}, "
                  f"greedy (wav) {clips['wav']['greedy_ids']}", flush=True)
    meta = {"producer": f"transformers {__version__}", "base": "tests/reference/fixtures/tiny/gemma4",
            "image": IMAGE, "clip_order": [k for k, _, _ in CLIPS], "messages": MEDIA_CHAT, "steps": STEPS,
            "base_audio": BASE_AUDIO, "variants": entries}
    with open(os.path.join(OUT, "variants.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{len(entries)} variants, {total / 1e6:.2f} MB")


def float64_references() -> None:
    """`--float64`: the committed variants' first-step logits computed in float64 by the same
    transformers model (`model.double()`, the processor's float32 inputs widened exactly), written
    as {name}.logits_f64.npy ([3, vocab], rounded to float32 for the test's reader: 2e-6 at most for
    these logits, under 32 in magnitude). They say how far transformers' own float32 is from the
    exact result, which bounds what a float32 implementation can be held to."""
    from safetensors.torch import load_file
    from transformers import Gemma4ForConditionalGeneration

    # The model casts to float32 in places (`.float()`, softmax's dtype): kept float64 here.
    softmax = torch.nn.functional.softmax
    torch.Tensor.float = torch.Tensor.double
    torch.nn.functional.softmax = lambda t, *a, dtype=None, **k: softmax(t, *a, dtype=None if t.dtype == torch.float64 else dtype, **k)
    torch.set_num_threads(2)
    with open(os.path.join(OUT, "variants.json")) as f:
        meta = json.load(f)
    inputs = prompts(processor())
    with tempfile.TemporaryDirectory() as work:
        for entry in meta["variants"]:
            name = entry["name"]
            folder = os.path.join(work, name)
            assemble(folder, load_file(os.path.join(OUT, f"{name}.safetensors")), entry["audio_config"])
            model = Gemma4ForConditionalGeneration.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
            model = model.double().eval()
            rows = []
            with torch.no_grad():
                for _, _, x in inputs:
                    wide = {k: v.double() if v.is_floating_point() else v for k, v in x.items()}
                    rows.append(model(**wide).logits[0, -1].numpy().copy())
            wide = np.stack(rows)
            np.save(os.path.join(OUT, f"{name}.logits_f64.npy"), wide.astype(np.float32))
            f32 = np.load(os.path.join(OUT, f"{name}.logits.npy")).astype(np.float64)
            print(f"{name}: transformers float32 vs float64, max abs diff per clip "
                  f"{[float(np.abs(a - b).max()) for a, b in zip(f32, wide)]}", flush=True)


if __name__ == "__main__":
    float64_references() if sys.argv[1:] == ["--float64"] else main()
