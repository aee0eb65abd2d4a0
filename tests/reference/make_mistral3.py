#!/usr/bin/env python3
"""A tiny random Mistral 3 checkpoint (Mistral3ForConditionalGeneration: a Mistral text model and the Pixtral
vision tower) with float32 references for the text-only and the image path.

    /opt/confab-ref/bin/python tests/reference/make_mistral3.py

Needs the reference venv (transformers 5.25.0, torch on the CPU, tokenizers, safetensors, numpy, Pillow). Works
offline: the model is built from a config, the tokenizer is trained on make_tiny_models.CORPUS. CI never runs
this; the outputs are committed. It deletes and rewrites only fixtures/tiny/mistral3 and takes a few seconds.

What it makes (a Hugging Face folder, laid out as transformers 5 saves Mistral Small 3.1):

  Mistral3ForConditionalGeneration (model_type mistral3), text_config mistral + vision_config pixtral:
  - text: vocab 400, hidden 64, 3 layers, 4 heads, 2 kv heads, head_dim 24 (heads x head_dim != hidden),
    MLP 112, rope_theta 1e6, untied lm_head;
  - vision: 3 layers, hidden 40, 2 heads (head_dim 20: 5 row and 5 column frequencies), MLP 56, silu (as the
    released towers), patch 4; spatial_merge_size 2, vision_feature_layer -1, projector gelu without biases;
  - tokenizer: byte-level BPE with Mistral's specials <unk> <s> </s> [INST] [/INST] [IMG] [IMG_BREAK]
    [IMG_END] (ids 0..7) and a chat template that writes [IMG] for an image part, as Mistral's does;
  - processor: PixtralProcessor (patch 4, merge 2) with PixtralImageProcessorPil, longest_edge 48, CLIP
    mean/std, bicubic.

The image: media/photo.jpg (67 x 45, a 4:2:0 baseline JPEG from fixtures/media_fidelity, decoded by Pillow):
longest_edge 48 shrinks it to 47 x 32, rounded up to whole 8-pixel blocks: 48 x 32; 6 x 4 merged tokens, each
row closed by [IMG_BREAK], the last by [IMG_END].

References (reference.json + .npy), from the forward pass in float32 with eager attention:
  - text: the chat [user: text] ids, first-step logits, 16 greedy ids;
  - image: the chat [user: image, text] through the processor: input_ids, image_sizes, pixel_values.npy
    (the resized image, [3, 32, 48]), image_embeds.npy (projector rows), first logits, 16 greedy ids.
Weights are re-drawn (seed + attempt) until every greedy step's top-2 logit gap is >= 1e-2 and the ids are not
one token repeated, for both chats.
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

OUT = os.path.join(HERE, "fixtures", "tiny", "mistral3")
PHOTO = os.path.join(HERE, "fixtures", "media_fidelity", "photo_baseline420.jpg")
SEED = 41203
STEPS = 16
VOCAB = 400
SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[IMG]", "[IMG_BREAK]", "[IMG_END]"]
ID = {s: i for i, s in enumerate(SPECIALS)}
# Mistral Small 3.1's template, reduced to what these fixtures use.
CHAT_TEMPLATE = (
    "{{- bos_token }}"
    "{%- for message in messages %}"
    "{%- if message.role == 'user' %}{{- '[INST]' }}"
    "{%- if message.content is string %}{{- message.content }}"
    "{%- else %}{%- for block in message.content %}"
    "{%- if block.type == 'text' %}{{- block.text }}"
    "{%- elif block.type == 'image' or block.type == 'image_url' %}{{- '[IMG]' }}"
    "{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '[/INST]' }}"
    "{%- elif message.role == 'assistant' %}{{- message.content + eos_token }}"
    "{%- endif %}"
    "{%- endfor %}"
)
TEXT_QUESTION = "Tell me about the weather."
IMAGE_QUESTION = "What is in this picture?"
TEXT_CHAT = [{"role": "user", "content": [{"type": "text", "text": TEXT_QUESTION}]}]
IMAGE_CHAT = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": IMAGE_QUESTION}]}]
TWO_QUESTION = "Which picture is brighter?"
TWO_CHAT = [{"role": "user", "content": [{"type": "image"}, {"type": "image"}, {"type": "text", "text": TWO_QUESTION}]}]
# The second image: 20 x 37, under longest_edge, so only rounded up (stretched) to 24 x 40.
TALL_SIZE = (20, 37)
PATCH, MERGE, LONGEST = 4, 2, 48


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
        "add_eos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added,
        "bos_token": "<s>",
        "clean_up_tokenization_spaces": False,
        "eos_token": "</s>",
        "pad_token": "<unk>",
        "unk_token": "<unk>",
        "model_max_length": 1024,
        "tokenizer_class": "PreTrainedTokenizerFast",
    })
    with open(os.path.join(folder, "chat_template.jinja"), "w") as f:
        f.write(CHAT_TEMPLATE)


def make_processor(folder: str):
    from transformers import AutoTokenizer
    from transformers.models.pixtral.image_processing_pil_pixtral import PixtralImageProcessorPil
    from transformers.models.pixtral.processing_pixtral import PixtralProcessor

    tokenizer = AutoTokenizer.from_pretrained(folder)
    PixtralProcessor.check_argument_for_proper_class = lambda self, name, arg: None
    image_processor = PixtralImageProcessorPil(size={"longest_edge": LONGEST}, patch_size={"height": PATCH, "width": PATCH})
    processor = PixtralProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH,
                                 spatial_merge_size=MERGE, chat_template=CHAT_TEMPLATE)
    processor.save_pretrained(folder)
    return processor


def config():
    from transformers import Mistral3Config

    text = dict(model_type="mistral", vocab_size=VOCAB, hidden_size=64, intermediate_size=112, num_hidden_layers=3,
                num_attention_heads=4, num_key_value_heads=2, head_dim=24, hidden_act="silu",
                max_position_embeddings=1024, rms_norm_eps=1e-5, tie_word_embeddings=False, sliding_window=None,
                rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                bos_token_id=ID["<s>"], eos_token_id=ID["</s>"], pad_token_id=None)
    vision = dict(model_type="pixtral", hidden_size=40, intermediate_size=56, num_hidden_layers=3,
                  num_attention_heads=2, head_dim=20, num_channels=3, image_size=64, patch_size=PATCH,
                  hidden_act="silu", rope_parameters={"rope_type": "axial", "rope_theta": 10000.0})
    return Mistral3Config(text_config=text, vision_config=vision, image_token_index=ID["[IMG]"],
                          spatial_merge_size=MERGE, vision_feature_layer=-1, projector_hidden_act="gelu",
                          multimodal_projector_bias=False, tie_word_embeddings=False)


def randomize(model, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            r = torch.randn(p.shape, generator=g, dtype=torch.float32)
            if p.ndim == 1:
                p.copy_(1.0 + 0.2 * r if "norm" in name else 0.1 * r)
            elif "embed_tokens" in name:
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


def make_tall(path: str) -> None:
    from PIL import Image

    w, h = TALL_SIZE
    x = np.arange(w)[None, :, None]
    y = np.arange(h)[:, None, None]
    c = np.array([0, 1, 2])[None, None, :]
    rgb = ((x * 11 * (c == 0) + y * 7 * (c == 1) + (x * y + 29 * c) * (c == 2) + 41 * ((x // 3 + y // 4) % 2))
           % 256).astype(np.uint8)
    Image.fromarray(rgb, "RGB").save(path)


def main() -> None:
    from PIL import Image
    from transformers import Mistral3ForConditionalGeneration, __version__ as tf_version

    if os.path.exists(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "media"))
    make_tokenizer(OUT)
    processor = make_processor(OUT)
    shutil.copyfile(PHOTO, os.path.join(OUT, "media", "photo.jpg"))
    image = Image.open(os.path.join(OUT, "media", "photo.jpg")).convert("RGB")
    make_tall(os.path.join(OUT, "media", "tall.png"))
    tall = Image.open(os.path.join(OUT, "media", "tall.png")).convert("RGB")

    text_prompt = processor.apply_chat_template(TEXT_CHAT, tokenize=False)
    text_inputs = dict(processor(text=[text_prompt], return_tensors="pt"))
    image_prompt = processor.apply_chat_template(IMAGE_CHAT, tokenize=False)
    image_inputs = dict(processor(text=[image_prompt], images=[image], return_tensors="pt"))
    print("processor outputs:", {k: tuple(v.shape) for k, v in image_inputs.items()})
    two_prompt = processor.apply_chat_template(TWO_CHAT, tokenize=False)
    two_inputs = dict(processor(text=[two_prompt], images=[image, tall], return_tensors="pt"))
    print("two-image processor outputs:", {k: tuple(v.shape) for k, v in two_inputs.items()})
    for inputs in (text_inputs, image_inputs, two_inputs):
        inputs.pop("attention_mask", None)

    cfg = config()
    for attempt in range(40):
        torch.manual_seed(SEED + attempt)
        model = Mistral3ForConditionalGeneration(cfg).to(torch.float32).eval()
        randomize(model, SEED + attempt)
        model.config._attn_implementation = "eager"
        for sub in (model.model.vision_tower.config, model.model.language_model.config):
            sub._attn_implementation = "eager"
        runs = [greedy(model, dict(text_inputs)), greedy(model, dict(image_inputs)), greedy(model, dict(two_inputs))]
        if all(min(g) >= MIN_GAP and len(set(n)) >= MIN_DISTINCT for _, n, g in runs):
            break
        print(f"  attempt {attempt}: min gap {min(min(g) for _, _, g in runs):.2e}, drawing another")
    else:
        raise RuntimeError("no robust weights")
    model.save_pretrained(OUT)

    loaded = Mistral3ForConditionalGeneration.from_pretrained(OUT, dtype=torch.float32,
                                                              attn_implementation="eager").eval()
    (text_first, text_new, text_gaps), (first, new, gaps) = greedy(loaded, dict(text_inputs)), greedy(loaded, dict(image_inputs))
    two_first, two_new, two_gaps = greedy(loaded, dict(two_inputs))
    assert new == runs[1][1] and np.array_equal(first, runs[1][0]), "the reloaded folder computes something else"
    with torch.no_grad():
        features = loaded.model.get_image_features(image_inputs["pixel_values"], image_inputs["image_sizes"])
        embeds = torch.cat(list(features.pooler_output)).numpy()
    ids = [int(x) for x in image_inputs["input_ids"][0]]
    assert ids.count(ID["[IMG]"]) == embeds.shape[0]
    files = {"pixel_values": save_npy(OUT, "pixel_values.npy", image_inputs["pixel_values"][0].numpy()),
             "image_embeds": save_npy(OUT, "image_embeds.npy", embeds)}
    reference = {
        "name": "mistral3",
        "producer": f"transformers {tf_version}",
        "compute": (f"transformers {tf_version}, torch {torch.__version__} on the CPU, float32, "
                    "Mistral3ForConditionalGeneration(attn_implementation='eager'), forward passes with the model's "
                    "cache (no generate()); PixtralProcessor with PixtralImageProcessorPil"),
        "seed": SEED,
        "weights_attempt": attempt,
        "steps": STEPS,
        "text": {
            "messages": TEXT_CHAT,
            "prompt": text_prompt,
            "input_ids": [int(x) for x in text_inputs["input_ids"][0]],
            "first_logits": [float(x) for x in text_first],
            "greedy_ids": text_new,
            "min_gap": min(text_gaps),
        },
        "image": {
            "messages": IMAGE_CHAT,
            "prompt": image_prompt,
            "images": ["media/photo.jpg"],
            "image_size": list(image.size),
            "image_sizes": [[int(v) for v in row] for row in image_inputs["image_sizes"]],
            "input_ids": ids,
            "image_tokens": embeds.shape[0],
            "first_logits": [float(x) for x in first],
            "greedy_ids": new,
            "min_gap": min(gaps),
        },
        # Two images in one prompt: the processor pads them to one batch and the tower attends
        # within each (block-diagonal mask); the engine runs each image alone.
        "two_images": {
            "messages": TWO_CHAT,
            "prompt": two_prompt,
            "images": ["media/photo.jpg", "media/tall.png"],
            "image_sizes": [[int(v) for v in row] for row in two_inputs["image_sizes"]],
            "input_ids": [int(x) for x in two_inputs["input_ids"][0]],
            "first_logits": [float(x) for x in two_first],
            "greedy_ids": two_new,
            "min_gap": min(two_gaps),
        },
        "files": files,
    }
    write_json(os.path.join(OUT, "reference.json"), reference, indent=1)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {OUT} ({total / 1e3:.0f} kB): image sizes {reference['image']['image_sizes']}, "
          f"{len(ids)} prompt tokens, greedy {new} / {text_new}, min gaps {min(gaps):.3f} / {min(text_gaps):.3f}")


if __name__ == "__main__":
    main()
