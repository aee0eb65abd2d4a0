# The two commands (see README.md): `make run` and `make test`. Both set up what is missing first.
.PHONY: run test setup ui app cli bench

setup:
	@scripts/setup.sh

# Chat with the default model in the terminal. (The desktop app becomes `make run` once it can
# chat; until then `make app` opens its shell.)
run: setup
	cargo run -q --release -p confab-cli -- chat --stats

ui: setup
	cd ui && npm run build

# The desktop app's window (an early shell: MLX runtime and default-model status).
app: ui
	cargo run -p confab-app

cli: setup
	cargo build --release -p confab-cli

# Confab against mlx-lm, side by side (several minutes).
bench: setup
	python3 bench/run.py

# Every test: Rust (unit, fidelity, real model), UI (Vitest), setup scripts.
test: ui
	scripts/test.sh
