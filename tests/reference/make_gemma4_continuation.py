#!/usr/bin/env python3
"""Reference for continuing a reply cut short in a chat with an image: the token ids transformers'
Gemma 4 processor gives for `apply_chat_template(..., continue_final_message=True)` (the chat
rendered without a generation prompt, cut right after the final message's text, then each
<|image|> expanded to the image's soft tokens), on the committed tiny Gemma 4 checkpoint's
tokenizer, template and processor settings (tests/reference/fixtures/tiny/gemma4).

    PYTHONPATH=/tmp/pil .deps/bench/venv/bin/python tests/reference/make_gemma4_continuation.py

Needs transformers (5.24) with its tokenizers, numpy and Pillow; no torch: the image processor is
the Pillow one (Gemma4ImageProcessorPil, which sizes images as the torchvision one does; only the
soft-token count matters here), and the video processor, which needs torchvision, is left out (no
video here). The bench venv has all but Pillow:
    .deps/bench/venv/bin/python -m pip install --target /tmp/pil pillow
Writes fixtures/tiny/gemma4/continuation_reference.json: for each case, the messages (a message
with the image has a content list: the image, then the text), the rendered continuation text, its
ids (`continue_ids`), and the ids of the same chat without its final message with the generation
prompt (`reply_prompt_ids`: where the reply being continued began).
"""

import json
import os
import re

FOLDER = os.path.join(os.path.dirname(__file__), "fixtures", "tiny", "gemma4")
IMAGE = "media/gradient.png"


def user_with_image(text: str) -> dict:
    return {"role": "user", "content": [{"type": "image", "image": os.path.join(FOLDER, IMAGE)}, {"type": "text", "text": text}]}


CASES = {
    # The reply stopped after a space: the template trims it, and so does the cut.
    "cut_short": [user_with_image("What do you see?"), {"role": "assistant", "content": "A gradient of "}],
    # The image in an earlier turn, a system prompt, and the second reply cut short.
    "second_turn": [
        {"role": "system", "content": "Be brief."},
        user_with_image("What do you see?"),
        {"role": "assistant", "content": "A gradient."},
        {"role": "user", "content": "And the colours?"},
        {"role": "assistant", "content": "Blue, then"},
    ],
}


def processor():
    from transformers import AutoTokenizer
    from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
    from transformers.models.gemma4.image_processing_pil_gemma4 import Gemma4ImageProcessorPil
    from transformers.models.gemma4.processing_gemma4 import Gemma4Processor

    with open(os.path.join(FOLDER, "processor_config.json")) as f:
        config = json.load(f)
    settings = lambda part, kind: {k: v for k, v in config[part].items() if k != kind}
    images = Gemma4ImageProcessorPil(**settings("image_processor", "image_processor_type"))
    audio = Gemma4AudioFeatureExtractor(**settings("feature_extractor", "feature_extractor_type"))
    # Without torchvision there is no video processor; the class check would refuse None.
    check = Gemma4Processor.check_argument_for_proper_class
    Gemma4Processor.check_argument_for_proper_class = lambda self, name, arg: None if name == "video_processor" else check(self, name, arg)
    with open(os.path.join(FOLDER, "chat_template.jinja")) as f:
        template = f.read()
    return Gemma4Processor(
        feature_extractor=audio, image_processor=images, tokenizer=AutoTokenizer.from_pretrained(FOLDER),
        video_processor=None, chat_template=template, image_seq_length=config["image_seq_length"],
        audio_seq_length=config["audio_seq_length"], audio_ms_per_token=config["audio_ms_per_token"])


def ids(processor, messages, **options) -> list:
    out = processor.apply_chat_template(messages, tokenize=True, return_dict=True, return_tensors="np", **options)
    return [int(i) for i in out["input_ids"][0]]


def main() -> None:
    from transformers import __version__

    p = processor()
    cases = {}
    for name, messages in CASES.items():
        text = p.apply_chat_template(messages, continue_final_message=True, tokenize=False)
        cases[name] = {
            "messages": [strip_paths(m) for m in messages],
            "text": text,
            "continue_ids": ids(p, messages, continue_final_message=True),
            "reply_prompt_ids": ids(p, messages[:-1], add_generation_prompt=True),
        }
        print(name, repr(text), len(cases[name]["continue_ids"]))
    ref = {"producer": f"transformers {__version__}", "image": IMAGE, "image_token": p.image_token_id, "cases": cases}
    # Id lists on one line each.
    text = re.sub(r"\[\s*(\d+(?:,\s*\d+)*)\s*\]", lambda m: "[" + re.sub(r"\s+", " ", m.group(1)) + "]", json.dumps(ref, indent=1))
    with open(os.path.join(FOLDER, "continuation_reference.json"), "w") as f:
        f.write(text + "\n")


def strip_paths(message: dict) -> dict:
    """The message as committed: the image part without this machine's path."""
    if isinstance(message["content"], str):
        return message
    return {**message, "content": [{k: v for k, v in part.items() if k != "image"} for part in message["content"]]}


if __name__ == "__main__":
    main()
