#!/usr/bin/env python3
"""A tiny random Qwen3-VL checkpoint with float32 references for the image and video paths.

    /opt/confab-ref/bin/python tests/reference/make_qwen3_vl.py

Needs the reference venv (transformers 5.25.0, torch on the CPU, tokenizers, safetensors, numpy, Pillow, and
torchvision for the video processor: 0.29.2, `pip install --no-deps`, the newest there is, which takes torch >=
2.14). Images go through the Pillow image processor (Qwen2VLImageProcessorPil: Pillow's bicubic resize, float64
rescale stored float32, float32 normalise), which is the path the engine matches for images; videos through
Qwen3VLVideoProcessor, whose only backend is torchvision: uint8 frames resized by torch's antialiased bicubic
(int16 fixed-point weights on an AVX2 CPU), then rescale and normalise fused in float32. Works offline: the model is built from a config, the tokenizer is
trained on make_tiny_models.CORPUS. CI never runs this; the outputs are committed. It deletes and rewrites
only fixtures/tiny/qwen3_vl (about 1.7 MB) and takes a few seconds.

What it makes (a Hugging Face folder, laid out like the released Qwen3-VL checkpoints):

  Qwen3VLForConditionalGeneration (model_type qwen3_vl), text_config qwen3_vl_text + vision_config:
  - text: vocab 400, hidden 64, 3 layers, 4 heads, 2 kv heads, head_dim 32, q/k norms, untied lm_head,
    rope_theta 5e6 with mrope_section [6, 5, 5] and mrope_interleaved (16 frequencies: H takes 1, 4, 7, 10,
    13; W takes 2, 5, 8, 11, 14; T the rest, as transformers 5 interleaves them);
  - vision: 3 blocks, hidden 32, 2 heads (head_dim 16), MLP 64 (gelu_pytorch_tanh), patch 8, temporal
    patch 2, spatial merge 2, 36 learned position embeddings (a 6 x 6 grid, bilinearly resampled to each
    image's grid), deepstack_visual_indexes [0, 1] (so deepstack adds features after text layers 0 and 1),
    out_hidden_size 64;
  - tokenizer: byte-level BPE with the real special tokens <|endoftext|> <|im_start|> <|im_end|>
    <|vision_start|> <|vision_end|> <|image_pad|> <|video_pad|> (ids 0..6) and a chat template that writes
    <|vision_start|><|image_pad|><|vision_end|> for an image part, as Qwen3-VL's does;
  - processor settings: patch 8, merge 2, temporal patch 2, size {shortest_edge 512, longest_edge 4096}
    (min/max pixels), mean/std 0.5, bicubic.

References, all from the forward pass in float32 with eager attention (reference.json + .npy files):
  - video (reference["video"]): 10 frames of 72 x 40 at 10 fps (media/video_frames.npy, uint8, and the same
    frames as media/moving.gif), given to the processor as frames with VideoMetadata so decoding is out of
    the comparison: fps 2 samples 4 frames [0, 3, 6, 9] (min_frames 4), smart_resize makes them 64 x 32, grid
    (2, 4, 8); the chats [user: video, text] ("video"), [user: image, video, text] ("mixed") and [user: video,
    video, text] ("two_videos", the same video twice) with their ids (timestamps "<0.1 seconds>",
    "<0.8 seconds>"), the expanded prompt as text ("expanded_text", the ids decoded), positions, rope delta,
    first logits and 16 greedy ids; pixel_values_videos.npy, video_embeds.npy and video_deepstack_{k}.npy.
    The template writes <|vision_start|><|video_pad|><|vision_end|> for a video; transformers 5.25 replaces
    that whole run with the frame groups (<0.1 seconds><|vision_start|>pads<|vision_end|><0.8 seconds>...),
    as 4.57 to 5.9 did (5.10 to 5.24 replaced only the pad, keeping an extra start and end around them);
  - media/wide.png (90 x 50) and media/tall.png (40 x 100), made here with numpy + Pillow: smart_resize
    gives 80 x 32 (over the pixel budget, so shrunk) and 32 x 96 (2.5 rounds to 2: Python's round);
  - the chat [user: image, image, text] through Qwen3VLProcessor: input_ids, image_grid_thw,
    pixel_values.npy;
  - the vision tower: image_embeds.npy (the merger's rows for both images) and deepstack_{k}.npy;
  - position_ids (3 x T) and the rope delta from get_rope_index;
  - first-step logits and 16 greedy ids by repeated forward passes with the model's cache.
Weights are re-drawn (seed + attempt) until every greedy step's top-2 logit gap is >= 1e-2 and the ids
are not one token repeated, for the image chat and the three video chats.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tiny_models import CORPUS, MIN_DISTINCT, MIN_GAP  # noqa: E402

OUT = os.path.join(HERE, "fixtures", "tiny", "qwen3_vl")
SEED = 30701
STEPS = 16
VOCAB = 400
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|image_pad|>", "<|video_pad|>"]
ID = {s: i for i, s in enumerate(SPECIALS)}
# Qwen3-VL's template, reduced to what these fixtures use (roles, string or list content, image and video
# parts, the generation prompt).
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message.role + '\\n' }}"
    "{%- if message.content is string %}{{- message.content }}"
    "{%- else %}{%- for content in message.content %}"
    "{%- if content.type == 'image' %}{{- '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif content.type == 'video' %}{{- '<|vision_start|><|video_pad|><|vision_end|>' }}"
    "{%- elif content.type == 'text' %}{{- content.text }}"
    "{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
QUESTION = "What is in these two pictures?"
CHAT = [{"role": "user", "content": [{"type": "image"}, {"type": "image"}, {"type": "text", "text": QUESTION}]}]
IMAGE_SETTINGS = dict(patch_size=8, temporal_patch_size=2, merge_size=2,
                      size={"shortest_edge": 512, "longest_edge": 4096},
                      image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
# The video processor's own budget (over all sampled frames, as Qwen3VLVideoProcessor counts it); fps, min and
# max frames are its defaults (2, 4, 768), cap_pixels_per_frame unset (5.25: uncapped, with a warning).
VIDEO_SETTINGS = dict(patch_size=8, temporal_patch_size=2, merge_size=2,
                      size={"shortest_edge": 512, "longest_edge": 16384},
                      image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5])
# The video: 10 frames of 72 x 40 at 10 fps (1 s), a square moving across a gradient. Every channel takes
# one of 6 levels (216 colours) so that the animated GIF written from it decodes to exactly these frames.
VIDEO_FRAMES, VIDEO_FPS, VIDEO_SIZE = 10, 10.0, (72, 40)
VIDEO_QUESTION = "What happens in this video?"
VIDEO_CHAT = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": VIDEO_QUESTION}]}]
MIXED_QUESTION = "Is the picture in the video?"
MIXED_CHAT = [{"role": "user", "content": [{"type": "image"}, {"type": "video"},
                                           {"type": "text", "text": MIXED_QUESTION}]}]
TWO_VIDEOS_QUESTION = "Are these two videos the same?"
TWO_VIDEOS_CHAT = [{"role": "user", "content": [{"type": "video"}, {"type": "video"},
                                                {"type": "text", "text": TWO_VIDEOS_QUESTION}]}]


def write_json(path: str, obj, indent=2) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=indent, ensure_ascii=False)
        f.write("\n")


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
    write_json(os.path.join(folder, "tokenizer_config.json"), {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "model_max_length": 1024,
        "tokenizer_class": "PreTrainedTokenizerFast",
    })
    with open(os.path.join(folder, "chat_template.jinja"), "w") as f:
        f.write(CHAT_TEMPLATE)


def make_processor(folder: str):
    from transformers import AutoTokenizer
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil
    from transformers.models.qwen3_vl.processing_qwen3_vl import Qwen3VLProcessor
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    tokenizer = AutoTokenizer.from_pretrained(folder)
    # Images through the Pillow processor (what the engine matches for images); videos through the video
    # processor, which is torchvision's on uint8 tensors (bicubic, antialiased) whatever is installed.
    Qwen3VLProcessor.check_argument_for_proper_class = lambda self, name, arg: None
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessorPil(**IMAGE_SETTINGS), tokenizer=tokenizer,
                                 video_processor=Qwen3VLVideoProcessor(**VIDEO_SETTINGS), chat_template=CHAT_TEMPLATE)
    # What the engine reads: preprocessor_config.json and video_preprocessor_config.json.
    processor.image_processor.save_pretrained(folder)
    processor.video_processor.save_pretrained(folder)
    return processor


def make_video(folder: str):
    """The frames (media/video_frames.npy, uint8 [T, H, W, 3]), the same frames as an animated GIF
    (media/moving.gif, 100 ms a frame), and their metadata as a decoder would give it."""
    from PIL import Image
    from transformers.video_utils import VideoMetadata

    media = os.path.join(folder, "media")
    os.makedirs(media, exist_ok=True)
    w, h = VIDEO_SIZE
    x = np.arange(w)[None, :]
    y = np.arange(h)[:, None]
    frames = []
    for t in range(VIDEO_FRAMES):
        r = (x * 6 // w + t) % 6
        g = (y * 6 // h) % 6 + 0 * x
        b = ((x + y + 3 * t) // 9) % 6
        left, top = 4 + 6 * t, 6 + t
        square = (x >= left) & (x < left + 14) & (y >= top) & (y < top + 12)
        rgb = np.stack([np.where(square, 5, r), np.where(square, 0, g), np.where(square, 5 - t % 6, b)], -1)
        frames.append((rgb * 51).astype(np.uint8))
    frames = np.stack(frames)
    np.save(os.path.join(media, "video_frames.npy"), frames)
    gif = os.path.join(media, "moving.gif")
    images = [Image.fromarray(f, "RGB") for f in frames]
    images[0].save(gif, save_all=True, append_images=images[1:], duration=int(1000 / VIDEO_FPS), loop=0,
                   optimize=False)
    decoded = []
    with Image.open(gif) as im:
        for i in range(im.n_frames):
            im.seek(i)
            decoded.append(np.asarray(im.convert("RGB")))
            assert im.info["duration"] == int(1000 / VIDEO_FPS)
    assert np.array_equal(np.stack(decoded), frames), "the GIF does not decode to the frames"
    metadata = VideoMetadata(total_num_frames=VIDEO_FRAMES, fps=VIDEO_FPS, width=w, height=h,
                             duration=VIDEO_FRAMES / VIDEO_FPS)
    return frames, metadata


def make_images(folder: str):
    from PIL import Image

    media = os.path.join(folder, "media")
    os.makedirs(media, exist_ok=True)
    out = []
    for name, (w, h), k in [("wide.png", (90, 50), 3), ("tall.png", (40, 100), 7)]:
        x = np.arange(w)[None, :, None]
        y = np.arange(h)[:, None, None]
        c = np.array([0, 1, 2])[None, None, :]
        rgb = ((x * k * (c == 0) + y * 5 * (c == 1) + (x * y + 11 * c) * (c == 2) + 37 * ((x // 7 + y // 5) % 2))
               % 256).astype(np.uint8)
        Image.fromarray(rgb, "RGB").save(os.path.join(media, name))
        out.append(Image.open(os.path.join(media, name)).convert("RGB"))
    return out


def config():
    from transformers import Qwen3VLConfig

    text = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=3, num_attention_heads=4,
                num_key_value_heads=2, head_dim=32, hidden_act="silu", max_position_embeddings=1024,
                rms_norm_eps=1e-6, tie_word_embeddings=False, attention_bias=False,
                rope_parameters={"rope_type": "default", "rope_theta": 5000000.0, "mrope_section": [6, 5, 5],
                                 "mrope_interleaved": True},
                bos_token_id=None, eos_token_id=ID["<|im_end|>"], pad_token_id=ID["<|endoftext|>"])
    vision = dict(depth=3, hidden_size=32, intermediate_size=64, num_heads=2, hidden_act="gelu_pytorch_tanh",
                  patch_size=8, temporal_patch_size=2, spatial_merge_size=2, in_channels=3, out_hidden_size=64,
                  num_position_embeddings=36, deepstack_visual_indexes=[0, 1])
    return Qwen3VLConfig(text_config=text, vision_config=vision, image_token_id=ID["<|image_pad|>"],
                         video_token_id=ID["<|video_pad|>"], vision_start_token_id=ID["<|vision_start|>"],
                         vision_end_token_id=ID["<|vision_end|>"], tie_word_embeddings=False)


def randomize(model, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if p.ndim == 1:
                # Norm weights around 1, biases around 0 (the vision LayerNorms have both).
                p.copy_((1.0 if name.endswith("norm.weight") or "norm1" in name or "norm2" in name else 0.0)
                        + 0.2 * r if not name.endswith("bias") else 0.1 * r)
            elif "embed_tokens" in name:
                p.copy_(0.5 * r)
            elif "pos_embed" in name:
                p.copy_(0.5 * r)
            elif "lm_head" in name:
                p.copy_(r * 2.0 / p.shape[1] ** 0.5)
            else:
                p.copy_(r / (p[0].numel() ** 0.5))


def gap(logits: np.ndarray) -> float:
    top = np.sort(logits)[-2:]
    return float(top[1] - top[0])


def greedy(model, inputs: dict):
    """Plain greedy loop with the model's cache: no logits processors, eos ignored."""
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


def save_npy(folder: str, name: str, array) -> str:
    array = np.ascontiguousarray(np.asarray(array, dtype=np.float32))
    np.save(os.path.join(folder, name), array)
    return name


def build(out: str, name: str, cfg, cls, seed: int, after_save=None) -> None:
    """The folder `out` for model class `cls` with config `cfg`, and its references; `after_save(folder)` may
    rewrite the saved weights (the reload must then still compute the same outputs)."""
    from transformers import __version__ as tf_version

    OUT = out
    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    make_tokenizer(OUT)
    processor = make_processor(OUT)
    images = make_images(OUT)
    text = processor.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=images, return_tensors="pt")
    print("processor outputs:", {k: tuple(v.shape) for k, v in inputs.items()})
    frames, metadata = make_video(OUT)
    prompts = {"video": (VIDEO_CHAT, 1, dict()), "mixed": (MIXED_CHAT, 1, dict(images=[images[0]])),
               "two_videos": (TWO_VIDEOS_CHAT, 2, dict())}
    video_inputs = {}
    for key, (chat, count, extra) in prompts.items():
        t = processor.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        # A fresh metadata each call: the processor writes the sampled indices into it.
        metas = [type(metadata)(**{k: metadata[k] for k in metadata}) for _ in range(count)]
        got = processor(text=[t], videos=[frames] * count, video_metadata=metas, return_tensors="pt",
                        return_metadata=True, **extra)
        # The processor's own copy, with the indices it sampled.
        meta = got.pop("video_metadata")[0]
        video_inputs[key] = (t, got, meta)
        print(f"{key} processor outputs:", {k: tuple(v.shape) for k, v in got.items()}, "frames", meta.frames_indices)

    for attempt in range(40):
        torch.manual_seed(seed + attempt)
        model = cls(cfg).to(torch.float32).eval()
        randomize(model, seed + attempt)
        model.config._attn_implementation = "eager"
        for sub in (model.model.visual.config, model.model.language_model.config):
            sub._attn_implementation = "eager"
        first, new, gaps = greedy(model, dict(inputs))
        others = [greedy(model, dict(got)) for _, got, _ in video_inputs.values()]
        if all(min(g) >= MIN_GAP and len(set(n)) >= MIN_DISTINCT for _, n, g in [(first, new, gaps)] + others):
            break
        print(f"  attempt {attempt}: min gap {min(min(g) for _, _, g in [(first, new, gaps)] + others):.2e}, "
              f"drawing another")
    else:
        raise RuntimeError("no robust weights")
    model.save_pretrained(OUT)
    if after_save:
        after_save(OUT)

    # Reload as the engine will (from the folder, eager attention) and check the same outputs come back.
    loaded = cls.from_pretrained(OUT, dtype=torch.float32, attn_implementation="eager").eval()
    first2, new2, _ = greedy(loaded, dict(inputs))
    assert new2 == new and np.array_equal(first2, first), "the reloaded folder computes something else"

    with torch.no_grad():
        vision = loaded.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"])
        embeds = torch.cat(list(vision.pooler_output)).numpy()
        deepstack = [torch.cat(list(f)).numpy() for f in getattr(vision, "deepstack_features", None) or []]
        positions, delta = loaded.model.get_rope_index(inputs["input_ids"], inputs["mm_token_type_ids"],
                                                       image_grid_thw=inputs["image_grid_thw"])
    files = {"pixel_values": save_npy(OUT, "pixel_values.npy", inputs["pixel_values"].numpy()),
             "image_embeds": save_npy(OUT, "image_embeds.npy", embeds)}
    for k, f in enumerate(deepstack):
        files[f"deepstack_{k}"] = save_npy(OUT, f"deepstack_{k}.npy", f)
    ids = [int(x) for x in inputs["input_ids"][0]]
    assert ids.count(ID["<|image_pad|>"]) == embeds.shape[0]
    video = {}
    for key, (t, got, meta) in video_inputs.items():
        vfirst, vnew, vgaps = greedy(loaded, dict(got))
        with torch.no_grad():
            features = loaded.model.get_video_features(got["pixel_values_videos"], got["video_grid_thw"])
            vpos, vdelta = loaded.model.get_rope_index(got["input_ids"], got["mm_token_type_ids"],
                                                       image_grid_thw=got.get("image_grid_thw"),
                                                       video_grid_thw=got["video_grid_thw"])
        vids = [int(x) for x in got["input_ids"][0]]
        # The expanded prompt as text: byte-level BPE decodes back to exactly what was tokenized.
        expanded = processor.tokenizer.decode(vids, skip_special_tokens=False)
        assert processor.tokenizer(expanded)["input_ids"] == vids, f"{key}: the expanded text re-tokenizes otherwise"
        entry = {
            "messages": prompts[key][0],
            "text": t,
            "expanded_text": expanded,
            "input_ids": vids,
            "video_grid_thw": [[int(v) for v in row] for row in got["video_grid_thw"]],
            "video_frames": [int(i) for i in meta.frames_indices],
            "video_tokens": vids.count(ID["<|video_pad|>"]),
            "position_ids": [[int(v) for v in axis[0]] for axis in vpos],
            "rope_delta": int(vdelta.reshape(-1)[0]),
            "first_logits": [float(x) for x in vfirst],
            "greedy_ids": vnew,
            "min_gap": min(vgaps),
        }
        if "image_grid_thw" in got:
            entry["image_grid_thw"] = [[int(v) for v in row] for row in got["image_grid_thw"]]
            entry["images"] = ["media/wide.png"]
        if key == "video":
            # The mixed prompt's video is the same video: its pixels and tower rows are these.
            files["pixel_values_videos"] = save_npy(OUT, "pixel_values_videos.npy", got["pixel_values_videos"].numpy())
            files["video_embeds"] = save_npy(OUT, "video_embeds.npy", torch.cat(list(features.pooler_output)).numpy())
            for k, f in enumerate(getattr(features, "deepstack_features", None) or []):
                files[f"video_deepstack_{k}"] = save_npy(OUT, f"video_deepstack_{k}.npy", torch.cat(list(f)).numpy())
            entry["pixel_values_videos_shape"] = list(got["pixel_values_videos"].shape)
        else:
            # The other prompts' videos are the same video: their pixels and tower rows are these.
            one = video_inputs["video"][1]["pixel_values_videos"]
            assert torch.equal(got["pixel_values_videos"], torch.cat([one] * prompts[key][1]))
        video[key] = entry
    reference = {
        "name": name,
        "producer": f"transformers {tf_version}",
        "compute": (f"transformers {tf_version}, torch {torch.__version__} on the CPU, float32, "
                    f"{cls.__name__}(attn_implementation='eager'), forward passes with the "
                    "model's cache (no generate()); processor Qwen3VLProcessor with Qwen2VLImageProcessorPil"),
        "seed": seed,
        "weights_attempt": attempt,
        "messages": CHAT,
        "text": text,
        "images": ["media/wide.png", "media/tall.png"],
        "image_sizes": [list(im.size) for im in images],
        "input_ids": ids,
        "image_grid_thw": [[int(v) for v in row] for row in inputs["image_grid_thw"]],
        "pixel_values_shape": list(inputs["pixel_values"].shape),
        "image_tokens": [int(np.prod(row)) // 4 for row in inputs["image_grid_thw"].tolist()],
        "position_ids": [[int(v) for v in axis[0]] for axis in positions],
        "rope_delta": int(delta.reshape(-1)[0]),
        "first_logits": [float(x) for x in first],
        "steps": STEPS,
        "greedy_ids": new,
        "gaps": gaps,
        "min_gap": min(gaps),
        "files": files,
        # Videos, given to the processor as decoded frames (media/video_frames.npy) with their metadata, so
        # decoding is out of the comparison; media/moving.gif holds the same frames for the engine's own path.
        "video": {"frames_file": "media/video_frames.npy", "gif": "media/moving.gif", "frames": VIDEO_FRAMES,
                  "fps": VIDEO_FPS, "size": list(VIDEO_SIZE), **video},
    }
    write_json(os.path.join(OUT, "reference.json"), reference, indent=1)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"video: grid {video['video']['video_grid_thw']}, {video['video']['video_tokens']} tokens, frames "
          f"{video['video']['video_frames']}, min gaps " + " / ".join(f"{v['min_gap']:.3f}" for v in video.values()))
    print(f"wrote {OUT} ({total / 1e3:.0f} kB): grids {reference['image_grid_thw']}, "
          f"{len(ids)} prompt tokens, rope delta {reference['rope_delta']}, greedy {new}, min gap {min(gaps):.3f}")


def main() -> None:
    from transformers import Qwen3VLForConditionalGeneration

    build(OUT, "qwen3_vl", config(), Qwen3VLForConditionalGeneration, SEED)


if __name__ == "__main__":
    main()
