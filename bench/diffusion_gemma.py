#!/usr/bin/env python3
"""DiffusionGemma's canvas tokens per second: Confab's denoising method against transformers'
generate() on the same checkpoints, the same prompt and the same seed, one after the other,
best of --repeats; steps per canvas printed for both. bench/run.py --diffusion-gemma runs it as
its section; alone:

    python3 bench/diffusion_gemma.py [--confab BINARY] [--torch-python PYTHON] [--repeats 2] [--real-dims]

Rows: the tiny random checkpoints the fidelity tests use (tests/reference/fixtures/tiny/
diffusion_gemma{,_b}); with --real-dims, a random checkpoint with the released model's layer
dimensions at reduced depth (bench/make_diffusion_gemma.py: one full layer, 2 steps per canvas,
3.1 GB in float16, made at bench time under .deps/bench, never committed; needs numpy and safetensors
in the torch Python or this one).

Canvas tokens per second: canvases written × canvas length / the time from the request to the reply's
end (reading the prompt included on both sides; Confab's from its reply's timings, after loading).
The two sides draw different noise, so their steps per canvas differ (adaptive stopping); the ratio
of steps per second is printed beside the ratio of canvas tokens per second for that reason.
transformers needs torch (docs/tests.md, 'Reference fixtures'): where --torch-python (default: the
reference venv, /opt/confab-ref/bin/python, or $CONFAB_REF_PYTHON) cannot import it, the bench says
so and prints Confab's figures alone. Both sides take CONFAB_CPU_THREADS threads where it is set
(set it on a shared machine: torch's spinning threads suffer most from others' load).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TINY = os.path.join(ROOT, "tests", "reference", "fixtures", "tiny")
WORK = os.path.join(ROOT, ".deps", "bench")
PROMPT = [2] + list(range(40, 71))  # 32 ordinary ids of the tiny tokenizer (and of any real one)
SEED = 7


def torch_python(requested: str) -> str:
    """The Python that has torch and transformers' DiffusionGemma, or '' (with the reason printed)."""
    python = requested or os.environ.get("CONFAB_REF_PYTHON") or "/opt/confab-ref/bin/python"
    probe = subprocess.run([python, "-c", "import torch, transformers; transformers.DiffusionGemmaForBlockDiffusion"],
                           capture_output=True, text=True) if os.path.exists(python) else None
    if probe is None or probe.returncode != 0:
        why = "not found" if probe is None else probe.stderr.strip().splitlines()[-1]
        print(f"transformers' side skipped: {python} cannot run DiffusionGemma with torch ({why}); "
              f"install torch as docs/tests.md 'Reference fixtures' says, or pass --torch-python", flush=True)
        return ""
    return python


def ours(binary: str, model: str, max_tokens: int) -> dict:
    out = subprocess.run([binary, "generate", "--model", model, "--dtype", "float32", "--prompt-ids",
                          ",".join(map(str, PROMPT)), "--max-tokens", str(max_tokens), "--seed", str(SEED), "--json"],
                         check=True, capture_output=True, text=True).stdout
    reply = json.loads(out)
    t, steps = reply["timings"], reply["usage"]["steps_per_canvas"]
    usage = reply["usage"]
    # A denoising reply's timings split at the first canvas's start: the prompt's tokens over its
    # rate, then every generated token over the canvases' rate (Timings::decode_tokens_per_s).
    rate = lambda n, per_s: n / per_s if n > 0 and per_s > 0 else 0.0
    seconds = rate(usage["prompt"] - usage["cached"], t["prefill_tokens_per_s"]) + rate(usage["generated"], t["decode_tokens_per_s"])
    return {"seconds": seconds, "canvases": len(steps), "steps_per_canvas": steps}


def theirs(python: str, model: str, max_tokens: int) -> dict:
    out = subprocess.run([python, os.path.join(ROOT, "bench", "diffusion_gemma_ref.py"), model, ",".join(map(str, PROMPT)),
                          str(max_tokens), str(SEED)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def rates(run: dict, canvas: int) -> tuple:
    steps = sum(run["steps_per_canvas"])
    return run["canvases"] * canvas / run["seconds"], steps / run["seconds"]


def canvas_length(model: str) -> int:
    return json.load(open(os.path.join(model, "config.json"))).get("canvas_length", 256)


def rows(binary: str, python: str, repeats: int, real_dims: bool) -> None:
    cases = [("tiny", os.path.join(TINY, "diffusion_gemma"), 4), ("tiny b", os.path.join(TINY, "diffusion_gemma_b"), 4)]
    if real_dims:
        # One layer (a full one) and 2 steps per canvas: a 256-token canvas's pass over the
        # 262,144-token head and self-conditioning is ~0.4 TFLOP, so more does not fit a CPU run.
        model = os.path.join(WORK, "diffusion_gemma-real-dims")
        subprocess.run([python or sys.executable, os.path.join(ROOT, "bench", "make_diffusion_gemma.py"), model,
                        "--layers", "1", "--max-steps", "2"], check=True)
        cases.append(("real dims, 1 layer", model, 1))
    them = "transformers" if python else "(no torch)"
    header = f"{'DiffusionGemma':<16} {'canvas':>6} | {'canvas tok/s':^26} | {'steps/s':^26} | steps per canvas"
    print(header)
    print(f"{'':<16} {'':>6} | {'confab':>8} {them[:8]:>8} {'ratio':>7} | {'confab':>8} {them[:8]:>8} {'ratio':>7} | confab / {them}")
    print("-" * (len(header) + 20))
    for label, model, canvases in cases:
        canvas = canvas_length(model)
        max_tokens = canvases * canvas
        ours_runs, theirs_runs = [], []
        for _ in range(repeats):
            ours_runs.append(ours(binary, model, max_tokens))
            if python:
                theirs_runs.append(theirs(python, model, max_tokens))
        o = max(ours_runs, key=lambda r: rates(r, canvas)[0])
        ot, os_ = rates(o, canvas)
        line = f"{label:<16} {canvas:>6} | {ot:>8.1f} "
        if python:
            t = max(theirs_runs, key=lambda r: rates(r, canvas)[0])
            tt, ts = rates(t, canvas)
            line += f"{tt:>8.1f} {ot / tt:>6.2f}x | {os_:>8.1f} {ts:>8.1f} {os_ / ts:>6.2f}x | {o['steps_per_canvas']} / {t['steps_per_canvas']}"
        else:
            line += f"{'-':>8} {'-':>7} | {os_:>8.1f} {'-':>8} {'-':>7} | {o['steps_per_canvas']}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--confab", default=os.path.join(ROOT, "target", "release", "confab"))
    parser.add_argument("--torch-python", default="")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--real-dims", action="store_true")
    args = parser.parse_args()
    rows(os.path.abspath(args.confab), torch_python(args.torch_python), args.repeats, args.real_dims)


if __name__ == "__main__":
    main()
