#!/usr/bin/env bash
# Compiles the workspace for targets this machine cannot run, everything up to linking:
#
#   mac   aarch64-apple-darwin (Apple silicon): every crate with its macOS code paths, the app
#         included, through clippy; mlx-c against the mlx-metal wheel's headers, the engine's
#         CPU kernel and every other C/C++ build step through zig's clang and its macOS headers.
#   cuda  this machine's target (x86_64 Linux) with mlx-sys's `cuda` feature: mlx-c and the engine (its CPU
#         kernel included) against the mlx-cuda-12 wheel's headers, through clippy.
#
#   scripts/cross_check.sh [mac|cuda]...    (default: both)
#
# Linking needs Apple's SDK (frameworks, libSystem stubs) or the CUDA libraries, which are not
# here: see docs/building.md, "Cross-compile check". Tools come from scripts/setup.sh (step 7).
#
# It shares the development build's target folder: the build scripts and proc macros it compiles
# for this machine are the ones `cargo test` already built, and what it compiles for Apple
# silicon lands in target/aarch64-apple-darwin/ (for CUDA, in target/debug/ under mlx-sys's own
# feature set), so it rebuilds nothing of the development build. Run it after the tests: the
# mac check's bindgen settings make the next host build compile bindgen and mlx-sys again.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
deps=${CONFAB_DEPS_DIR:-$ROOT/.deps}
cross=$deps/cross
for need in "$cross/venv/bin/cargo-zigbuild" "$cross/mlx/metal/confab-wheel.json" "$cross/mlx/cuda-12/confab-wheel.json"; do
  [[ -e $need ]] || { echo "cross_check: $need is missing; run scripts/setup.sh" >&2; exit 1; }
done
[[ -f ui/dist/index.html ]] || { echo "cross_check: the app embeds ui/dist; run 'make ui' first" >&2; exit 1; }

# mlx-sys takes the wheel from $CONFAB_DEPS_DIR/mlx/<backend>: metal for macOS, cuda-12 with `cuda`.
export CONFAB_DEPS_DIR=$cross

# clippy, with its warnings fatal (the workspace's [workspace.lints] in Cargo.toml): this is where
# CI lints the whole workspace, for both targets, at no extra build. The libraries and binaries
# only: tests and benches hold no platform code, and checking them for arm64 would double the
# time (their dev-dependencies) within CI's budget.
lint=(--workspace)
deny=(-- -D warnings)

check_mac() {
  echo "== cross check: aarch64-apple-darwin (Metal wheel)"
  # From a new empty folder, so never one the checkout is below (a clone under /tmp, say): zig
  # names its own headers relative to the current folder when they are below it
  # (.deps/cross/...), and bindgen, run in each crate's folder, would not find them.
  # (No .cargo/config.toml is read from the checkout then; the workspace has none.)
  local outside
  outside=$(mktemp -d)
  (
  export PATH="$cross/venv/bin:$PATH"   # zig (python -m ziglang) and cargo-zigbuild
  # bindgen's libclang (PyPI's 18: Debian's 14 rejects arm64's __bf16 in mlx-c's half.h), with
  # zig's copy of clang's own headers (stddef.h, arm_bf16.h, ...).
  LIBCLANG_PATH=$(echo "$cross"/venv/lib/python3*/site-packages/clang/native)
  export LIBCLANG_PATH
  # The app's minimum macOS (tauri.macos.conf.json) and the Metal wheel's.
  export MACOSX_DEPLOYMENT_TARGET=14.0
  cd "$outside" && cargo-zigbuild clippy --manifest-path "$ROOT/Cargo.toml" "${lint[@]}" --target aarch64-apple-darwin "${deny[@]}"
  )
  rmdir "$outside"
}

check_cuda() {
  echo "== cross check: x86_64 Linux, mlx-sys/cuda (mlx-cuda-12 wheel)"
  # mlx-sys and the engine (the CPU kernel against the CUDA wheel's headers): the crates above
  # them compile the same for x86_64 Linux as the host build, which the tests already cover.
  # For the host, with the host's own bindgen setup: the build scripts and proc macros the tests
  # built are reused as they are (a `--target` build would compile them all again).
  cargo clippy -p mlx-sys -p confab-engine --features mlx-sys/cuda "${deny[@]}"
}

targets=("$@")
((${#targets[@]})) || targets=(mac cuda)
for t in "${targets[@]}"; do
  case $t in
    mac) check_mac ;;
    cuda) check_cuda ;;
    *) echo "cross_check: unknown target '$t' (mac, cuda)" >&2; exit 2 ;;
  esac
done
