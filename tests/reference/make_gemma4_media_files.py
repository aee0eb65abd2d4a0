#!/usr/bin/env python3
"""Reference for the whole media path from files: the committed tiny Gemma 4 checkpoint
(fixtures/tiny/gemma4, from make_gemma4.py) asked about a JPEG photo and a 44.1 kHz stereo clip
from the media corpus (fixtures/media_fidelity, from make_media_fidelity.py), as WAV, MP3 and
M4A, the files read as transformers reads them: `load_image` (Pillow, EXIF transpose, RGB) and
`load_audio`: for WAV and MP3 with backend="soundfile" (libsndfile, which decodes MP3 with
libmpg123; channel mean, soxr 'soxr_hq' to 16 kHz), for M4A, which soundfile refuses, with
backend="torchcodec" (FFmpeg's AAC decoder, priming dropped per the edit list, libswresample to
16 kHz mono); then the processor and the model.

    PYTHONPATH=.deps/media-pydeps /opt/confab-ref/bin/python tests/reference/make_gemma4_media_files.py [wav] [mp3]
    .venv-ref/bin/python tests/reference/make_gemma4_media_files.py m4a

(see make_media_fidelity.py for .deps/media-pydeps, or its venv .venv-ref, which has torch too;
M4A needs that venv's torchcodec and FFmpeg's shared libraries). The image processor is
`Gemma4ImageProcessorPil`, the one transformers uses without torchvision and the one the engine
follows, with the checkpoint's settings (patch 4, pooling 2, max_soft_tokens 70).

Writes fixtures/tiny/gemma4/media_files_reference.json (WAV), media_files_mp3_reference.json
(MP3) and media_files_m4a_reference.json (M4A), all by default, or those named: the chat, the
two files (relative to the repository root), input_ids, image/audio soft-token counts,
first_logits (float32), 16 greedy ids with the KV cache (eos ignored), and the top-1 gaps.
"""

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_gemma4 import CHAT_TEMPLATE, MEDIA_CHAT, gap  # noqa: E402

FOLDER = os.path.join(HERE, "fixtures", "tiny", "gemma4")
ROOT = os.path.dirname(os.path.dirname(HERE))
IMAGE = "tests/reference/fixtures/media_fidelity/photo_baseline420.jpg"
CLIPS = {
    "wav": ("tests/reference/fixtures/media_fidelity/clip_44100_stereo.wav", "media_files_reference.json"),
    "mp3": ("tests/reference/fixtures/media_fidelity/clip_44100_stereo.mp3", "media_files_mp3_reference.json"),
    "m4a": ("tests/reference/fixtures/media_fidelity/clip_44100_stereo.m4a", "media_files_m4a_reference.json"),
}
# load_audio's soundfile backend refuses M4A; torchcodec (FFmpeg) is the loader transformers has for it.
BACKENDS = {"wav": "soundfile", "mp3": "soundfile", "m4a": "torchcodec"}
STEPS = 16


def main() -> None:
    for kind in sys.argv[1:] or list(CLIPS):
        reference(*CLIPS[kind], BACKENDS[kind])


def reference(audio: str, output: str, backend: str) -> None:
    from transformers import AutoTokenizer, Gemma4ForConditionalGeneration, Gemma4Processor, __version__
    from transformers.audio_utils import load_audio
    from transformers.image_utils import load_image
    from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
    from transformers.models.gemma4.image_processing_pil_gemma4 import Gemma4ImageProcessorPil

    torch.set_num_threads(2)
    # Without torchvision there is no Gemma4VideoProcessor class to check against; no video here.
    Gemma4Processor.check_argument_for_proper_class = lambda self, name, arg: None
    processor = Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(),
        image_processor=Gemma4ImageProcessorPil(patch_size=4, pooling_kernel_size=2, max_soft_tokens=70),
        tokenizer=AutoTokenizer.from_pretrained(FOLDER),
        video_processor=None,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=70,
    )
    model = Gemma4ForConditionalGeneration.from_pretrained(FOLDER, dtype=torch.float32, attn_implementation="eager")
    model.eval()

    image = load_image(os.path.join(ROOT, IMAGE))
    clip = load_audio(os.path.join(ROOT, audio), sampling_rate=16000, backend=backend)
    text = processor.apply_chat_template(MEDIA_CHAT, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=[image], audio=[clip], return_tensors="pt")

    new, gaps = [], []
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
        first = out.logits[0, -1].float().numpy().copy()
        for _ in range(STEPS):
            logits = out.logits[0, -1].float().numpy()
            gaps.append(gap(logits))
            new.append(int(logits.argmax()))
            out = model(input_ids=torch.tensor([[new[-1]]]), cache=out.cache, use_cache=True)

    ids = inputs["input_ids"][0]
    ref = {"producer": f"transformers {__version__}", "messages": MEDIA_CHAT, "image": IMAGE, "audio": audio,
           "input_ids": [int(x) for x in ids],
           "image_tokens": int((ids == model.config.image_token_id).sum()),
           "audio_tokens": int((ids == model.config.audio_token_id).sum()),
           "first_logits": [float(x) for x in first], "steps": STEPS, "greedy_ids": new, "gaps": gaps,
           "min_gap": min(gaps)}
    with open(os.path.join(FOLDER, output), "w") as f:
        json.dump(ref, f, indent=2)
        f.write("\n")
    print(f"{output}: {len(ids)} prompt ids, {ref['image_tokens']} image and {ref['audio_tokens']} audio soft tokens, "
          f"min gap {min(gaps):.4f}, greedy {new}")


if __name__ == "__main__":
    main()
