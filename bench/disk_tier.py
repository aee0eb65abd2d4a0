#!/usr/bin/env python3
"""Continuing a chat from the prefix cache's disk tier, beside the same from memory and beside
what reading its files costs (issue 55, item 4).

    python3 bench/disk_tier.py [--history 3000] [--turn 30] [--repeats 3] [--binary PATH] [--model PATH] [--dtype float32]

Each run is `confab bench-session --history H --turn T --cache-dir DIR -vv`: a conversation of
H tokens (and an 8-token reply) continued by a T-token turn from memory, then again in a
restarted engine from the disk tier. The engine's `prefix cache read an entry from disk` line
names the entry it read; this script then reads exactly that entry's files (its own safetensors
and the blocks its manifest lists) in the same run, as the disk tier found them, in the page
cache (just written, as at every restart that follows a shutdown): each file read whole into a
fresh buffer, best of five passes. That rate is the floor's: the disk path should cost the
memory path plus the bytes at that rate. Also shown: the same files read after
`posix_fadvise(DONTNEED)` (a cold read from the disk itself, where the kernel honours it).

Printed: best of --repeats, from memory and from disk, disk/memory, the floor
memory + bytes/read-rate, and disk/floor.
"""
import argparse
import json
import mmap
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
READ = re.compile(r'prefix cache read an entry from disk entry="?(\w+)"? bytes=(\d+) load_ms=([\d.]+)')


def entry_files(dir: str, entry: str) -> list:
    """The files the disk tier reads for `entry`: its own data and its blocks."""
    with open(os.path.join(dir, f"{entry}.json")) as f:
        manifest = json.load(f)
    blocks = [os.path.join(dir, "blocks", f"{b['id']}.safetensors") for b in manifest.get("blocks", [])]
    return blocks + [os.path.join(dir, f"{entry}.safetensors")]


def read_all(files: list) -> float:
    """Seconds to read every file whole (into a buffer the allocator hands back file after
    file: the page cache's copy rate)."""
    started = time.perf_counter()
    for path in files:
        with open(path, "rb", buffering=0) as f:
            data = f.read()
            del data
    return time.perf_counter() - started


def read_all_fresh(files: list) -> float:
    """Seconds to read every file whole into memory never touched before (an anonymous
    mapping per file, so each page is faulted in by the read, as a new buffer's are)."""
    started = time.perf_counter()
    for path in files:
        size = os.path.getsize(path)
        with open(path, "rb", buffering=0) as f, mmap.mmap(-1, size) as fresh:
            f.readinto(memoryview(fresh))
    return time.perf_counter() - started


def drop_from_page_cache(files: list) -> None:
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def one_run(args) -> dict:
    dir = tempfile.mkdtemp(prefix="confab-disk-tier-")
    try:
        cmd = [args.binary, "bench-session", "--history", str(args.history), "--turn", str(args.turn), "--json", "-vv",
               "--cache-dir", dir, "--dtype", args.dtype]
        if args.model:
            cmd += ["--model", args.model]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
        report = json.loads(done.stdout)
        reads = [m for m in map(READ.search, done.stderr.splitlines()) if m]
        if len(reads) != 1:
            sys.exit(f"expected one disk read in the log, found {len(reads)}")
        entry, report["disk_bytes"], report["load_ms"] = reads[0].group(1), int(reads[0].group(2)), float(reads[0].group(3))
        files = entry_files(dir, entry)
        size = sum(os.path.getsize(p) for p in files)
        if size != report["disk_bytes"]:
            sys.exit(f"the entry's files hold {size} bytes, the engine read {report['disk_bytes']}")
        report["files"] = len(files)
        report["warm_read_s"] = min(read_all(files) for _ in range(5))
        report["fresh_read_s"] = min(read_all_fresh(files) for _ in range(5))
        drop_from_page_cache(files)
        report["cold_read_s"] = read_all(files)
        return report
    finally:
        shutil.rmtree(dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, default=3000)
    parser.add_argument("--turn", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--binary", default=os.path.join(TARGET, "release", "confab"))
    parser.add_argument("--model", default="", help="default: the app's default model")
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args()

    runs = []
    for i in range(args.repeats):
        runs.append(one_run(args))
        r = runs[-1]
        print(f"run {i + 1}: memory {r['memory_ttft_ms']:.0f} ms, disk {r['disk_ttft_ms']:.0f} ms "
              f"(reading {r['load_ms']:.0f} ms), page-cache read {r['warm_read_s'] * 1e3:.0f} ms "
              f"({r['fresh_read_s'] * 1e3:.0f} ms into fresh memory), "
              f"cold read {r['cold_read_s'] * 1e3:.0f} ms", flush=True)
    memory = min(r["memory_ttft_ms"] for r in runs)
    disk = min(r["disk_ttft_ms"] for r in runs)
    load = min(r["load_ms"] for r in runs)
    warm = min(r["warm_read_s"] for r in runs)
    cold = min(r["cold_read_s"] for r in runs)
    fresh = min(r["fresh_read_s"] for r in runs)
    first = runs[0]
    mb = first["disk_bytes"] / 1e6
    floor = memory + warm * 1e3
    print(f"continuing a {first['history_tokens']}-token chat by {first['turn_tokens']} tokens "
          f"(--dtype {args.dtype}), time to first token, best of {args.repeats}:")
    print(f"  from memory {memory:.0f} ms | from disk after restart {disk:.0f} ms "
          f"(reading the entry: {load:.0f} ms) | disk/memory {disk / memory:.2f}x")
    print(f"  the entry's files: {mb:.1f} MB in {first['files']}; read whole from the page cache "
          f"{mb / 1e3 / warm:.2f} GB/s ({warm * 1e3:.0f} ms; into fresh memory {mb / 1e3 / fresh:.2f} GB/s, "
          f"{fresh * 1e3:.0f} ms), after fadvise(DONTNEED) {mb / 1e3 / cold:.2f} GB/s ({cold * 1e3:.0f} ms)")
    print(f"  the engine reading the entry: {load:.0f} ms, {load / (warm * 1e3):.2f}x the page-cache read, "
          f"{load / (fresh * 1e3):.2f}x the read into fresh memory")
    print(f"  floor, memory + bytes at the page-cache rate: {floor:.0f} ms | disk/floor {disk / floor:.2f}x "
          f"| disk - memory {disk - memory:.0f} ms for {warm * 1e3:.0f} ms of reading")
    print(json.dumps({"memory_ttft_ms": memory, "disk_ttft_ms": disk, "load_ms": load, "bytes": first["disk_bytes"],
                      "page_cache_read_ms": warm * 1e3, "fresh_read_ms": fresh * 1e3, "cold_read_ms": cold * 1e3, "floor_ms": floor,
                      "disk_over_memory": disk / memory, "disk_over_floor": disk / floor}))


if __name__ == "__main__":
    main()
