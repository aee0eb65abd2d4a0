#!/usr/bin/env python3
"""Confab against mlx-lm on the same machine, the same libmlx and BLAS, the same weights and
the same synthetic prompts, in one run; prints both and their ratios.

    python3 bench/run.py [--quick]

Sets up what it needs once (cached in .deps/bench): a venv with mlx-lm 0.32.2 on the official
mlx-cpu 0.32.2 wheel with the same OpenBLAS swap as Confab's, the benchmark checkpoints
(bench/make_models.py), and a release build of `confab`. Targets (issue 3): prefill ≥ 1.2×,
decode ≥ 1.05×, peak memory ≤ mlx-lm's.

    python3 bench/run.py --qwen3-5 [--only-qwen3-5]

adds Qwen3.5 (hybrid Gated DeltaNet + full attention) on a random-weight checkpoint with the real
Qwen3.5-0.8B dimensions (bench/make_qwen3_5.py; speed does not depend on the weights' values),
float32 on both sides, and continuing a 2,000-token chat on it from memory and from disk
(recurrent state resumed from checkpoints).

    python3 bench/run.py --baseline OTHER_CONFAB [--confab CONFAB] --rows "Q4_1 packed"

puts another build of Confab (say main's) where mlx-lm's column was: the two alternate, and
the median of --repeats runs is shown, for before/after figures of one change. --rows keeps
only the named rows of the SmolLM2 table (their labels, comma-separated), without the session
and continuation rows; without mlx-lm's column only the checkpoints those rows need are made.
Run it under `taskset` and with CONFAB_CPU_THREADS as the comparison calls for: both sides
inherit them.

    python3 bench/run.py --diffusion-gemma [--only-diffusion-gemma] [--torch-python PYTHON]

adds DiffusionGemma's canvas tokens per second against transformers' generate() on the tiny
fixtures (and, with --diffusion-gemma-real-dims, random weights with the released layer
dimensions at reduced depth), steps per canvas printed: bench/diffusion_gemma.py.

    python3 bench/run.py --speculative [--only-speculative]

adds speculative decoding (issue 37; bench/speculative.py's `release_rows`): prompt lookup
against plain decoding on two editing tasks (~500 tokens of text, of code) with the default
model (target ≥ 2×; bench/lookup_replay.py replays its proposal policies), and the 4-bit
MLX copy drafting for the float32 model against mlx-lm's `draft_model` on the same pair
(target ≥ 1.3× mlx-lm's speculative tok/s), acceptance rates printed for both.

Every run (also --float32-only) ends with the continuation row (issue 20): a 3,000-token
SmolLM2 float32 chat (plus an 8-token reply) continued by 30 tokens, time to first token for
Confab from memory and from disk after a restart (`confab bench-session`) beside mlx-lm's
in-process prompt cache (bench/mlx_lm_continuation.py). Targets: from memory at least 4x
faster than mlx-lm, from disk within 1.5x of mlx-lm's time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WORK = os.path.join(ROOT, ".deps", "bench")
VENV = os.path.join(WORK, "venv")
PY = os.path.join(VENV, "bin", "python")
sys.path.insert(0, os.path.join(ROOT, "crates", "mlx-sys"))
from fetch_mlx_wheel import use_openblas  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speculative  # noqa: E402

GEN = 128
# `setup` builds with cargo, which honours CARGO_TARGET_DIR.
CONFAB = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "confab")
BASELINE = ""  # --baseline: another confab in mlx-lm's column


def setup(mlx_lm_side: bool = True, made_models: bool = True, build: bool = True) -> str:
    """The default model's GGUF; with `mlx_lm_side`, mlx-lm's venv; with `made_models`, the
    benchmark checkpoints; with `build`, the release build of `confab`."""
    gguf = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "install_default_model.py"), default_models_dir()],
                          check=True, capture_output=True, text=True).stdout.strip()
    if build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "confab-cli"], cwd=ROOT, check=True)
    if not (mlx_lm_side or made_models):
        return gguf
    if not os.path.exists(PY):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([PY, "-m", "pip", "install", "-q", "mlx[cpu]==0.32.2", "mlx-lm==0.32.2", "gguf", "tokenizers"], check=True)
    site = subprocess.run([PY, "-c", "import mlx, os; print(os.path.dirname(list(mlx.__path__)[0]))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    if sys.platform.startswith("linux"):
        use_openblas(site)  # mlx-cpu's bundled BLAS replaced exactly as Confab's is
    subprocess.run([PY, os.path.join(ROOT, "bench", "make_models.py"), gguf, WORK, CONFAB], check=True)
    return gguf


def qwen3_5_models() -> str:
    """The random Qwen3.5-0.8B checkpoint, and its float32 copy (what both sides compute in on a CPU)."""
    subprocess.run([PY, "-m", "pip", "install", "-q", "tokenizers"], check=True)
    bf16 = os.path.join(WORK, "qwen3_5-0.8b-bf16")
    subprocess.run([PY, os.path.join(ROOT, "bench", "make_qwen3_5.py"), bf16], check=True)
    f32 = os.path.join(WORK, "qwen3_5-0.8b-f32")
    if not os.path.exists(os.path.join(f32, "model.safetensors")):
        widen = ("import mlx.core as mx, os, shutil, sys\n"
                 "src, dst = sys.argv[1], sys.argv[2]\n"
                 "os.makedirs(dst, exist_ok=True)\n"
                 "w = mx.load(os.path.join(src, 'model.safetensors'))\n"
                 "mx.save_safetensors(os.path.join(dst, 'model.safetensors'), {k: v.astype(mx.float32) for k, v in w.items()}, {'format': 'pt'})\n"
                 "[shutil.copy(os.path.join(src, f), dst) for f in os.listdir(src) if f != 'model.safetensors']\n")
        subprocess.run([PY, "-c", widen, bf16, f32], check=True)
    return f32


def default_models_dir() -> str:
    if os.environ.get("CONFAB_HOME"):
        return os.path.join(os.environ["CONFAB_HOME"], "models")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/Confab/models")
    return os.path.join(os.environ.get("XDG_DATA_HOME", os.path.expanduser("~/.local/share")), "confab", "models")


def confab(model: str, prompt: int, dtype: str, gen: int = GEN, binary: str = "") -> dict:
    out = subprocess.run([binary or CONFAB, "bench", "--model", model,
                          "--prompt-tokens", str(prompt), "--gen-tokens", str(gen), "--dtype", dtype, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def mlx_lm(model: str, prompt: int, gen: int = GEN) -> dict:
    out = subprocess.run([PY, os.path.join(ROOT, "bench", "mlx_lm_bench.py"), model, str(prompt), str(gen)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def best(runs: list) -> dict:
    return {
        "prefill_tokens_per_s": max(r["prefill_tokens_per_s"] for r in runs),
        "decode_tokens_per_s": max(r["decode_tokens_per_s"] for r in runs),
        "peak_memory_gb": min(r["peak_memory_gb"] for r in runs),
    }


def median(runs: list) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "peak_memory_gb")}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="128-token prompts only")
    parser.add_argument("--prompts", default="128,1024,4096", help="float32 prompt lengths")
    parser.add_argument("--repeats", type=int, default=2, help="runs per side, interleaved; the best is shown (the median with --baseline)")
    parser.add_argument("--qwen3-5", action="store_true", help="add Qwen3.5-0.8B (random weights) rows")
    parser.add_argument("--only-qwen3-5", action="store_true", help="only the Qwen3.5 rows")
    parser.add_argument("--float32-only", action="store_true", help="only the float32 rows and the continuation row")
    parser.add_argument("--speculative", action="store_true", help="add the speculative decoding rows")
    parser.add_argument("--only-speculative", action="store_true", help="only the speculative decoding rows")
    parser.add_argument("--only-continuation", action="store_true", help="only the continuation row")
    parser.add_argument("--confab", default="", help="the confab binary to measure (default: a release build, made first)")
    parser.add_argument("--baseline", default="",
                        help="another confab binary in mlx-lm's place: the two alternate, medians shown")
    parser.add_argument("--gen", type=int, default=GEN, help="tokens generated per run")
    parser.add_argument("--rows", default="",
                        help="only these rows of the SmolLM2 table (labels, comma-separated), no session/continuation rows")
    parser.add_argument("--diffusion-gemma", action="store_true", help="add DiffusionGemma's canvas tok/s (bench/diffusion_gemma.py)")
    parser.add_argument("--only-diffusion-gemma", action="store_true", help="only the DiffusionGemma rows")
    parser.add_argument("--diffusion-gemma-real-dims", action="store_true", help="with them, the released layer dimensions")
    parser.add_argument("--torch-python", default="", help="a Python with torch and transformers, for DiffusionGemma's reference")
    args = parser.parse_args()
    global CONFAB, BASELINE
    CONFAB, BASELINE = os.path.abspath(args.confab) if args.confab else CONFAB, os.path.abspath(args.baseline) if args.baseline else ""
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    gguf_only = bool(rows) and all(r.startswith("Q4_1") for r in rows)
    gguf = setup(mlx_lm_side=not BASELINE, made_models=not (BASELINE and gguf_only), build=not args.confab)
    if args.only_qwen3_5:
        return qwen3_5_rows(args.repeats)
    if args.only_diffusion_gemma:
        return diffusion_gemma_rows(args)
    f32, bf16, q4 = (os.path.join(WORK, n) for n in ("smollm2-f32", "smollm2-bf16", "smollm2-4bit"))
    # (label, confab model, confab dtype, mlx-lm model, prompt tokens)
    lengths = [128] if args.quick else [int(n) for n in args.prompts.split(",")]
    cases = [("float32", f32, "float32", f32, n) for n in lengths]
    if args.only_continuation:
        return continuation_row(f32, args.repeats)
    if args.only_speculative:
        return speculative.release_rows(CONFAB, PY, f32, q4, max(args.repeats, 3))
    if args.float32_only:
        table("SmolLM2-135M", cases, args.repeats)
        print()
        return continuation_row(f32, args.repeats)
    cases += [
        ("bf16", bf16, "bfloat16", bf16, 128),
        # Confab's default on a CPU: weights stay packed, activations float32 (mlx-lm's 4-bit
        # folder has float32 scales, so it computes in float32 too).
        ("4-bit MLX", q4, "auto", q4, 128),
        # mlx-lm has no GGUF loader: its column runs the same weights dequantized (f32 folder).
        # `float32` widens the GGUF at load, like for like; `auto` keeps it packed (about 4x less memory).
        ("Q4_1→f32", gguf, "float32", f32, 128),
        ("Q4_1 packed", gguf, "auto", f32, 128),
    ]
    if rows:
        unknown = set(rows) - {c[0] for c in cases}
        if unknown:
            sys.exit(f"--rows: no row labelled {', '.join(sorted(unknown))}")
        return table("SmolLM2-135M", [c for c in cases if c[0] in rows], args.repeats, args.gen)
    table("SmolLM2-135M", cases, args.repeats)

    # The prefix cache (issue 4): continuing a ~2,000-token conversation with a 30-token turn.
    print()
    session_row(gguf, "auto")
    print()
    continuation_row(f32, args.repeats)
    if args.qwen3_5:
        print()
        qwen3_5_rows(args.repeats)
    if args.speculative:
        print()
        speculative.release_rows(CONFAB, PY, f32, q4, max(args.repeats, 3))
    if args.diffusion_gemma:
        print()
        diffusion_gemma_rows(args)


def diffusion_gemma_rows(args) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import diffusion_gemma
    diffusion_gemma.rows(CONFAB, diffusion_gemma.torch_python(args.torch_python), args.repeats, args.diffusion_gemma_real_dims)


def qwen3_5_rows(repeats: int) -> None:
    f32 = qwen3_5_models()
    # mlx-lm runs the delta rule as a per-token loop on a CPU (a few tok/s at 0.8B): short rows.
    table("Qwen3.5-0.8B", [("float32", f32, "float32", f32, 128)], repeats, gen=32)
    print()
    session_row(f32, "float32")


def session_row(model: str, dtype: str) -> None:
    session = json.loads(subprocess.run([CONFAB, "bench-session", "--model", model, "--dtype", dtype, "--json"],
                                        check=True, capture_output=True, text=True).stdout)
    print(f"session ({os.path.basename(model)}): {session['history_tokens']} history + {session['turn_tokens']} new tokens, "
          f"time to first token: cold {session['cold_ttft_ms']:.0f} ms | from memory {session['memory_ttft_ms']:.0f} ms "
          f"({session['memory_speedup']:.1f}x, target 20x) | from disk after restart {session['disk_ttft_ms']:.0f} ms "
          f"({session['disk_speedup']:.1f}x, target 5x)", flush=True)


CONTINUATION_HISTORY, CONTINUATION_TURN = 3000, 30


def continuation_row(model: str, repeats: int) -> None:
    """Issue 20: a 3,000-token chat continued by 30 tokens. Confab from memory and from disk
    after a restart, mlx-lm from its in-process prompt cache; interleaved, best of `repeats`."""
    ours_runs, theirs_runs = [], []
    for _ in range(repeats):
        ours_runs.append(json.loads(subprocess.run(
            [CONFAB, "bench-session", "--model", model, "--dtype", "float32", "--history", str(CONTINUATION_HISTORY),
             "--turn", str(CONTINUATION_TURN), "--json"], check=True, capture_output=True, text=True).stdout))
        out = subprocess.run([PY, os.path.join(ROOT, "bench", "mlx_lm_continuation.py"), model,
                              str(CONTINUATION_HISTORY), str(CONTINUATION_TURN)],
                             check=True, capture_output=True, text=True).stdout
        theirs_runs.append(json.loads(out.strip().splitlines()[-1]))
    memory = min(r["memory_ttft_ms"] for r in ours_runs)
    disk = min(r["disk_ttft_ms"] for r in ours_runs)
    theirs = min(r["ttft_ms"] for r in theirs_runs)
    ours, them = ours_runs[0], theirs_runs[0]
    print(f"continuation ({os.path.basename(model)}, float32): {ours['history_tokens']} cached + "
          f"{ours['history_tokens'] + ours['turn_tokens'] - ours['memory_reused']} new tokens (mlx-lm: "
          f"{them['cached_tokens']} + {them['new_tokens']}), time to first token, best of {repeats}:", flush=True)
    print(f"  confab from memory {memory:.0f} ms | confab from disk after restart {disk:.0f} ms | "
          f"mlx-lm in-process prompt cache {theirs:.0f} ms", flush=True)
    print(f"  memory: {theirs / memory:.2f}x faster than mlx-lm (target 4x) | "
          f"disk: {disk / theirs:.2f}x mlx-lm's time (target at most 1.5x)", flush=True)


def table(title: str, cases: list, repeats: int, gen: int = GEN) -> None:
    theirs_name = "base" if BASELINE else "mlx-lm"
    if BASELINE:
        print(f"confab: {CONFAB}\nbase:   {BASELINE}\nmedian of {repeats} runs each, alternated; "
              f"CONFAB_CPU_THREADS={os.environ.get('CONFAB_CPU_THREADS', '(unset)')}, "
              f"CPUs {sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'}")
    header = f"{title:<12} {'prompt':>6} | {'prefill tok/s':^24} | {'decode tok/s':^24} | {'peak MB':^24}"
    print(header)
    print(f"{'':<12} {'':>6} | {'confab':>7} {theirs_name:>7} {'ratio':>7} | {'confab':>7} {theirs_name:>7} {'ratio':>7} | {'confab':>7} {theirs_name:>7} {'ratio':>6}")
    print("-" * len(header))
    for label, ours_model, dtype, theirs_model, prompt in cases:
        # Interleaved, best of `--repeats`: on a shared machine the best run is the one least
        # disturbed by anything else.
        ours_runs, theirs_runs = [], []
        for _ in range(repeats):
            ours_runs.append(confab(ours_model, prompt, dtype, gen))
            if BASELINE:
                theirs_runs.append(confab(ours_model, prompt, dtype, gen, BASELINE))
            else:
                theirs_runs.append(mlx_lm(theirs_model, prompt, gen))
        # Two builds of Confab: the median, a typical run of each.
        pick = median if BASELINE else best
        ours, theirs = pick(ours_runs), pick(theirs_runs)
        p, d, m = (ours[k] for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "peak_memory_gb"))
        tp, td, tm = (theirs[k] for k in ("prefill_tokens_per_s", "decode_tokens_per_s", "peak_memory_gb"))
        print(f"{label:<12} {prompt:>6} | {p:>7.1f} {tp:>7.1f} {p / tp:>6.2f}x | {d:>7.1f} {td:>7.1f} {d / td:>6.2f}x | "
              f"{m * 1e3:>7.1f} {tm * 1e3:>7.1f} {m / tm:>5.3f}x", flush=True)


if __name__ == "__main__":
    main()
