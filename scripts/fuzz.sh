#!/usr/bin/env bash
# `make fuzz`: every target of crates/fuzz (or those named) under cargo-fuzz and libFuzzer,
# coverage guided, for FUZZ_SECONDS each (default 120), seeded from the test fixtures and
# fuzz/corpus/. Installs the nightly toolchain and cargo-fuzz when missing. Prints, per target,
# the inputs run, executions a second, coverage (libFuzzer's edges) and crashes; a crash's input
# is kept in fuzz/artifacts/<target>/ (reproduce: cargo +nightly fuzz run <target> <file>).
# Outside `make test`, which runs a short smoke of the same targets (crates/fuzz/tests/smoke.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-120}
# The sanitized build's folder (worktrees can share one: FUZZ_TARGET_DIR=/some/where).
fuzz_target_dir=$(realpath -m "${FUZZ_TARGET_DIR:-fuzz/target}")

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

cargo build -q -p confab-fuzz --features seeds --bin fuzz-seeds
seeds=${CARGO_TARGET_DIR:-target}/debug/fuzz-seeds
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <("$seeds" --list)

# One build for every target (address sanitizer, optimised, debug assertions on).
(cd fuzz && cargo +nightly fuzz build --target-dir "$fuzz_target_dir")

mkdir -p fuzz/logs
summary=()
failed=0
for target in "${targets[@]}"; do
  corpus=fuzz/corpus-run/$target
  "$seeds" "$target" "$corpus"
  dict=()
  [ -f "fuzz/dictionaries/$target.dict" ] && dict=("-dict=dictionaries/$target.dict")
  log=fuzz/logs/$target.log
  echo "== $target (${seconds} s)"
  status=0
  # -rss_limit_mb: an input that makes us allocate gigabytes is a finding, as a crash is.
  (cd fuzz && cargo +nightly fuzz run --target-dir "$fuzz_target_dir" "$target" "corpus-run/$target" -- \
      -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
      "${dict[@]}") >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  crashes=$(ls "fuzz/artifacts/$target" 2>/dev/null | wc -l)
  [ "$status" -eq 0 ] || failed=1
  summary+=("$(printf '%-24s %10s runs %8s/s  cov %6s  crashes %s%s' "$target" "${runs:-?}" "${rate:-?}" "${cov:-?}" "$crashes" \
    "$([ "$status" -eq 0 ] || echo "  (exit $status: see $log)")")")
done

echo
echo "== fuzzing, ${seconds} s a target"
printf '%s\n' "${summary[@]}"
exit $failed
