#!/usr/bin/env bash
# Every test of the workspace, after installing what they need. This is the README's test
# command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh

echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test"
# Debug profile, with the core model optimized (root Cargo.toml): from a fresh clone on
# 2 cores the whole script (clippy, build, tests including the QEMU differential test)
# took about 4 minutes.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One closing line over every test binary (cargo's own last line is a doc-test summary).
awk '/^test result:/ {p += $4; f += $6} END {printf "tests: %d passed, %d failed\n", p, f}' "$log"
[ "$status" -eq 0 ] || exit "$status"

echo "== C API (libstreamtrace: header, C example, C tests, valgrind)"
bash scripts/capi.sh

echo "== README examples (every sh block, the slow ones included, in a copy of the tree)"
STREAMTRACE_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/streamtrace" bash scripts/readme-examples.sh --all

echo "== Slurm: scripts/slurm-sweep.sh as a 2-task array job on a one-node cluster, merged and compared"
bash scripts/slurm-selftest.sh
