"""Reference fixtures for Gemma 4 preprocessing: images, audio clips and prompt expansion.

Run with the reference venv; everything is built offline (no hub):

    /opt/confab-ref/bin/python tests/reference/make_gemma4_preprocess.py

Needs Pillow (`pip install pillow`): transformers' `Gemma4ImageProcessorPil` is the image
processor without torchvision. (With torchvision, AutoImageProcessor picks `Gemma4ImageProcessor`,
whose resize is torch's antialiased bicubic on float32 rounded back to uint8; the script also
records how far that one is from PIL's, as `torch_vs_pil_max_abs`.)

Writes tests/reference/fixtures/gemma4_preprocess/, which crates/engine/tests/gemma4_preprocess.rs
checks the engine against:

- image_{a,b,c}.png: three generated images of different sizes and aspect ratios.
- image_{x}.pixel_values.npy: float32 [patches, 4*4*3], the real (unpadded) patches with a small
  config (patch_size 4, max_soft_tokens 70, pooling 3) so that every value fits in the fixture.
- image_{x}.position_ids.npy: float32 [630, 2], the same config's position ids, padding included.
- image_a.default_rows.npy: float32 [rows, 768], every 100th patch of image_a with the default
  config (the whole array would be 2520 x 768 floats); the row indices are in meta.json.
- chirp_1s.wav, chirp_2500ms.wav: 16 kHz 16-bit mono chirps.
- chirp_{x}.features.npy: float32 [frames, 128] log-mel; chirp_{x}.mask.npy: float32 [frames].
- chirp_1s.{htk,plain}.features.npy: float32 [frames, 64], the 1 s clip through two non-default
  extractor configs (pre-emphasis of both flavours, scale, floor, per-bin normalisation), whose
  settings are in meta.json as a processor config would hold them.
- resized_{filter}.png: image_c resized by Pillow with each filter (to 45 x 44: one side
  shrinks, the other grows), to check our copy of Pillow's resampling beyond bicubic.
- tokenizer.json, tokenizer_config.json: a tiny BPE with the Gemma 4 special tokens.
- meta.json: the configs, shapes, soft-token counts and the expanded prompt's ids.
"""

import json
import math
import wave
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from tokenizers import Tokenizer, models, normalizers, decoders, trainers
from transformers import PreTrainedTokenizerFast
from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
from transformers.models.gemma4.image_processing_pil_gemma4 import (
    Gemma4ImageProcessorPil,
    get_aspect_ratio_preserving_size,
)
from transformers.models.gemma4.processing_gemma4 import Gemma4Processor

OUT = Path(__file__).parent / "fixtures" / "gemma4_preprocess"
SMALL = {"patch_size": 4, "max_soft_tokens": 70, "pooling_kernel_size": 3}
DEFAULT_ROW_STEP = 100

MEDIA_TOKENS = {
    "image_token": "<|image|>",
    "boi_token": "<|image>",
    "eoi_token": "<image|>",
    "audio_token": "<|audio|>",
    "boa_token": "<|audio>",
    "eoa_token": "<audio|>",
}


def make_images():
    """Smooth gradients, a disc, stripes and mild noise: enough structure to show resampling."""
    rng = np.random.RandomState(4)
    images = {}
    for name, (h, w) in {"a": (100, 160), "b": (90, 50), "c": (37, 301)}.items():
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        r = 255 * x / max(w - 1, 1)
        g = 255 * y / max(h - 1, 1)
        b = 127.5 + 127.5 * np.sin(x / 3.0) * np.cos(y / 5.0)
        disc = (x - w / 3) ** 2 + (y - h / 2) ** 2 < (min(h, w) / 4) ** 2
        r[disc], g[disc], b[disc] = 250, 20, 30
        stripes = (x.astype(int) // 3) % 2 == 0
        g[stripes & (y > 2 * h / 3)] = 0
        pixels = np.stack([r, g, b], axis=-1) + rng.normal(0, 6, (h, w, 3))
        images[name] = Image.fromarray(np.clip(np.round(pixels), 0, 255).astype(np.uint8), "RGB")
    return images


def chirp(seconds, rate=16000):
    """A 100 Hz -> 6 kHz linear chirp with a quiet start and end, as 16-bit PCM."""
    t = np.arange(int(round(seconds * rate))) / rate
    f0, f1 = 100.0, 6000.0
    phase = 2 * np.pi * (f0 * t + (f1 - f0) * t**2 / (2 * seconds))
    envelope = np.minimum(1.0, np.minimum(t, seconds - t) / 0.05)
    return np.round(0.6 * envelope * np.sin(phase) * 32767).astype(np.int16)


def write_wav(path, pcm, rate=16000):
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1)
        f.setsampwidth(2)
        f.setframerate(rate)
        f.writeframes(pcm.tobytes())


def make_tokenizer():
    corpus = [
        "Describe the first picture and the second picture, then what you hear in the clip.",
        "The quick brown fox jumps over the lazy dog. What is in this image? Listen to this audio.",
        "user model system Hello world, how are you today? Compare them.",
    ] * 4
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=False))
    tok.normalizer = normalizers.Replace(" ", "\u2581")
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.Fuse()])
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<|turn>", "<turn|>", *MEDIA_TOKENS.values(), "<|video|>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        unk_token="<unk>",
        add_bos_token=False,
        extra_special_tokens=dict(MEDIA_TOKENS),
    )


def save_npy(name, array):
    np.save(OUT / name, np.ascontiguousarray(array, dtype=np.float32))


def torch_resize_u8(image: Image.Image, size):
    """What torchvision's v2 resize does for a uint8 image with bicubic + antialias."""
    x = torch.from_numpy(np.asarray(image)).permute(2, 0, 1)[None].float()
    y = torch.nn.functional.interpolate(x, size=size, mode="bicubic", antialias=True, align_corners=False)
    return y.round().clamp(0, 255).to(torch.uint8)[0].permute(1, 2, 0).numpy()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"small_config": SMALL, "images": {}, "audio": {}}

    images = make_images()
    small = Gemma4ImageProcessorPil(**SMALL)
    default = Gemma4ImageProcessorPil()
    for name, image in images.items():
        image.save(OUT / f"image_{name}.png")
        image = Image.open(OUT / f"image_{name}.png").convert("RGB")
        out = small(image, return_tensors="np")
        n = int(out["num_soft_tokens_per_image"][0]) * SMALL["pooling_kernel_size"] ** 2
        save_npy(f"image_{name}.pixel_values.npy", out["pixel_values"][0, :n])
        save_npy(f"image_{name}.position_ids.npy", out["image_position_ids"][0])
        full = default(image, return_tensors="np")
        size = get_aspect_ratio_preserving_size(image.height, image.width, 16, 280 * 9, 3)
        entry = {
            "height": image.height,
            "width": image.width,
            "small": {
                "pixel_values_shape": list(out["pixel_values"].shape),
                "num_soft_tokens": int(out["num_soft_tokens_per_image"][0]),
                "resized": list(get_aspect_ratio_preserving_size(image.height, image.width, 4, 630, 3)),
            },
            "default": {
                "pixel_values_shape": list(full["pixel_values"].shape),
                "num_soft_tokens": int(full["num_soft_tokens_per_image"][0]),
                "real_patches": int((full["image_position_ids"][0, :, 0] >= 0).sum()),
                "resized": list(size),
            },
        }
        # How far torchvision's resize (the default backend where it is installed) is from PIL's.
        pil = np.asarray(image.resize(size[::-1], Image.BICUBIC)).astype(np.int32)
        entry["default"]["torch_vs_pil_max_abs"] = float(np.abs(torch_resize_u8(image, size) - pil).max()) / 255
        if name == "a":
            rows = list(range(0, entry["default"]["real_patches"], DEFAULT_ROW_STEP))
            save_npy("image_a.default_rows.npy", full["pixel_values"][0, rows])
            entry["default"]["rows"] = rows
        meta["images"][name] = entry

    extractor = Gemma4AudioFeatureExtractor()
    clips = {}
    for name, seconds in {"1s": 1.0, "2500ms": 2.5}.items():
        pcm = chirp(seconds)
        write_wav(OUT / f"chirp_{name}.wav", pcm)
        samples = pcm.astype(np.float32) / 32768.0
        clips[name] = samples
        out = extractor([samples], return_tensors="np")
        save_npy(f"chirp_{name}.features.npy", out["input_features"][0])
        save_npy(f"chirp_{name}.mask.npy", out["input_features_mask"][0])
        meta["audio"][name] = {
            "samples": len(samples),
            "features_shape": list(out["input_features"][0].shape),
            "valid_frames": int(out["input_features_mask"][0].sum()),
        }

    for flavour, htk in {"htk": True, "plain": False}.items():
        config = {
            "feature_size": 64,
            "frame_length_ms": 25.0,
            "hop_length_ms": 10.0,
            "min_frequency": 60.0,
            "max_frequency": 7600.0,
            "preemphasis": 0.97,
            "preemphasis_htk_flavor": htk,
            "input_scale_factor": 0.8,
            "mel_floor": 1e-5,
            "per_bin_mean": np.linspace(-2.0, 1.0, 64).tolist(),
            "per_bin_stddev": np.linspace(0.5, 2.0, 64).tolist(),
        }
        out = Gemma4AudioFeatureExtractor(**config)([clips["1s"]], return_tensors="np")
        save_npy(f"chirp_1s.{flavour}.features.npy", out["input_features"][0])
        meta["audio"][f"1s.{flavour}"] = {"config": config, "features_shape": list(out["input_features"][0].shape)}

    filters = {"box": Image.BOX, "bilinear": Image.BILINEAR, "hamming": Image.HAMMING,
               "bicubic": Image.BICUBIC, "lanczos": Image.LANCZOS}
    for name, number in filters.items():
        images["c"].resize((45, 44), number).save(OUT / f"resized_{name}.png")
    meta["resized"] = {"source": "image_c.png", "width": 45, "height": 44,
                       "filters": {name: int(number) for name, number in filters.items()}}

    tokenizer = make_tokenizer()
    tokenizer.save_pretrained(OUT)
    # Without torchvision there is no Gemma4VideoProcessor class to check against; videos are
    # not used here, so the class check is skipped.
    Gemma4Processor.check_argument_for_proper_class = lambda self, name, arg: None
    processor = Gemma4Processor(
        feature_extractor=extractor, image_processor=default, tokenizer=tokenizer, video_processor=None
    )
    prompt = (
        "<bos><|turn>user\nCompare <|image|> with <|image|>, then describe the clip: <|audio|>"
        " What do you hear?<turn|>\n<|turn>model\n"
    )
    batch = processor(
        text=prompt,
        images=[[images["a"], images["c"]]],
        audio=[clips["2500ms"]],
        return_tensors="np",
    )
    meta["prompt"] = {
        "text": prompt,
        "images": ["a", "c"],
        "audio": ["2500ms"],
        "input_ids": batch["input_ids"][0].tolist(),
        "num_soft_tokens_per_image": [int(n) for n in processor.image_processor(
            [images["a"], images["c"]], return_tensors="np")["num_soft_tokens_per_image"]],
        "num_audio_tokens": processor._get_num_multimodal_tokens(audio_lengths=[len(clips["2500ms"])])[
            "num_audio_tokens"
        ],
        "token_ids": {k: tokenizer.convert_tokens_to_ids(v) for k, v in MEDIA_TOKENS.items()},
    }
    (OUT / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {OUT} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
