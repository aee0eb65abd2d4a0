#!/usr/bin/env python3
"""A corpus of JPEGs and audio clips, and what the reference pipeline reads from them.

    apt-get install ffmpeg   # FFmpeg's shared libraries, for torchcodec (Debian 12: FFmpeg 5.1)
    python3 -m venv .venv-ref && .venv-ref/bin/pip install transformers==5.24.0 pillow==13.0.0 \
        soundfile==0.14.0 soxr==1.1.0 numpy torch torchcodec av==18.1.0
    .venv-ref/bin/python tests/reference/make_media_fidelity.py

(transformers 5.24 with Pillow for images; for audio, soundfile + soxr, the loader transformers'
`load_audio` uses for what soundfile reads; torchcodec with FFmpeg, the only loader it has for
M4A/AAC, which soundfile cannot read; PyAV, whose bundled FFmpeg encodes the M4A clips).
Offline and deterministic; CI never runs it, the outputs are committed. Writes
tests/reference/fixtures/media_fidelity/, which crates/engine/tests/media_fidelity.rs checks the
engine against:

- photo_{kind}.jpg: one synthetic photo-like image (smooth shading, texture, hard edges, noise;
  67 x 45, odd sizes so chroma upsampling meets partial blocks) saved by Pillow as baseline
  4:2:0, 4:2:2 and 4:4:4, progressive 4:2:0, greyscale and CMYK (Adobe, inverted, as Pillow and
  Photoshop write it); photo_{kind}.pillow.png: what `Image.open(f).convert("RGB")` gives
  (after `ImageOps.exif_transpose`, as transformers' `load_image`), stored losslessly.
- clip_{rate}_{mono|stereo}.{wav,flac,mp3,m4a}: 0.6 s of tones, a chirp and noise at 8, 22.05,
  44.1 and 48 kHz (WAV 16-bit PCM, FLAC 16-bit, MP3 from libsndfile's LAME at its default
  quality, M4A: AAC-LC from FFmpeg's encoder at its default bitrate, through PyAV);
  clip_*.samples16k.npy: float32 mono at 16 kHz as `transformers.audio_utils.load_audio(path,
  16000)` returns it: for WAV, FLAC and MP3 with backend="soundfile" (soundfile decode, channel
  mean, soxr 'soxr_hq', padded/trimmed to ceil(n * 16000 / rate)); for M4A, which that backend
  refuses, with backend="torchcodec" (FFmpeg's AAC decoder, the encoder's priming dropped per
  the edit list, then libswresample to 16 kHz mono: its own filter, stereo mixed as (L+R)*sqrt(1/2));
  clip_*.features.npy: Gemma4AudioFeatureExtractor's log-mel [frames, 128] of those samples
  (defaults), clip_*.mask.npy its frame mask.
- meta.json: the lists above, with sizes and libraries' versions.
"""

import json
import math
from pathlib import Path

import av
import numpy as np
import PIL
import soundfile as sf
import soxr
import torchcodec
from PIL import Image, ImageOps, features
from transformers import __version__ as transformers_version
from transformers.audio_utils import load_audio
from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
from torchcodec._core import get_ffmpeg_library_versions

OUT = Path(__file__).parent / "fixtures" / "media_fidelity"
RATES = [8000, 22050, 44100, 48000]
SECONDS = 0.6


def photo(width=67, height=45, seed=17) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    r = 128 + 100 * np.sin(x / 7.0) * np.cos(y / 11.0)
    g = 255 * x / width * 0.8 + 30 * np.sin((x + y) / 3.0)
    b = 255 * (1 - y / height) * 0.7 + 40 * np.cos(x * y / 90.0)
    image = np.stack([r, g, b], -1)
    # Hard edges: a saturated disc and a dark bar, where chroma subsampling and upsampling show.
    disc = (x - 40) ** 2 + (y - 20) ** 2 < 12 ** 2
    image[disc] = [230, 20, 60]
    image[30:36, 5:50] = [10, 10, 200]
    image += rng.normal(0, 6, image.shape)
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def make_jpegs() -> list:
    rgb = Image.fromarray(photo(), "RGB")
    kinds = {
        "baseline420": (rgb, {"subsampling": 2}),
        "baseline422": (rgb, {"subsampling": 1}),
        "baseline444": (rgb, {"subsampling": 0}),
        "progressive420": (rgb, {"subsampling": 2, "progressive": True}),
        "grey": (rgb.convert("L"), {}),
        "cmyk": (rgb.convert("CMYK"), {}),
    }
    made = []
    for kind, (image, options) in kinds.items():
        path = OUT / f"photo_{kind}.jpg"
        image.save(path, "JPEG", quality=85, **options)
        with Image.open(path) as opened:
            decoded = ImageOps.exif_transpose(opened).convert("RGB")
            mode = opened.mode
        decoded.save(OUT / f"photo_{kind}.pillow.png")
        made.append({"file": path.name, "pillow_mode": mode, "size": list(decoded.size)})
    return made


def signal(rate: int, channels: int) -> np.ndarray:
    t = np.arange(int(SECONDS * rate)) / rate
    nyquist = rate / 2
    # Tones across the band, including near 16 kHz's Nyquist (7-8 kHz) where resamplers differ.
    tones = [f for f in (220.0, 1000.0, 3100.0, 6900.0, 7700.0, 7950.0, 11000.0) if f < 0.9 * nyquist]
    rng = np.random.default_rng(rate)
    left = sum(0.08 * np.sin(2 * np.pi * f * t + i) for i, f in enumerate(tones))
    left = left + 0.1 * np.sin(2 * np.pi * (200 * t + 0.5 * (0.45 * nyquist - 200) / SECONDS * t * t))
    left = left + 0.02 * rng.standard_normal(len(t))
    if channels == 1:
        return left[:, None]
    right = 0.7 * np.roll(left, 7) + 0.05 * np.sin(2 * np.pi * 500 * t)
    return np.stack([left, right], -1)


def write_m4a(path: Path, data: np.ndarray, rate: int, layout: str) -> None:
    """AAC-LC in an M4A ('ipod') file, FFmpeg's native encoder at its defaults (PyAV)."""
    with av.open(str(path), "w", format="ipod") as out:
        stream = out.add_stream("aac", rate=rate, layout=layout)
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(data.T.astype(np.float32)), format="fltp", layout=layout)
        frame.sample_rate = rate
        frame.pts = 0
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)


def make_clips() -> list:
    extractor = Gemma4AudioFeatureExtractor()
    made = []
    for rate in RATES:
        for channels, layout in [(1, "mono"), (2, "stereo")]:
            data = signal(rate, channels)
            for ext, fmt, subtype in [("wav", "WAV", "PCM_16"), ("flac", "FLAC", "PCM_16"), ("mp3", "MP3", "MPEG_LAYER_III"),
                                      ("m4a", None, None)]:
                name = f"clip_{rate}_{layout}.{ext}"
                if ext == "m4a":
                    write_m4a(OUT / name, data, rate, layout)
                    samples = load_audio(str(OUT / name), sampling_rate=16000, backend="torchcodec")
                else:
                    sf.write(OUT / name, data, rate, format=fmt, subtype=subtype)
                    samples = load_audio(str(OUT / name), sampling_rate=16000, backend="soundfile")
                np.save(OUT / f"{name}.samples16k.npy", samples.astype(np.float32))
                out = extractor([samples], sampling_rate=16000, return_tensors="np")
                np.save(OUT / f"{name}.features.npy", out["input_features"][0].astype(np.float32))
                np.save(OUT / f"{name}.mask.npy", out["input_features_mask"][0].astype(np.float32))
                made.append({"file": name, "rate": rate, "channels": channels, "samples16k": int(len(samples)),
                             "frames": int(out["input_features"].shape[1])})
    return made


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.iterdir():
        old.unlink()
    meta = {
        "producer": f"transformers {transformers_version}, Pillow {PIL.__version__} (libjpeg-turbo "
                    f"{features.version('jpg')}), soundfile {sf.__version__} (libsndfile {sf.__libsndfile_version__}), "
                    f"soxr {soxr.__version__}",
        "m4a_producer": f"PyAV {av.__version__} (libavcodec {'.'.join(map(str, av.library_versions['libavcodec']))}) encodes; "
                        f"torchcodec {torchcodec.__version__.split('+')[0]} with FFmpeg "
                        f"{get_ffmpeg_library_versions()['ffmpeg_version']} decodes",
        "jpegs": make_jpegs(),
        "clips": make_clips(),
    }
    with open(OUT / "meta.json", "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"{len(meta['jpegs'])} JPEGs, {len(meta['clips'])} clips, {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
