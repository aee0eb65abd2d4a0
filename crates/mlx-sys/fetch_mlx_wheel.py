#!/usr/bin/env python3
"""Fetch and unpack the official MLX wheel that crates/mlx-sys links.

    fetch_mlx_wheel.py --backend cpu|metal|cuda-12 --dest DIR [--platform TAG] [--no-openblas]

Unpacks into DIR/<backend>/ (mlx/lib/libmlx.*, mlx/include, mlx/share/cmake/MLX, and on Linux
the wheel's bundled libraries in mlx_<backend>.libs/). Idempotent: a stamp file records what
was unpacked, and a second run with the same arguments does nothing.

On Linux CPU the wheel bundles the reference (netlib) BLAS, which is ~50x slower than
OpenBLAS for float32 matmuls. When Debian's OpenBLAS is installed, its libblas.so.3 is copied
over the bundled one, keeping the hashed file name that libmlx's NEEDED entry names.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

MLX_VERSION = "0.32.2"
WHEELS = {"cpu": "mlx-cpu", "metal": "mlx-metal", "cuda-12": "mlx-cuda-12"}
OPENBLAS = [
    "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3",
    "/usr/lib/aarch64-linux-gnu/openblas-pthread/libblas.so.3",
]


def download(package: str, platform_tag: str | None, into: str) -> str:
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
           "--only-binary=:all:", "-d", into, f"{package}=={MLX_VERSION}"]
    if platform_tag:
        cmd += ["--platform", platform_tag, "--python-version", "3.11"]
    subprocess.run(cmd, check=True)
    wheels = glob.glob(os.path.join(into, "*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one wheel for {package}, found {wheels}")
    return wheels[0]


def use_openblas(root: str) -> str | None:
    source = next((p for p in OPENBLAS if os.path.exists(p)), None)
    bundled = glob.glob(os.path.join(root, "mlx_*.libs", "libblas-*.so*"))
    if not source or not bundled:
        return None
    for target in bundled:
        shutil.copyfile(source, target)
    return source


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=sorted(WHEELS), required=True)
    parser.add_argument("--dest", required=True)
    parser.add_argument("--platform", help="pip platform tag, to fetch another OS's wheel")
    parser.add_argument("--no-openblas", action="store_true")
    args = parser.parse_args()

    root = os.path.join(os.path.abspath(args.dest), args.backend)
    stamp_path = os.path.join(root, "confab-wheel.json")
    wanted = {"package": WHEELS[args.backend], "version": MLX_VERSION, "platform": args.platform}
    if os.path.exists(stamp_path):
        with open(stamp_path) as f:
            stamp = json.load(f)
        if {k: stamp.get(k) for k in wanted} == wanted:
            # OpenBLAS may have been installed after the wheel was unpacked.
            if not stamp.get("blas") and not (args.no_openblas or args.platform):
                stamp["blas"] = use_openblas(root)
                with open(stamp_path, "w") as f:
                    json.dump(stamp, f, indent=1)
            print(root)
            return

    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.dirname(root), exist_ok=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(root)) as tmp:
        wheel = download(WHEELS[args.backend], args.platform, tmp)
        unpacked = os.path.join(tmp, "unpacked")
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                path = zf.extract(info, unpacked)
                mode = (info.external_attr >> 16) & 0o777
                if mode:
                    os.chmod(path, mode)
        if not glob.glob(os.path.join(unpacked, "mlx", "lib", "libmlx.*")):
            raise SystemExit(f"{os.path.basename(wheel)} holds no mlx/lib/libmlx")
        blas = None if args.no_openblas or args.platform else use_openblas(unpacked)
        with open(os.path.join(unpacked, "confab-wheel.json"), "w") as f:
            json.dump({**wanted, "wheel": os.path.basename(wheel), "blas": blas}, f, indent=1)
        os.rename(unpacked, root)  # atomic: a half-unpacked wheel never looks complete
    print(root)


if __name__ == "__main__":
    main()
