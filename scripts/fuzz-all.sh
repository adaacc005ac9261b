#!/usr/bin/env bash
# Run every cargo-fuzz target of fuzz/ for the same time each, one after the other, and print
# a summary line per target (executions, coverage, corpus, findings) for docs/fuzzing.md.
# Not part of the test command (minutes per target); the reliability issue asks for at least
# ten minutes each.
#
#   scripts/fuzz-all.sh [SECONDS]        # default 600 per target
#   NICE=19 scripts/fuzz-all.sh 600      # on idle CPU only, beside other work
#
# Needs cargo-fuzz (cargo install cargo-fuzz); stable rustc with RUSTC_BOOTSTRAP=1 (see
# docs/fuzzing.md). Corpora persist in fuzz/corpus/<target> (git-ignored); findings land in
# fuzz/artifacts/<target> and make the script exit 1 after the rest have run.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"
secs=${1:-600}
logs=$(mktemp -d)
status=0
targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^streamtrace-fuzz$')
export RUSTC_BOOTSTRAP=1
RUSTC_BOOTSTRAP=1 cargo fuzz build -s none -a >/dev/null 2>&1 || { echo "fuzz-all: cargo fuzz build failed" >&2; exit 2; }
for t in $targets; do
    mkdir -p "corpus/$t"
    before=$(find "corpus/$t" -type f | wc -l)
    # elf_image's seeds are whole program ELFs (up to 600 KB); the others keep libFuzzer's
    # default input length.
    extra=()
    [ "$t" = elf_image ] && extra=(-max_len=1200000)
    nice -n "${NICE:-0}" cargo fuzz run -s none -a "$t" -- -max_total_time="$secs" "${extra[@]}" >"$logs/$t.log" 2>&1
    rc=$?
    after=$(find "corpus/$t" -type f | wc -l)
    done_line=$(grep -E "^Done [0-9]+ runs" "$logs/$t.log" | tail -1)
    cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+" "$logs/$t.log" | tail -1)
    if [ "$rc" = 0 ]; then finding=none; else finding="FAILED (exit $rc; see fuzz/artifacts/$t)"; status=1; fi
    echo "$t: ${done_line:-no runs} | $cov | corpus $before -> $after | $finding"
done
rm -rf "$logs"
exit $status
