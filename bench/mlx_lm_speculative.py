#!/usr/bin/env python3
"""mlx-lm's side of the draft-model benchmark: `stream_generate` with `draft_model` (what
`mlx_lm.generate --draft-model` runs), greedy, on a chat prompt through the model's template.

    mlx_lm_speculative.py MODEL_DIR DRAFT_DIR PROMPT_FILE MAX_TOKENS [NUM_DRAFT]  → one JSON line

NUM_DRAFT is mlx-lm's `--num-draft-tokens` (its default, 3). One warm-up run first. The line
gives the reply's ids, decode tok/s as stream_generate reports it (`generation_tps`), the
tokens accepted from the draft, and the tokens proposed: NUM_DRAFT per verifying step (each
step yields one token of the model's own), fewer where max_tokens cut the last step short.
"""
import json
import sys
from pathlib import Path

from mlx_lm.generate import stream_generate
from mlx_lm.utils import load


def run(model, draft, tokenizer, prompt, max_tokens, num_draft):
    ids, accepted, steps, tps = [], 0, 0, 0.0
    for response in stream_generate(model, tokenizer, prompt, max_tokens=max_tokens, draft_model=draft,
                                    num_draft_tokens=num_draft):
        if response.finish_reason is None or response.finish_reason == "length":
            ids.append(response.token)
            accepted += response.from_draft
            steps += not response.from_draft
        tps = response.generation_tps
    return {"ids": ids, "decode_tokens_per_s": tps, "accepted": accepted, "proposed": steps * num_draft}


def main() -> None:
    path, draft_path, prompt_file, max_tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    num_draft = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    model, tokenizer = load(Path(path))
    draft, _ = load(Path(draft_path))
    text = Path(prompt_file).read_text()
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True)
    run(model, draft, tokenizer, prompt, max_tokens, num_draft)  # warm-up
    print(json.dumps(run(model, draft, tokenizer, prompt, max_tokens, num_draft)))


if __name__ == "__main__":
    main()
