"""The bundle layout: one tauri.conf.json at the top level, reachable by the tauri CLI from
src-tauri/, and platform files whose sources are where setup puts MLX and where scripts/bundle.sh stages the
default model."""

import json
import os
import plistlib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAURI_DIR = os.path.join(ROOT, "src-tauri")
# scripts/bundle.sh places the default model here before `tauri build`.
STAGED_MODELS = "../.deps/package/models"


class BundleConfig(unittest.TestCase):
    def test_src_tauri_links_reach_the_top_level_files(self):
        for name in ["tauri.conf.json", "tauri.linux.conf.json", "tauri.macos.conf.json", "Info.plist", "ui", "assets"]:
            link = os.path.join(TAURI_DIR, name)
            self.assertTrue(os.path.islink(link), f"src-tauri/{name} should be a link")
            self.assertEqual(os.path.realpath(link), os.path.realpath(os.path.join(ROOT, name)))

    def test_paths_resolve_the_same_from_both_folders(self):
        config = json.load(open(os.path.join(ROOT, "tauri.conf.json")))
        paths = [config["build"]["frontendDist"], *config["bundle"]["icon"]]
        for path in paths:
            self.assertEqual(
                os.path.realpath(os.path.join(ROOT, path)),
                os.path.realpath(os.path.join(TAURI_DIR, path)),
                path,
            )

    def test_linux_bundle_sources_exist_after_setup(self):
        config = json.load(open(os.path.join(ROOT, "tauri.linux.conf.json")))
        files = config["bundle"]["linux"]["deb"]["files"]
        self.assertIn("/usr/lib/confab/mlx/lib", files, "the binary's rpath is $ORIGIN/../lib/confab/mlx/lib")
        self.assertEqual(files["/usr/share/confab/models"], STAGED_MODELS, "the app looks in ../share/confab/models")
        for source in files.values():
            if source != STAGED_MODELS:
                self.assertTrue(os.path.isdir(os.path.join(TAURI_DIR, source)), source)
        self.assertTrue(os.path.isfile(os.path.join(TAURI_DIR, files["/usr/lib/confab/mlx/lib"], "libmlx.so")))

    def test_macos_bundle_puts_the_metallib_beside_libmlx(self):
        config = json.load(open(os.path.join(ROOT, "tauri.macos.conf.json")))
        files = dict(config["bundle"]["macOS"]["files"])
        self.assertEqual(files.pop("Resources/models"), STAGED_MODELS, "the app looks in ../Resources/models")
        self.assertEqual(
            {os.path.dirname(k) for k in files}, {"Frameworks"}, "MLX loads mlx.metallib from libmlx's folder"
        )
        self.assertEqual({os.path.basename(k) for k in files}, {"libmlx.dylib", "mlx.metallib"})
        self.assertEqual({os.path.dirname(v) for v in files.values()}, {"../.deps/mlx/metal/mlx/lib"})

    def test_macos_bundle_declares_the_microphone(self):
        # The tauri CLI merges src-tauri/Info.plist into the bundle's; without this key macOS
        # refuses the microphone to the composer (a process touching it undeclared is ended).
        with open(os.path.join(TAURI_DIR, "Info.plist"), "rb") as f:
            plist = plistlib.load(f)
        self.assertEqual(
            plist.get("NSMicrophoneUsageDescription"),
            "Confab records your voice into an audio attachment when you press the microphone button.",
        )
        self.assertNotIn("infoPlist", json.load(open(os.path.join(ROOT, "tauri.macos.conf.json")))["bundle"]["macOS"],
                         "one way in: the CLI's own src-tauri/Info.plist, not also a config path")


if __name__ == "__main__":
    unittest.main()
