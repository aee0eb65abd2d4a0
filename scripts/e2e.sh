#!/usr/bin/env bash
# End-to-end tests of the real, built app: the UI built into the debug binary, driven through
# WebDriver (tauri-driver + WebKitWebDriver) under Xvfb, one fresh CONFAB_HOME per test class
# with the installed default model linked in. Linux only.
#
#   scripts/e2e.sh                 setup, build, every test in tests/e2e
#   scripts/e2e.sh -k Chat         only tests matching (unittest -k); other args go to unittest
#   CONFAB_E2E_BUILD=0 ...         use the binary as built (CONFAB_E2E_APP picks another one)
#   CONFAB_E2E_SETUP=0 ...         skip scripts/setup.sh
#   CONFAB_E2E_SLOW=2 ...          double every timeout (a busy machine)
#
# Screenshots (light and dark, main screens; FAILED-*.png for failures) go to
# target/e2e-screenshots/, logs of each launch (tauri-driver and the app) to target/e2e-logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { printf '\033[1me2e:\033[0m %s\n' "$*"; }

[[ "$(uname -s)" == Linux ]] || { echo "e2e: WebKitWebDriver runs on Linux only" >&2; exit 1; }

if [[ "${CONFAB_E2E_SETUP:-1}" != 0 ]]; then
  scripts/setup.sh
fi
deps=${CONFAB_DEPS_DIR:-$ROOT/.deps}
venv=$deps/e2e/venv

if [[ "${CONFAB_E2E_BUILD:-1}" != 0 ]]; then
  say "building the UI"
  (cd ui && nice -n 10 npm run build)
  say "building confab-app and confab (debug; the remote-provider tests run confab serve)"
  nice -n 10 cargo build -p confab-app -p confab-cli
fi

target=${CARGO_TARGET_DIR:-$ROOT/target}
export CONFAB_E2E_APP=${CONFAB_E2E_APP:-$target/debug/confab-app}
[[ -x "$CONFAB_E2E_APP" ]] || { echo "e2e: no app at $CONFAB_E2E_APP" >&2; exit 1; }
export CONFAB_E2E_SCREENSHOTS=${CONFAB_E2E_SCREENSHOTS:-$ROOT/target/e2e-screenshots}
export CONFAB_E2E_LOGS=${CONFAB_E2E_LOGS:-$ROOT/target/e2e-logs}
rm -rf "$CONFAB_E2E_SCREENSHOTS" "$CONFAB_E2E_LOGS"
mkdir -p "$CONFAB_E2E_SCREENSHOTS" "$CONFAB_E2E_LOGS"
# Both made WebDriver screenshots hang.
unset WEBKIT_DISABLE_COMPOSITING_MODE WEBKIT_DISABLE_DMABUF_RENDERER

say "running tests/e2e against $CONFAB_E2E_APP"
status=0
xvfb-run -a -s "-screen 0 1400x900x24" \
  "$venv/bin/python" -m unittest discover -s tests/e2e -t tests/e2e -v "$@" || status=$?
say "screenshots in $CONFAB_E2E_SCREENSHOTS, logs in $CONFAB_E2E_LOGS"
exit $status
