"""The installable package as a user gets it: the .deb's app binary finds libmlx inside the
package (or the system's library folders), and names no path of the machine that built it; the
package carries the default model, which the app installs into the models folder on first launch.

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


def run_path(binary: str) -> list[str]:
    """The binary's RUNPATH (or RPATH) entries, as readelf shows them."""
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    found = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library (?:runpath|rpath): \[(.*)\]", out)
    return [p for entry in found for p in entry.split(":")]


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

    def test_no_absolute_run_path(self):
        # (Strings such as debug info may still name the build folder; only the search path
        # decides which libmlx loads.)
        for entry in run_path(self.binary):
            self.assertTrue(entry.startswith("$ORIGIN/"), entry)

    def test_the_package_carries_the_default_model_as_the_manifest_says(self):
        # Where crates/engine/src/paths.rs (packaged_model_folders) looks, beside usr/bin.
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
