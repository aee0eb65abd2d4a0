#!/usr/bin/env python3
"""transformers' side of bench/diffusion_gemma.py: DiffusionGemmaForBlockDiffusion.generate() on a
checkpoint folder, timed, with its decoder passes per canvas counted. Prints one JSON line.

    PYTHON bench/diffusion_gemma_ref.py MODEL PROMPT_IDS MAX_NEW_TOKENS SEED

PROMPT_IDS comma-separated. CPU, float32, eager attention and experts (as the fixtures are made), a
warm-up run first (one canvas), then the timed run from `torch.manual_seed(SEED)`: its time covers
reading the prompt and every canvas, as Confab's does. torch takes as many threads as Confab does
(CONFAB_CPU_THREADS where set): on a busy machine its spinning OpenMP threads otherwise lose 20x.
"""
import json
import os
import sys
import time


def main() -> None:
    import torch
    from transformers import DiffusionGemmaForBlockDiffusion

    if os.environ.get("CONFAB_CPU_THREADS"):
        torch.set_num_threads(int(os.environ["CONFAB_CPU_THREADS"]))
    folder, prompt, max_new, seed = sys.argv[1], [int(x) for x in sys.argv[2].split(",")], int(sys.argv[3]), int(sys.argv[4])
    model = DiffusionGemmaForBlockDiffusion.from_pretrained(
        folder, dtype=torch.float32, attn_implementation="eager", experts_implementation="eager").eval()
    steps = []
    decoder = model.model.decoder
    inner_decoder, inner_encoder = decoder.forward, model.model.encoder.forward

    def counting(*args, **kwargs):
        steps[-1] += 1
        return inner_decoder(*args, **kwargs)

    def new_canvas(*args, **kwargs):
        steps.append(0)
        return inner_encoder(*args, **kwargs)

    decoder.forward, model.model.encoder.forward = counting, new_canvas
    ids = torch.tensor([prompt])
    canvas = model.config.canvas_length
    with torch.no_grad():
        model.generate(ids, max_new_tokens=canvas)
        steps.clear()
        torch.manual_seed(seed)
        started = time.perf_counter()
        out = model.generate(ids, max_new_tokens=max_new)
        seconds = time.perf_counter() - started
    # The encoder is called once for the prompt and once per finished canvas but the last: a
    # canvas per decoder run counted from the encoder call before it.
    steps = [s for s in steps if s > 0]
    generated = out.sequences.shape[1] - len(prompt)
    print(json.dumps({"seconds": seconds, "canvases": len(steps), "canvas_length": canvas, "steps_per_canvas": steps,
                      "generated": int(generated), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
