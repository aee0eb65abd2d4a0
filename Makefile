# The two commands (see README.md): `make run` and `make test`. Both set up what is missing first.
.PHONY: run test setup ui app cli

setup:
	@scripts/setup.sh

ui: setup
	cd ui && npm run build

# The desktop app on the default model.
run: ui
	cargo run -p confab-app

cli: setup
	cargo build -p confab-cli

# Every test: Rust (unit, fidelity, real model), UI (Vitest), setup scripts.
test: ui
	scripts/test.sh
