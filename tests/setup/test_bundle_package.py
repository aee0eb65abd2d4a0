"""The installable package as a user gets it: the .deb's app binary finds libmlx inside the
package (or the system's library folders), names no path of the machine that built it, and
starts; the package carries the default model, which the app installs into the models folder on
first launch. And the bundle leaves the development app alone: target/debug/confab-app still
finds the .deps libmlx and starts (issue 43: it used to be relinked for the bundle).

Needs a built .deb: scripts/test.sh builds one (`scripts/bundle.sh --debug`) and runs this with
CONFAB_DEB set to it; without CONFAB_DEB the tests are skipped.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEB = os.environ.get("CONFAB_DEB")
BINARY = "usr/bin/confab-app"
MANIFEST = os.path.join(ROOT, "assets", "default-model.json")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
DEVELOPMENT_APP = os.path.join(TARGET, "debug", "confab-app")


def run_path(binary: str) -> list[str]:
    """The binary's RUNPATH (or RPATH) entries, as readelf shows them."""
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    found = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", out)
    return [p for entry in found for p in entry.split(":")]


def version(binary: str) -> subprocess.CompletedProcess:
    """`confab-app --version`: it starts only where the dynamic loader finds libmlx, and names
    the libmlx it loaded. No LD_LIBRARY_PATH, so only the binary's own search path counts."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    return subprocess.run([binary, "--version"], capture_output=True, text=True, env=env, timeout=60)


def loaded_libmlx(out: subprocess.CompletedProcess) -> str:
    """The libmlx path `--version` names: `confab-app 0.1.0 (MLX 0.32.2, cpu, /path/libmlx.so)`."""
    match = re.match(r"confab-app \d+\.\d+\.\d+ \(MLX [^,]+, [^,]+, (.+)\)$", out.stdout.strip())
    assert match, f"unexpected --version output: {out.stdout!r} {out.stderr!r}"
    return os.path.normpath(match.group(1))


@unittest.skipUnless(DEB, "set CONFAB_DEB to a .deb built by scripts/bundle.sh (scripts/test.sh does)")
@unittest.skipUnless(shutil.which("dpkg-deb") and shutil.which("readelf"), "needs dpkg-deb and readelf")
class DebPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = os.path.join(cls.tmp.name, "installed")
        subprocess.run(["dpkg-deb", "-x", DEB, cls.root], check=True)
        cls.binary = os.path.join(cls.root, BINARY)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_run_path_names_only_the_package_folder(self):
        self.assertEqual(run_path(self.binary), ["$ORIGIN/../lib/confab/mlx/lib"])

    def test_libmlx_resolves_inside_the_package(self):
        # What the dynamic loader picks, with the build tree (and its .deps copy) still here.
        env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
        out = subprocess.run(["ldd", self.binary], check=True, capture_output=True, text=True, env=env).stdout
        mlx = [line for line in out.splitlines() if "libmlx" in line or "mlx_cpu.libs" in line]
        self.assertTrue(any("libmlx.so" in line for line in mlx), out)
        for line in mlx:
            resolved = os.path.normpath(line.split("=> ")[1].split(" (")[0])
            self.assertTrue(resolved.startswith(self.root + "/usr/lib/confab/"), f"resolved outside the package: {line}")

    def test_the_packaged_binary_starts_on_the_package_s_libmlx(self):
        out = version(self.binary)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertTrue(loaded_libmlx(out).startswith(self.root + "/usr/lib/confab/"), out.stdout)

    def test_no_absolute_run_path(self):
        # (Strings such as debug info may still name the build folder; only the search path
        # decides which libmlx loads.)
        for entry in run_path(self.binary):
            self.assertTrue(entry.startswith("$ORIGIN/"), entry)

    def test_the_package_carries_the_default_model_as_the_manifest_says(self):
        # Where crates/paths/src/lib.rs (packaged_model_folders) looks, beside usr/bin.
        with open(MANIFEST) as f:
            model = json.load(f)
        path = os.path.join(self.root, "usr/share/confab/models", model["folder"], model["file"])
        self.assertTrue(os.path.isfile(path), f"{path} is not in the package")
        self.assertEqual(os.path.getsize(path), model["size_bytes"])
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        self.assertEqual(digest.hexdigest(), model["sha256"])

    def test_the_package_has_no_partial_files(self):
        for folder, _, files in os.walk(self.root):
            for name in files:
                self.assertFalse(name.endswith((".partial", ".incomplete")), os.path.join(folder, name))


if __name__ == "__main__":
    unittest.main()


@unittest.skipUnless(DEB, "set CONFAB_DEB to a .deb built by scripts/bundle.sh (scripts/test.sh does)")
@unittest.skipUnless(shutil.which("readelf"), "needs readelf")
class DevelopmentAppAfterTheBundle(unittest.TestCase):
    """After the bundle step the app in the build tree is still the development one: a test
    harness (the end-to-end suite) or a person can run it."""

    def test_it_keeps_the_deps_run_path_and_starts(self):
        self.assertTrue(os.path.isfile(DEVELOPMENT_APP), f"no {DEVELOPMENT_APP}")
        paths = run_path(DEVELOPMENT_APP)
        self.assertTrue(paths and os.path.isabs(paths[0]), f"the linked .deps copy comes first: {paths}")
        out = version(DEVELOPMENT_APP)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        library = loaded_libmlx(out)
        self.assertTrue(os.path.isfile(library), library)
        self.assertEqual(os.path.realpath(os.path.dirname(library)), os.path.realpath(paths[0]),
                         "loaded from the first run-time path")
