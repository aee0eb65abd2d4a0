#!/usr/bin/env python3
"""mlx-lm's side of the continuation benchmark: a chat continued from its in-process prompt
cache, the way mlx-lm's own chat and server do it.

    mlx_lm_continuation.py MODEL_DIR HISTORY_TOKENS TURN_TOKENS  → one JSON line

The history (the same synthetic tokens `confab bench-session` uses) goes through
`stream_generate` with a kept `prompt_cache` (`make_prompt_cache`), which also writes an
8-token reply into it, as `bench-session`'s first request does. Then only the tokens the cache
does not hold yet (the turn) go through `stream_generate` with that cache; the time from the
call to its first response is the time to first token.
"""
import json
import sys
import time
from pathlib import Path

import mlx.core as mx
from mlx_lm.generate import stream_generate
from mlx_lm.models.cache import make_prompt_cache
from mlx_lm.utils import load_model, load_tokenizer

from mlx_lm_bench import synthetic_prompt

REPLY = 8  # as crates/cli/src/commands/bench_session.rs


def main() -> None:
    path, history_tokens, turn_tokens = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    model, config = load_model(path)
    tokenizer = load_tokenizer(path)
    everything = synthetic_prompt(history_tokens + turn_tokens, config["vocab_size"])
    history, turn = everything[:history_tokens], everything[history_tokens:]

    for _ in stream_generate(model, tokenizer, history[:64], max_tokens=REPLY):  # warm-up
        pass

    cache = make_prompt_cache(model)
    reply = [r.token for r in stream_generate(model, tokenizer, history, max_tokens=REPLY, prompt_cache=cache)]
    held = cache[0].offset
    new = (history + reply + turn)[held:]

    tic = time.perf_counter()
    for _ in stream_generate(model, tokenizer, new, max_tokens=REPLY, prompt_cache=cache):
        ttft = time.perf_counter() - tic
        break
    print(json.dumps({"cached_tokens": held, "new_tokens": len(new), "ttft_ms": ttft * 1e3}))


if __name__ == "__main__":
    main()
