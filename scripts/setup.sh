#!/usr/bin/env bash
# Checks and completes the Rust toolchain FlatLSM needs (cargo with rustfmt and clippy).
# The machines this project runs on ship rustup; this script adds the components if missing.
set -euo pipefail
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and rerun" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || echo "setup: could not add rustfmt/clippy" >&2
fi
cargo --version
