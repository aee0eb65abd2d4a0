#!/usr/bin/env python3
"""Tiny random DiffusionGemma checkpoints (block diffusion on the Gemma 4 MoE text stack) with float32
reference outputs from transformers' own DiffusionGemmaForBlockDiffusion and its generate(), the noise
it drew recorded so that Confab's denoising method can replay it.

    /opt/confab-ref/bin/python tests/reference/make_diffusion_gemma.py

Needs transformers 5.25 with torch (docs/tests.md, 'Reference fixtures'), numpy and safetensors, and for the
image variant Pillow and torchvision (Gemma4ImageProcessor is the torchvision backend; torchvision 0.29.2
installed --no-deps beside torch 2.15 works, as for make_gemma4.py). Works offline. CI never runs this; the
outputs are committed. It deletes and rewrites only the diffusion_gemma* folders below (0.9, 0.5 and 0.3 MB)
and takes a few seconds (minutes on a busy machine).

DiffusionGemma: a causal encoder (Gemma 4's text stack, every layer a dense MLP beside routed experts)
reads the prompt into a key/value cache; a decoder with the same layer weights (tied) plus a
self-conditioning MLP denoises a canvas of `canvas_length` tokens, attending both ways over the cached
prefix and the canvas. generate() per canvas: a uniform random canvas, then up to max_denoising_steps
steps (temperature falling linearly from t_max to t_min, tokens sampled from the tempered logits, the
entropy-bound sampler keeping the most certain ones and renoising the rest, stopping early once the argmax
canvas is stable and its mean entropy below confidence_threshold); the last argmax canvas joins the
sequence and goes through the encoder before the next canvas; an end-of-turn id ends the sequence (what
follows it becomes the pad id).

The noise: generate() draws canvases with torch.randint (the initial one, and a whole fresh one at every
step for renoising) and samples with torch.multinomial. This script runs generate() with both replaced:
randint by a seeded torch generator's draws, recorded; multinomial by inverse-CDF sampling from recorded
float64 uniforms (the first index whose cumulative probability exceeds u). The draws are written in the
order generate() made them; an engine that draws in the same order reproduces generate() exactly.

The weights are spread out (make_tiny_models.randomize's scheme) with a light self-conditioning
block: the previous step's logits are all a step carries to the next besides tokens, and a strong carry
compounds float32 rounding from step to step. Each case is also generated in float64 with the same draws
and must give the same tokens and steps per canvas, so that no sample, acceptance or early stop hangs on
rounding and another float32 implementation can reproduce it exactly.

What it makes, under tests/reference/fixtures/tiny/:

  diffusion_gemma    hidden 48, layers [sliding, full, sliding, full] (sliding_window 40), 4 heads, 2 KV
                     heads of 12, full layers 1 KV head of 24 (keys doubling as values), 5 experts of
                     width 20 (2 per token), dense width 40, canvas 8; stops on confidence alone
                     (stability_threshold 0), 16 steps at most.
  diffusion_gemma_b  uneven: hidden 40, layers [sliding, sliding, full], 5 heads, 1 KV head of 8, full
                     layers 16 wide, 3 experts of width 12 (1 per token), dense width 24, canvas 6,
                     sliding_window 10 (later canvases see only the window of the cached prefix); asks for
                     a stable argmax as well (stability_threshold 1), 12 steps at most.

  diffusion_gemma_image
                     images: hidden 32, layers [sliding, full] (sliding_window 12), 2 heads, 1 KV head of
                     16, 3 experts of width 16 (1 per token), canvas 6, use_bidirectional_attention
                     "vision"; a vision tower Gemma 4's image processor can feed (patch 4, pooling 2,
                     positions up to 64) and processor_config.json (max_soft_tokens 70). Its cases are one
                     chat, [user: image, text], with make_gemma4.py's 64x48 gradient (fixtures/tiny/gemma4/
                     media/gradient.png, read by Pillow: 63 soft tokens, longer than the window, so the
                     block mask, which the window does not cut, shows), under two noise seeds.

The first variant also has a case whose reply ends in an end-of-turn id (END_OF_TURN_CASE, found by trying
seeds); generate() pads what follows it. Adding it left the first three cases' records byte-identical.

DiffusionGemma puts experts beside the dense MLP in every layer (there is no dense-only layer to make).
Each folder: config.json and generation_config.json as transformers writes them, model.safetensors
(float32, as save_pretrained writes the tied weights: the decoder's copy), a tiny vision tower's weights
(the first two variants' cannot take a real image: their position table has 16 entries), the tokenizer and chat template of the gemma4_moe fixture (vocab 400), and
reference.json: per case the prompt ids (the image variant's: the processor's, with its chat and image), the recorded noise (`canvases`: every randint
draw, `uniforms`: every multinomial draw), the generated ids (after the prompt), the decoder steps of each
canvas, the decoder's first-step logits (raw, before the temperature) of the first canvas, and the
encoder's last-position logits of the prompt (through the tied head, soft-capped).
"""
import json
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
TOKENIZER_FROM = os.path.join(OUT, "gemma4_moe")
PAD_ID, EOS_IDS, BOS_ID = 0, [1, 4], 2
VOCAB = 400
LINEAR_GAIN = 1.0
# Large enough for peaked logits, small enough that float32's rounding (relative to the logits' size)
# stays well inside the 1e-4 the Rust test allows.
FINAL_NORM_GAIN = 1.5
SELF_CONDITIONING_GAIN = 0.1

VARIANTS = [
    {
        "name": "diffusion_gemma", "seed": 3901, "hidden": 48, "intermediate": 40,
        "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
        "heads": 4, "kv_heads": 2, "head_dim": 12, "global_head_dim": 24, "global_kv_heads": 1,
        "experts": 5, "top_k": 2, "moe_dim": 20, "sliding_window": 40, "canvas": 8,
        "generation": {"max_denoising_steps": 16, "entropy_bound": 0.6, "t_min": 0.2, "t_max": 0.4,
                       "stability_threshold": 0, "confidence_threshold": 0.15, "max_new_tokens": 24},
    },
    {
        "name": "diffusion_gemma_b", "seed": 3902, "hidden": 40, "intermediate": 24,
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
        "heads": 5, "kv_heads": 1, "head_dim": 8, "global_head_dim": 16, "global_kv_heads": 1,
        "experts": 3, "top_k": 1, "moe_dim": 12, "sliding_window": 10, "canvas": 6,
        "generation": {"max_denoising_steps": 12, "entropy_bound": 0.8, "t_min": 0.15, "t_max": 0.45,
                       "stability_threshold": 1, "confidence_threshold": 0.5, "max_new_tokens": 18},
    },
    {
        # Images: a vision tower Gemma 4's image processor can feed (positions up to 64, pooling 2), the
        # image's tokens seeing each other both ways ("vision"), a sliding window of 12 shorter than the
        # image's 63 soft tokens (transformers' block mask is not cut by the window).
        "name": "diffusion_gemma_image", "seed": 3903, "hidden": 32, "intermediate": 24,
        "layer_types": ["sliding_attention", "full_attention"],
        "heads": 2, "kv_heads": 1, "head_dim": 16, "global_head_dim": 16, "global_kv_heads": 1,
        "experts": 3, "top_k": 1, "moe_dim": 16, "sliding_window": 12, "canvas": 6,
        "bidirectional": "vision", "vision": {"position_embedding_size": 64, "pooling_kernel_size": 2},
        "image": True,
        "generation": {"max_denoising_steps": 12, "entropy_bound": 0.8, "t_min": 0.15, "t_max": 0.45,
                       "stability_threshold": 1, "confidence_threshold": 0.5, "max_new_tokens": 18},
    },
]
# The first variant stops on confidence alone (stability_threshold 0); the second asks for a stable argmax
# canvas as well. In both some canvases stop early and some run to the step limit (checked below).
CASES = [{"prompt_len": 11, "seed": 41}, {"prompt_len": 7, "seed": 29}, {"prompt_len": 11, "seed": 17}]
# A reply that ends in an end-of-turn id (found by trying seeds), for the first variant only.
END_OF_TURN_CASE = {"prompt_len": 9, "seed": 102}
# The image variant's chat: one image (make_gemma4.py's 64x48 gradient, decoded by Pillow as the
# processor reads it; 63 soft tokens), then text.
IMAGE = os.path.join(OUT, "gemma4", "media", "gradient.png")
IMAGE_CHAT = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is in the picture?"}]}]
IMAGE_SEEDS = [23, 31]


def write_json(path, obj, indent=2):
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


def make_config(v):
    from transformers import DiffusionGemmaConfig
    text = {
        "vocab_size": VOCAB, "hidden_size": v["hidden"], "intermediate_size": v["intermediate"],
        "num_hidden_layers": len(v["layer_types"]), "num_attention_heads": v["heads"],
        "num_key_value_heads": v["kv_heads"], "head_dim": v["head_dim"], "global_head_dim": v["global_head_dim"],
        "num_global_key_value_heads": v["global_kv_heads"], "layer_types": list(v["layer_types"]),
        "sliding_window": v["sliding_window"], "num_experts": v["experts"], "top_k_experts": v["top_k"],
        "moe_intermediate_size": v["moe_dim"], "max_position_embeddings": 1024, "pad_token_id": PAD_ID,
        "eos_token_id": EOS_IDS, "bos_token_id": BOS_ID,
    }
    if "bidirectional" in v:
        text["use_bidirectional_attention"] = v["bidirectional"]
    vision = {"model_type": "gemma4_vision", "hidden_size": 16, "intermediate_size": 16, "num_hidden_layers": 1,
              "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 8, "position_embedding_size": 16,
              "patch_size": 4, **v.get("vision", {})}
    config = DiffusionGemmaConfig(text_config=text, vision_config=vision, canvas_length=v["canvas"],
                                  image_token_id=7, boi_token_id=5, eoi_token_id=6)
    config.architectures = ["DiffusionGemmaForBlockDiffusion"]
    config.dtype = "float32"
    return config


def randomize(model, seed):
    """Spread-out weights (make_tiny_models.randomize's scheme), so that the decoder's logits are peaked
    enough for the sampler to accept several tokens a step and for adaptive stopping to fire."""
    import torch
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if name.endswith("decoder.norm.weight") or name.endswith("language_model.norm.weight"):
                # The final norm (tied between encoder and decoder) sharpens the logits.
                value = FINAL_NORM_GAIN + 0.3 * rng.standard_normal(shape)
            elif name.endswith("norm.weight"):
                value = 1.0 + 0.3 * rng.standard_normal(shape)
            elif name.endswith("router.scale") or name.endswith("per_expert_scale"):
                value = 1.0 + 0.3 * rng.standard_normal(shape)
            elif "embed_tokens" in name:
                value = 0.5 * rng.standard_normal(shape)
            elif "self_conditioning.down_proj" in name:
                # A light self-conditioning signal: the previous step's logits are the one thing a
                # step carries to the next besides tokens, and a strong carry compounds float32
                # rounding from step to step (see float64_agrees).
                value = SELF_CONDITIONING_GAIN * rng.standard_normal(shape) / shape[-1] ** 0.5
            elif len(shape) >= 2:
                value = LINEAR_GAIN * rng.standard_normal(shape) / shape[-1] ** 0.5
            else:
                value = 0.3 * rng.standard_normal(shape)
            p.copy_(torch.tensor(value, dtype=torch.float32))


def write_folder(v):
    import torch
    from transformers import DiffusionGemmaForBlockDiffusion
    folder = os.path.join(OUT, v["name"])
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    torch.manual_seed(v["seed"])
    model = DiffusionGemmaForBlockDiffusion(make_config(v)).eval()
    randomize(model, v["seed"])
    model.save_pretrained(folder)
    g = v["generation"]
    write_json(os.path.join(folder, "generation_config.json"), {
        "bos_token_id": BOS_ID, "eos_token_id": EOS_IDS, "pad_token_id": PAD_ID,
        "max_new_tokens": g["max_new_tokens"], "max_denoising_steps": g["max_denoising_steps"],
        "sampler_config": {"_cls_name": "EntropyBoundSamplerConfig", "entropy_bound": g["entropy_bound"]},
        "t_min": g["t_min"], "t_max": g["t_max"], "stability_threshold": g["stability_threshold"],
        "confidence_threshold": g["confidence_threshold"],
    })
    for f in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        shutil.copy(os.path.join(TOKENIZER_FROM, f), folder)
    if v.get("image"):
        make_processor(folder, v)
    return folder


def make_processor(folder, v):
    """Gemma4Processor (DiffusionGemma's, per transformers' processor mapping) with the tiny tower's patch
    and pooling sizes; writes processor_config.json."""
    from transformers import (AutoTokenizer, Gemma4AudioFeatureExtractor, Gemma4ImageProcessor, Gemma4Processor,
                              Gemma4VideoProcessor)
    vision = dict(patch_size=4, pooling_kernel_size=v["vision"]["pooling_kernel_size"], max_soft_tokens=70)
    with open(os.path.join(folder, "chat_template.jinja")) as f:
        template = f.read()
    processor = Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(), image_processor=Gemma4ImageProcessor(**vision),
        tokenizer=AutoTokenizer.from_pretrained(folder), video_processor=Gemma4VideoProcessor(**vision),
        chat_template=template, image_seq_length=70)
    processor.save_pretrained(folder)
    return processor


def image_inputs(folder):
    """The processor's inputs for IMAGE_CHAT: ids, pixel_values, image_position_ids, mm_token_type_ids."""
    from PIL import Image
    from transformers import AutoProcessor
    processor = AutoProcessor.from_pretrained(folder)
    text = processor.apply_chat_template(IMAGE_CHAT, tokenize=False, add_generation_prompt=True)
    image = Image.open(IMAGE).convert("RGB")
    inputs = processor(text=[text], images=[image], return_tensors="pt")
    return {k: v for k, v in inputs.items() if k != "attention_mask"}


def load(folder):
    import torch
    from transformers import DiffusionGemmaForBlockDiffusion
    model, info = DiffusionGemmaForBlockDiffusion.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager", experts_implementation="eager",
        output_loading_info=True)
    missing = [k for k, v in info.items() if v and k != "error_msgs"]
    assert not missing, f"loading info: {info}"
    return model.eval()


class RecordedNoise:
    """torch.randint and torch.multinomial as generate() calls them, drawn from a seeded generator and
    recorded."""

    def __init__(self, seed):
        import torch
        self.generator = torch.Generator().manual_seed(seed)
        self.canvases, self.uniforms = [], []
        self.torch_randint = torch.randint

    def randint(self, low, high, size, device=None, **kwargs):
        import torch
        draw = self.torch_randint(low, high, size, generator=self.generator)
        self.canvases.append([int(x) for x in draw.flatten()])
        return draw

    def multinomial(self, probs, num_samples):
        import torch
        assert num_samples == 1 and probs.ndim == 2
        u = torch.rand(probs.shape[0], dtype=torch.float64, generator=self.generator)
        self.uniforms.append([float(x) for x in u])
        cdf = torch.cumsum(probs.to(torch.float64), dim=-1)
        # The first index whose cumulative probability exceeds u (the last one if rounding leaves none).
        picked = (cdf <= u[:, None]).sum(-1).clamp(max=probs.shape[1] - 1)
        return picked[:, None]


def generate(model, prompt, seed, media=None):
    """generate() with its noise recorded; the decoder calls of each canvas counted. `media`: the
    processor's image inputs (pixel_values, image_position_ids, mm_token_type_ids), if any."""
    import torch
    noise = RecordedNoise(seed)
    steps, first_logits = [], []
    decoder = model.model.decoder
    inner = decoder.forward

    def counting(*args, **kwargs):
        steps[-1] += 1
        return inner(*args, **kwargs)

    encoder = model.model.encoder
    encoder_forward = encoder.forward

    def new_canvas(*args, **kwargs):
        steps.append(0)
        return encoder_forward(*args, **kwargs)

    model_forward = model.forward

    def recording(*args, **kwargs):
        out = model_forward(*args, **kwargs)
        if not first_logits:
            first_logits.append(out.logits[0].float().numpy().copy())
        return out

    saved = (torch.randint, torch.multinomial)
    torch.randint, torch.multinomial = noise.randint, noise.multinomial
    decoder.forward, encoder.forward, model.forward = counting, new_canvas, recording
    try:
        with torch.no_grad():
            out = model.generate(torch.tensor([prompt]), **(media or {}))
    finally:
        torch.randint, torch.multinomial = saved
        del decoder.forward, encoder.forward, model.forward
    sequence = [int(x) for x in out.sequences[0, len(prompt):]]
    return sequence, steps, first_logits[0], noise


def encoder_logits(model, prompt, media=None):
    import torch
    with torch.no_grad():
        h = model.model.encoder(input_ids=torch.tensor([prompt]), **(media or {})).last_hidden_state[0, -1]
        logits = model.lm_head(h).float()
        cap = model.final_logit_softcapping
        return (torch.tanh(logits / cap) * cap).float().numpy()


def make_reference(v, folder):
    import torch
    import transformers
    model = load(folder)
    wide = load(folder).to(torch.float64)
    cases = []
    if v.get("image"):
        inputs = image_inputs(folder)
        prompt = [int(x) for x in inputs.pop("input_ids")[0]]
        plan = [(prompt, seed, inputs) for seed in IMAGE_SEEDS]
    else:
        plan = []
        for case in CASES + ([END_OF_TURN_CASE] if v is VARIANTS[0] else []):
            rng = np.random.default_rng(v["seed"] + case["seed"])
            # Ordinary tokens only (ids below 16 are the tokenizer's specials).
            prompt = [BOS_ID] + [int(x) for x in rng.integers(16, VOCAB, size=case["prompt_len"] - 1)]
            plan.append((prompt, case["seed"], None))
    for prompt, seed, media in plan:
        sequence, steps, first, noise = generate(model, prompt, seed, media)
        print(f"  {v['name']} case seed {seed}: steps per canvas {steps}, generated {sequence}")
        # The same draws in float64 must give the same tokens and steps: no sample, acceptance or
        # stop of this case hangs on float32's rounding, so another float32 implementation can
        # reproduce it exactly.
        wide_media = media and {k: (x.to(torch.float64) if x.is_floating_point() else x) for k, x in media.items()}
        wide_sequence, wide_steps, _, _ = generate(wide, prompt, seed, wide_media)
        assert (wide_sequence, wide_steps) == (sequence, steps), \
            f"float64 gives {wide_steps} {wide_sequence}: this case is not robust to rounding; retune VARIANTS"
        cases.append({
            **({"chat": IMAGE_CHAT, "image": os.path.relpath(IMAGE, folder)} if media else {}),
            "prompt_ids": prompt,
            "noise_seed": seed,
            "canvases": noise.canvases,
            "uniforms": noise.uniforms,
            "generated_ids": sequence,
            "steps_per_canvas": steps,
            "decoder_first_logits": [[float(x) for x in row] for row in first.astype(np.float32)],
            "encoder_last_logits": [float(x) for x in encoder_logits(model, prompt, media).astype(np.float32)],
        })
    g = v["generation"]
    steps = [s for c in cases for s in c["steps_per_canvas"]]
    assert min(steps) < g["max_denoising_steps"] and max(steps) > 1, \
        f"{v['name']}: steps per canvas {steps}; retune VARIANTS so that some canvases stop early and some do not"
    return {
        "name": v["name"],
        "architecture": "DiffusionGemmaForBlockDiffusion",
        "model_type": "diffusion_gemma",
        "producer": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "compute": "CPU, float32 weights and activations, eager attention and experts, DynamicCache; "
                   "torch.randint and torch.multinomial replaced by recorded draws (see the script)",
        "canvas_length": v["canvas"],
        "sliding_window": v["sliding_window"],
        "generation": g,
        "cases": cases,
    }


def main():
    for v in VARIANTS:
        folder = write_folder(v)
        write_json(os.path.join(folder, "reference.json"), make_reference(v, folder), indent=None)
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"wrote {folder} ({size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
