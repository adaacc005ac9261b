#!/usr/bin/env bash
# Every test of the workspace, after installing what they need. This is the README's test
# command and what .ci/run calls.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh

echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test"
# Debug profile: from a cold target/ on 2 cores, build + run of the whole suite took 53 s in
# debug and 89 s in release (the optimized compile costs more than the tests save). Revisit
# when long-running tests arrive.
cargo test --workspace
