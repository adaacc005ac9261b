#!/usr/bin/env bash
# Install what the build and the tests need. Idempotent: installs only what is missing, runs
# `apt-get update` only when it has something to install, and uses sudo when not root.
set -euo pipefail

# qemu-user: the independent oracle of the core model (sim/tests/qemu_diff.rs).
# binutils-arm-none-eabi: disassembly in divergence reports.
# verilator, yosys, iverilog: lint, co-simulation and synthesis of the RTL exports (hw/,
# tests/cli_hw.rs; iverilog is the second simulator hardware engineers use on them).
# fonts-dejavu-core: the text of the sweep plots (tests/cli_sweep.rs writes them).
APT_PACKAGES=(qemu-user binutils-arm-none-eabi verilator yosys iverilog fonts-dejavu-core)

log() { echo "setup: $*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        log "need root (or sudo) to run: $*"
        exit 1
    fi
}

# System packages.
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        log "missing system packages ${missing[*]} and no apt-get to install them"
        exit 1
    fi
    log "installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    log "system packages: nothing to install"
fi

# Rust toolchain.
if ! command -v cargo >/dev/null 2>&1; then
    log "cargo not found: install a Rust toolchain (https://rustup.rs) and re-run"
    exit 1
fi

# clippy: CI runs it on every change, so it must be there, never silently skipped.
if ! cargo clippy --version >/dev/null 2>&1; then
    if command -v rustup >/dev/null 2>&1; then
        log "installing clippy"
        rustup component add clippy
    else
        log "cargo clippy is missing and rustup is not available to add it"
        exit 1
    fi
fi
log "$(cargo --version); $(cargo clippy --version)"
