#!/usr/bin/env python3
"""Tiny random embedding checkpoints (Qwen3-Embedding-like and EmbeddingGemma-like) with reference
vectors from sentence-transformers' own SentenceTransformer.encode.

    /opt/confab-ref/bin/python tests/reference/make_embeddings.py

Needs transformers 5 with torch, safetensors, numpy and sentence-transformers (6.x; installed into
the reference venv with `/opt/confab-ref/bin/pip install sentence-transformers`). Works offline. CI
never runs this; the outputs are committed. It deletes and rewrites only the two folders below
(about 0.4 MB and 0.8 MB) and takes a few seconds.

Each folder is laid out as the released models ship it: the transformer's base model (Qwen3Model /
Gemma3TextModel, so its weights carry no `model.` prefix and there is no lm_head) with config.json,
tokenizer.json and tokenizer_config.json at the top, and sentence-transformers' files beside it:
modules.json (module types spelled `sentence_transformers.models.*`, as the Hub's files are),
sentence_bert_config.json, config_sentence_transformers.json (the `query` and `document` prompts)
and one folder per module after the transformer.

  qwen3_embedding   Qwen3Config (hidden 64, 2 layers, 4 heads of 32, 2 KV heads, vocab 512, tied
                    embeddings), the `qwen3` fixture's byte-level BPE tokenizer with the post-processor
                    Qwen3-Embedding's tokenizer.json has (a TemplateProcessing that appends
                    <|endoftext|>, id 0, to every text), padding side left.
                    1_Pooling: last token; 2_Normalize. Prompts: query = "Instruct: Given a web search
                    query, retrieve relevant passages that answer the query\\nQuery:", document = "".
  embeddinggemma    Gemma3TextConfig with use_bidirectional_attention (hidden 64, 4 layers
                    sliding/sliding/sliding/full, sliding_window 8 in config.json, which transformers
                    reads as 8 // 2 + 1 = 5: a position sees those less than 5 away on either side;
                    4 heads of 24, 2 KV heads, query_pre_attn_scalar 24, vocab 320), the `gemma3`
                    fixture's tokenizer with a post-processor that wraps every text in
                    <|im_start|> ... <|im_end|> (ids 1, 2: EmbeddingGemma's tokenizer adds <bos> and
                    <eos>). 1_Pooling: mean; 2_Dense 64 -> 256 and 3_Dense 256 -> 64 (no bias,
                    torch.nn.modules.linear.Identity activation, weights `linear.weight` in
                    model.safetensors); 4_Normalize. Prompts as EmbeddingGemma's: query = "task:
                    search result | query: ", document = "title: none | text: ".

reference.json in each folder: for every case, its kind ("query", "document" or "prompt" with the
prompt text), the text, the token ids sentence-transformers fed the model (prompt included) and the
vector `SentenceTransformer(folder).encode_query` / `encode_document` / `encode(prompt=...)` returned
(float32, normalized). The script encodes the cases both one at a time and as one padded batch and
fails unless the two agree within 1e-5 cosine distance, so padding and masking are exercised too.
"""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny")
BATCH_TOLERANCE = 1e-5

QUERIES = ["What is the capital of France?", "how do rust closures capture variables from their scope"]
DOCUMENTS = [
    "Paris is the capital and largest city of France, on the Seine.",
    "A closure captures variables from its environment by reference, by mutable reference, or by value.",
    "Tiny.",
]
QWEN_QUERY_PROMPT = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
GEMMA_PROMPTS = {"query": "task: search result | query: ", "document": "title: none | text: "}
CUSTOM_PROMPT = "Instruct: Given a question, find code that answers it\nQuery:"


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False)
        f.write("\n")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def randomize(model, seed, gemma):
    """Weights large enough that the tiny model's vectors differ clearly between texts."""
    import torch

    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                # Gemma stores weight - 1; Qwen the weight itself.
                base = 0.0 if gemma else 1.0
                p.copy_(base + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.15)


def tokenizer_files(src, dst, post_processor, padding_side):
    tok = read_json(os.path.join(OUT, src, "tokenizer.json"))
    tok["post_processor"] = post_processor
    write_json(os.path.join(dst, "tokenizer.json"), tok)
    cfg = read_json(os.path.join(OUT, src, "tokenizer_config.json"))
    cfg.pop("chat_template", None)
    cfg["padding_side"] = padding_side
    write_json(os.path.join(dst, "tokenizer_config.json"), cfg)


def template(single_tokens_before, single_tokens_after, ids):
    """A TemplateProcessing that wraps $A in the given special tokens (as tokenizers writes one)."""
    piece = lambda t: {"SpecialToken": {"id": t, "type_id": 0}}
    seq = lambda name: {"Sequence": {"id": name, "type_id": 0}}
    single = [piece(t) for t in single_tokens_before] + [seq("A")] + [piece(t) for t in single_tokens_after]
    pair = single + [piece(t) for t in single_tokens_before] + [seq("B")] + [piece(t) for t in single_tokens_after]
    return {
        "type": "TemplateProcessing",
        "single": single,
        "pair": pair,
        "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t in ids},
    }


def pooling_config(dim, mode):
    return {
        "word_embedding_dimension": dim,
        "pooling_mode_cls_token": mode == "cls",
        "pooling_mode_mean_tokens": mode == "mean",
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": mode == "lasttoken",
        "include_prompt": True,
    }


def write_dense(folder, in_features, out_features, seed):
    import torch
    from safetensors.torch import save_file

    os.makedirs(folder)
    g = torch.Generator().manual_seed(seed)
    weight = torch.randn(out_features, in_features, generator=g) * (in_features**-0.5)
    save_file({"linear.weight": weight.contiguous()}, os.path.join(folder, "model.safetensors"))
    write_json(
        os.path.join(folder, "config.json"),
        {"in_features": in_features, "out_features": out_features, "bias": False,
         "activation_function": "torch.nn.modules.linear.Identity"},
    )


def modules_json(folder, rest):
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
    for i, (path, kind) in enumerate(rest, start=1):
        mods.append({"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{kind}"})
    write_json(os.path.join(folder, "modules.json"), mods)


def make_qwen3(folder):
    import torch
    from transformers import Qwen3Config, Qwen3Model

    torch.manual_seed(0)
    cfg = Qwen3Config(
        vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=32, max_position_embeddings=256, rms_norm_eps=1e-6,
        tie_word_embeddings=True, bos_token_id=0, eos_token_id=2, pad_token_id=0,
        rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, dtype="float32",
    )
    model = Qwen3Model(cfg).eval()
    randomize(model, 5005, gemma=False)
    model.save_pretrained(folder, safe_serialization=True)
    # The released config names the causal LM, whose weights the base model's are.
    config = read_json(os.path.join(folder, "config.json"))
    config["architectures"] = ["Qwen3ForCausalLM"]
    write_json(os.path.join(folder, "config.json"), config)
    tokenizer_files("qwen3", folder, template([], ["<|endoftext|>"], {"<|endoftext|>": 0}), "left")
    modules_json(folder, [("1_Pooling", "Pooling"), ("2_Normalize", "Normalize")])
    os.makedirs(os.path.join(folder, "1_Pooling"))
    write_json(os.path.join(folder, "1_Pooling", "config.json"), pooling_config(64, "lasttoken"))
    os.makedirs(os.path.join(folder, "2_Normalize"))
    write_json(os.path.join(folder, "sentence_bert_config.json"), {"max_seq_length": 256, "do_lower_case": False})
    write_json(
        os.path.join(folder, "config_sentence_transformers.json"),
        {"prompts": {"query": QWEN_QUERY_PROMPT, "document": ""}, "default_prompt_name": None, "similarity_fn_name": "cosine"},
    )


def make_gemma(folder):
    import torch
    from transformers import Gemma3TextConfig, Gemma3TextModel

    torch.manual_seed(0)
    cfg = Gemma3TextConfig(
        vocab_size=320, hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
        num_key_value_heads=2, head_dim=24, query_pre_attn_scalar=24, max_position_embeddings=256,
        rms_norm_eps=1e-6, sliding_window=8, use_bidirectional_attention=True,
        layer_types=["sliding_attention", "sliding_attention", "sliding_attention", "full_attention"],
        bos_token_id=1, eos_token_id=2, pad_token_id=0, hidden_activation="gelu_pytorch_tanh",
        rope_parameters={
            "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
        },
        dtype="float32",
    )
    assert cfg.sliding_window == 5, cfg.sliding_window  # 8 // 2 + 1
    model = Gemma3TextModel(cfg).eval()
    randomize(model, 6006, gemma=True)
    model.save_pretrained(folder, safe_serialization=True)
    assert read_json(os.path.join(folder, "config.json"))["sliding_window"] == 8
    ids = {"<|im_start|>": 1, "<|im_end|>": 2}
    tokenizer_files("gemma3", folder, template(["<|im_start|>"], ["<|im_end|>"], ids), "right")
    modules_json(
        folder, [("1_Pooling", "Pooling"), ("2_Dense", "Dense"), ("3_Dense", "Dense"), ("4_Normalize", "Normalize")]
    )
    os.makedirs(os.path.join(folder, "1_Pooling"))
    write_json(os.path.join(folder, "1_Pooling", "config.json"), pooling_config(64, "mean"))
    write_dense(os.path.join(folder, "2_Dense"), 64, 256, 7007)
    write_dense(os.path.join(folder, "3_Dense"), 256, 64, 8008)
    os.makedirs(os.path.join(folder, "4_Normalize"))
    write_json(os.path.join(folder, "sentence_bert_config.json"), {"max_seq_length": 256, "do_lower_case": False})
    write_json(
        os.path.join(folder, "config_sentence_transformers.json"),
        {"prompts": GEMMA_PROMPTS, "default_prompt_name": None, "similarity_fn_name": "cosine"},
    )


def cases():
    out = [{"kind": "query", "text": t} for t in QUERIES]
    out += [{"kind": "document", "text": t} for t in DOCUMENTS]
    out.append({"kind": "prompt", "prompt": CUSTOM_PROMPT, "text": QUERIES[1]})
    return out


def prompt_of(model, case):
    if case["kind"] == "prompt":
        return case["prompt"]
    return model.prompts.get(case["kind"], "")


def encode(model, case_list, batch_size):
    """Vectors for the cases: encode_query / encode_document / encode(prompt=...), as a user would."""
    out = []
    for case in case_list:
        if case["kind"] == "query":
            v = model.encode_query([case["text"]], batch_size=batch_size, convert_to_numpy=True)
        elif case["kind"] == "document":
            v = model.encode_document([case["text"]], batch_size=batch_size, convert_to_numpy=True)
        else:
            v = model.encode([case["text"]], prompt=case["prompt"], batch_size=batch_size, convert_to_numpy=True)
        out.append(v[0])
    return out


def encode_batched(model, case_list):
    """Every case in one padded batch (prompts written in, so one call holds them all)."""
    texts = [prompt_of(model, c) + c["text"] for c in case_list]
    return list(model.encode(texts, batch_size=len(texts), convert_to_numpy=True))


def cosine_distance(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return 1.0 - float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def reference(name, folder):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(folder, device="cpu")
    model.eval()
    case_list = cases()
    single = encode(model, case_list, batch_size=1)
    batched = encode_batched(model, case_list)
    worst = max(cosine_distance(a, b) for a, b in zip(single, batched))
    if worst > BATCH_TOLERANCE:
        sys.exit(f"{name}: one-at-a-time and batched vectors differ by {worst:.2e} cosine distance")
    for case, vec in zip(case_list, single):
        full = prompt_of(model, case) + case["text"]
        case["ids"] = model.tokenizer(full)["input_ids"]
        case["vector"] = [float(x) for x in vec]
        norm = float(np.linalg.norm(vec))
        if abs(norm - 1.0) > 1e-4:
            sys.exit(f"{name}: a vector of norm {norm}")
    # Distinct vectors, so a wrong pooling cannot pass by accident.
    closest = min(cosine_distance(a, b) for i, a in enumerate(single) for b in single[i + 1 :])
    if closest < 1e-3:
        sys.exit(f"{name}: two cases give nearly the same vector ({closest:.2e})")
    write_json(
        os.path.join(folder, "reference.json"),
        {
            "producer": "sentence-transformers %s, transformers %s, torch float32 CPU"
            % (__import__("sentence_transformers").__version__, __import__("transformers").__version__),
            "dimensions": len(single[0]),
            "batch_vs_single_cosine_distance": worst,
            "cases": case_list,
        },
    )
    print(f"{name}: {len(case_list)} cases, dim {len(single[0])}, batch vs single {worst:.2e}, "
          f"closest pair {closest:.2e}, ids {[len(c['ids']) for c in case_list]}")


def main():
    for name, make in (("qwen3_embedding", make_qwen3), ("embeddinggemma", make_gemma)):
        folder = os.path.join(OUT, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        make(folder)
        reference(name, folder)


if __name__ == "__main__":
    main()
