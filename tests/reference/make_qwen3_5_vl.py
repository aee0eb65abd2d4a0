#!/usr/bin/env python3
"""A tiny random Qwen3.5 checkpoint with its vision tower and float32 references for the image and video paths.

    /opt/confab-ref/bin/python tests/reference/make_qwen3_5_vl.py

The same venv, tokenizer, processor settings, images, chat and references as make_qwen3_vl.py (whose
`build` this calls), on Qwen3_5ForConditionalGeneration (model_type qwen3_5, text qwen3_5_text): the hybrid
text model of make_qwen3_5.py's `qwen3_5` (4 layers linear/linear/linear/full, gated attention with partial
RoPE 0.25 over head_dim 32 and mrope_section [2, 1, 1] interleaved, Gated DeltaNet on transformers' torch
fallback) with vocab 400, and the Qwen3-VL tower without deepstack (Qwen3.5's vision model has none):
2 blocks, hidden 32, 2 heads, patch 8, temporal patch 2, merge 2, 36 position embeddings, out 64. Writes
fixtures/tiny/qwen3_5_vl (about 1.5 MB) in a few seconds.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_qwen3_vl import ID, VOCAB, build  # noqa: E402

OUT = os.path.join(HERE, "fixtures", "tiny", "qwen3_5_vl")
SEED = 35101


def config():
    from transformers import Qwen3_5Config

    text = dict(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                max_position_embeddings=1024, rms_norm_eps=1e-6, hidden_act="silu", linear_conv_kernel_dim=4,
                layer_types=["linear_attention"] * 3 + ["full_attention"], intermediate_size=128, head_dim=32,
                linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=16, linear_value_head_dim=16,
                tie_word_embeddings=True,
                rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                                 "mrope_section": [2, 1, 1], "mrope_interleaved": True},
                bos_token_id=None, eos_token_id=ID["<|im_end|>"], pad_token_id=ID["<|endoftext|>"])
    vision = dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, hidden_act="gelu_pytorch_tanh",
                  patch_size=8, temporal_patch_size=2, spatial_merge_size=2, in_channels=3, out_hidden_size=64,
                  num_position_embeddings=36)
    return Qwen3_5Config(text_config=text, vision_config=vision, image_token_id=ID["<|image_pad|>"],
                         video_token_id=ID["<|video_pad|>"], vision_start_token_id=ID["<|vision_start|>"],
                         vision_end_token_id=ID["<|vision_end|>"], tie_word_embeddings=True)


def main() -> None:
    from transformers import Qwen3_5ForConditionalGeneration

    build(OUT, "qwen3_5_vl", config(), Qwen3_5ForConditionalGeneration, SEED)


if __name__ == "__main__":
    main()
