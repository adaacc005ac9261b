#!/usr/bin/env bash
# Whole runs of every Linux workload (testbenches/linux) against QEMU, PC by PC
# (sim/tests/qemu_linux.rs, the --ignored test; about 1.3 G QEMU lines). The test suite
# compares the first 2 M lines of each. Options pass through as environment variables:
#   STREAMTRACE_LINUX_DIFF_ONLY=gzip9,sort   only these workloads
#   STREAMTRACE_LINUX_DIFF_JOBS=N            workloads at once (default: the cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec cargo test -p streamtrace-sim --test qemu_linux -- --ignored --nocapture linux_workloads_whole_runs
