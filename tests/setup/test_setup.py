"""Tests of the setup scripts: the right MLX wheel per platform, OpenBLAS, the default model."""
import filecmp
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FETCH = os.path.join(ROOT, "crates", "mlx-sys", "fetch_mlx_wheel.py")
INSTALL_MODEL = os.path.join(ROOT, "scripts", "install_default_model.py")
DEPS = os.environ.get("CONFAB_DEPS_DIR", os.path.join(ROOT, ".deps"))


def run(*args: str) -> str:
    return subprocess.run([sys.executable, *args], check=True, capture_output=True, text=True).stdout.strip()


class MlxWheel(unittest.TestCase):
    def test_macos_gets_the_metal_wheel_with_its_metallib(self):
        # What setup does on a Mac, fetched here with pip's --platform.
        with tempfile.TemporaryDirectory() as dest:
            root = run(FETCH, "--backend", "metal", "--platform", "macosx_14_0_arm64", "--dest", dest)
            self.assertTrue(os.path.exists(os.path.join(root, "mlx", "lib", "libmlx.dylib")))
            self.assertTrue(os.path.exists(os.path.join(root, "mlx", "lib", "mlx.metallib")))
            self.assertTrue(os.path.exists(os.path.join(root, "mlx", "share", "cmake", "MLX", "MLXConfig.cmake")))
            with open(os.path.join(root, "confab-wheel.json")) as f:
                stamp = json.load(f)
            self.assertEqual((stamp["package"], stamp["version"], stamp["blas"]), ("mlx-metal", "0.32.2", None))
            # A second run with the same arguments is a no-op that returns the same folder.
            self.assertEqual(run(FETCH, "--backend", "metal", "--platform", "macosx_14_0_arm64", "--dest", dest), root)

    @unittest.skipUnless(sys.platform.startswith("linux"), "the CPU wheel is Linux's")
    def test_linux_cpu_wheel_uses_openblas(self):
        root = run(FETCH, "--backend", "cpu", "--dest", os.path.join(DEPS, "mlx"))
        with open(os.path.join(root, "confab-wheel.json")) as f:
            stamp = json.load(f)
        self.assertEqual(stamp["package"], "mlx-cpu")
        self.assertIsNotNone(stamp["blas"], "setup installs libopenblas0-pthread; the wheel should use it")
        bundled = glob.glob(os.path.join(root, "mlx_cpu.libs", "libblas-*.so*"))
        self.assertEqual(len(bundled), 1)
        self.assertTrue(filecmp.cmp(bundled[0], stamp["blas"], shallow=False))


class DefaultModel(unittest.TestCase):
    def test_installs_verified_and_idempotent(self):
        with open(os.path.join(ROOT, "assets", "default-model.json")) as f:
            manifest = json.load(f)
        with tempfile.TemporaryDirectory() as models:
            path = run(INSTALL_MODEL, models, "--cache", os.path.join(DEPS, "wheels"))
            self.assertEqual(path, os.path.join(models, manifest["folder"], manifest["file"]))
            self.assertEqual(os.path.getsize(path), manifest["size_bytes"])
            with open(path, "rb") as f:
                self.assertEqual(f.read(4), b"GGUF")
            mtime = os.path.getmtime(path)
            self.assertEqual(run(INSTALL_MODEL, models, "--cache", os.path.join(DEPS, "wheels")), path)
            self.assertEqual(os.path.getmtime(path), mtime)


if __name__ == "__main__":
    unittest.main()
