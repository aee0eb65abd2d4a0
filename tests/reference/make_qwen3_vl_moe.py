#!/usr/bin/env python3
"""A tiny random Qwen3-VL-MoE checkpoint with float32 references for the image path.

    /opt/confab-ref/bin/python tests/reference/make_qwen3_vl_moe.py

The same venv, tokenizer, processor settings, images, chat, tower and references as make_qwen3_vl.py (whose
`build` this calls), on Qwen3VLMoeForConditionalGeneration (model_type qwen3_vl_moe, text qwen3_vl_moe_text):
3 layers, every one a sparse MoE block (decoder_sparse_step 1): a softmax router over 4 experts, top 2,
renormalised, experts of width 24, no shared expert. The experts are stored fused in the released layout,
mlp.experts.gate_up_proj [E, hidden, 2 x width] and mlp.experts.down_proj [E, width, hidden] (transformers
transposes both when it loads them). reference.json also records router_min_margin, the smallest gap between
the k-th and (k+1)-th router probability over every prompt and greedy token and layer (the script fails under
1e-3). Writes fixtures/tiny/qwen3_vl_moe in a few seconds.
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


def router_margin(folder: str) -> float:
    """The smallest gap between the k-th and (k+1)-th router probability over every token (prompt and greedy
    steps) and layer: a near-tie would flip an expert on float32 rounding alone."""
    import json

    import torch
    from transformers import Qwen3VLMoeForConditionalGeneration

    from make_qwen3_vl import CHAT, greedy, make_processor

    model = Qwen3VLMoeForConditionalGeneration.from_pretrained(folder, dtype=torch.float32,
                                                               attn_implementation="eager").eval()
    k = model.config.text_config.num_experts_per_tok
    margins = []

    def hook(module, inputs, output):
        p = torch.softmax(output[0].detach().float(), dim=-1).sort(dim=-1, descending=True).values
        margins.append(float((p[:, k - 1] - p[:, k]).min()))

    hooks = [m.register_forward_hook(hook) for n, m in model.named_modules() if n.endswith("mlp.gate")]
    assert hooks
    processor = make_processor(folder)
    from PIL import Image
    ref = json.load(open(os.path.join(folder, "reference.json")))
    images = [Image.open(os.path.join(folder, p)).convert("RGB") for p in ref["images"]]
    text = processor.apply_chat_template(CHAT, tokenize=False, add_generation_prompt=True)
    inputs = processor(text=[text], images=images, return_tensors="pt")
    _, new, _ = greedy(model, dict(inputs))
    assert new == ref["greedy_ids"]
    ref["router_min_margin"] = min(margins)
    with open(os.path.join(folder, "reference.json"), "w") as f:
        json.dump(ref, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return min(margins)


def main() -> None:
    from transformers import Qwen3VLMoeForConditionalGeneration

    assert VOCAB == 400
    build(OUT, "qwen3_vl_moe", config(), Qwen3VLMoeForConditionalGeneration, SEED + 200, released_layout)
    margin = router_margin(OUT)
    print(f"router min margin {margin:.2e}")
    assert margin >= 1e-3, "a near-tie in expert selection: pick another seed"


if __name__ == "__main__":
    main()
