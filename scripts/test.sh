#!/usr/bin/env bash
# Every test suite, in order of cost. Called by `make test` after setup; CI calls `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== setup scripts"
python3 -m unittest discover -s tests/setup -v

echo "== Rust"
# The house style (rustfmt.toml); clippy's warnings are fatal in the cross check below.
cargo fmt --all -- --check
# The call formats are declared by the `registry!` macro, which cargo fmt does not follow.
rustfmt --check --edition 2021 crates/engine/src/text/call_formats/*.rs
cargo test --workspace --no-fail-fast

echo "== PDF reading beside pdftotext, PyMuPDF, pypdf and pdfminer.six (tests/documents)"
# A corpus made now from known text by real producers, with the committed PDFs of producers too big
# to install here (tests/documents/committed: Chromium, LibreOffice, rsvg); Confab through the
# extract example the Rust tests just built. Fails unless Confab's word recall and order are at
# least the best other reader's and every damaged or encrypted file (PDF, DOCX, HTML) is refused.
# Seconds.
"${CONFAB_DEPS_DIR:-.deps}/docs/venv/bin/python" tests/documents/score.py --check \
  --binary "${CARGO_TARGET_DIR:-target}/debug/examples/extract"

echo "== models from the hub (confab pull against a loopback mirror of the hub's API)"
# The confab binary the Rust tests just built; the mirror listens on 127.0.0.1 only.
python3 -m unittest discover -s tests/hub -v

echo "== local server (the openai client against confab serve)"
# The confab binary the Rust tests just built; the pinned openai client from setup's venv.
"${CONFAB_DEPS_DIR:-.deps}/server/venv/bin/python" -m unittest discover -s tests/server -v
# Claude Code and Codex from npm (tests/agents/package.json) against confab serve through a
# recording proxy: a tool round trip (the proxy scripts the one call), no request refused, the
# resumed turn served from the prefix cache (~20 s).
"${CONFAB_DEPS_DIR:-.deps}/server/venv/bin/python" -m unittest discover -s tests/agents -v

echo "== UI"
# Types, lints (oxlint) and format (Prettier): ui/package.json's lint; then Vitest.
(cd ui && npm run lint && npm test)

echo "== end to end (the built app under Xvfb, through WebDriver)"
# The app binary the Rust tests just built (src-tauri/tests/links.rs asks cargo for it), with
# the UI `make test` built first: building it again here would pick other dependency features.
CONFAB_E2E_SETUP=0 CONFAB_E2E_BUILD=0 scripts/e2e.sh

echo "== crashes: kill -9 while data is written (tests/crashes)"
# A prefix-cache disk write (confab generate), a pull from the loopback hub mirror, and the app's
# store (a reply, a tool round, a document index, a settings save) killed at random moments (the
# seed is printed; CONFAB_CRASH_SEED repeats it, CONFAB_CRASH_KILLS sets the count); relaunched,
# nothing saved is lost or read half-written (about two minutes).
xvfb-run -a "${CONFAB_DEPS_DIR:-.deps}/e2e/venv/bin/python" -m unittest discover -s tests/crashes -v

echo "== confab doctor"
# Built by the tests above (same features, so no rebuild).
target/debug/confab doctor

echo "== bundle: the .deb's app finds libmlx inside the package; the development app still starts"
# The package is made from a copy of the debug app the tests built (nothing is rebuilt), given
# the bundle's run-time path in target/app-bundle/; target/debug/confab-app keeps its own, and
# test_bundle_package.py starts both. Before the cross check, whose bindgen environment would
# rebuild MLX's bindings.
CONFAB_BUNDLE_SETUP=0 scripts/bundle.sh --debug
deb=$(ls -t "${CARGO_TARGET_DIR:-target}"/app-bundle/debug/bundle/deb/*.deb | head -n 1)
CONFAB_DEB=$deb python3 -m unittest discover -s tests/setup -p test_bundle_package.py -v
echo "== first run of the .deb: unpacked into a fresh root, an empty data folder, a streamed reply"
CONFAB_DEB=$deb CONFAB_E2E_SETUP=0 CONFAB_E2E_BUILD=0 scripts/e2e.sh -k FirstRun

echo "== cross check: the workspace compiled for Apple silicon and for CUDA, up to linking"
# In the same target folder (its artifacts under target/<triple>/); see docs/building.md,
# "Cross-compile check".
scripts/cross_check.sh
