#!/usr/bin/env python3
"""A tiny random Qwen3-VL-MoE checkpoint with float32 references for the image path.

    /opt/confab-ref/bin/python tests/reference/make_qwen3_vl_moe.py

The same venv, tokenizer, processor settings, images, chat, tower and references as make_qwen3_vl.py (whose
`build` this calls), on Qwen3VLMoeForConditionalGeneration (model_type qwen3_vl_moe, text qwen3_vl_moe_text):
3 layers, every one a sparse MoE block (decoder_sparse_step 1): a softmax router over 4 experts, top 2,
renormalised, experts of width 24, no shared expert. The experts are stored fused in the released layout,
mlp.experts.gate_up_proj [E, hidden, 2 x width] and mlp.experts.down_proj [E, width, hidden] (transformers
transposes both when it loads them). Writes fixtures/tiny/qwen3_vl_moe in a few seconds.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_qwen3_vl import ID, SEED, VOCAB, build, config as dense_config  # noqa: E402

OUT = os.path.join(HERE, "fixtures", "tiny", "qwen3_vl_moe")


def config():
    from transformers import Qwen3VLMoeConfig

    dense = dense_config()
    text = dense.text_config.to_dict()
    for k in ["model_type", "transformers_version", "architectures", "dtype"]:
        text.pop(k, None)
    text.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=24, decoder_sparse_step=1,
                mlp_only_layers=[])
    vision = dense.vision_config.to_dict()
    for k in ["model_type", "transformers_version", "architectures", "dtype"]:
        vision.pop(k, None)
    return Qwen3VLMoeConfig(text_config=text, vision_config=vision, image_token_id=ID["<|image_pad|>"],
                            video_token_id=ID["<|video_pad|>"], vision_start_token_id=ID["<|vision_start|>"],
                            vision_end_token_id=ID["<|vision_end|>"], tie_word_embeddings=False)


def released_layout(folder: str) -> None:
    """Experts as the released checkpoints store them: both fused tensors transposed in their last two axes."""
    import torch
    from safetensors.torch import load_file, save_file

    path = os.path.join(folder, "model.safetensors")
    w = load_file(path)
    for k in list(w):
        if k.endswith("mlp.experts.gate_up_proj") or k.endswith("mlp.experts.down_proj"):
            w[k] = w[k].transpose(1, 2).contiguous()
    save_file(dict(sorted(w.items())), path, metadata={"format": "pt"})
    del torch


def main() -> None:
    from transformers import Qwen3VLMoeForConditionalGeneration

    assert VOCAB == 400
    build(OUT, "qwen3_vl_moe", config(), Qwen3VLMoeForConditionalGeneration, SEED + 100, released_layout)


if __name__ == "__main__":
    main()
