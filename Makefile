# The two commands (see README.md): `make run` and `make test`. Both set up what is missing first.
.PHONY: run chat test setup ui app cli bench fuzz

setup:
	@scripts/setup.sh

# The desktop app on the default model (an optimised build; the first one takes a while).
run: ui
	cargo run -q --release -p confab-app

# Chat with the default model in the terminal.
chat: setup
	cargo run -q --release -p confab-cli -- chat --stats

ui: setup
	cd ui && npm run build

# The desktop app, debug build (quicker to build, the same window).
app: ui
	cargo run -p confab-app

cli: setup
	cargo build --release -p confab-cli

# Confab against mlx-lm, side by side (several minutes).
bench: setup
	python3 bench/run.py

# Every parser of untrusted bytes under libFuzzer, FUZZ_SECONDS each (default 120; nightly and
# cargo-fuzz are installed when missing). `make test` runs a few seconds of each.
fuzz: setup
	scripts/fuzz.sh

# Every test: Rust (unit, fidelity, real model), UI (Vitest), setup scripts.
test: ui
	scripts/test.sh
