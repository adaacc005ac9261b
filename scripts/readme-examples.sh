#!/usr/bin/env bash
# Runs the README's examples as a new user would: every ```sh block of README.md, in order,
# in a copy of the tracked tree (what a fresh clone holds), with this checkout's release
# build in the copy's target/release. Each block starts at the copy's root; the first
# command that exits non-zero fails the script and names its block.
#
# A block right after the line `<!-- readme-examples: skip (REASON) -->` is not run (the
# reason says why: it builds the workspace itself, or it is this test's own caller). A
# block after `<!-- readme-examples: slow -->` runs only with --all (minutes each).
#
#   scripts/readme-examples.sh          # the quick blocks (scripts/test.sh runs this)
#   scripts/readme-examples.sh --all    # also the slow ones
#   scripts/readme-examples.sh --list   # print the blocks and how each is treated
#   STREAMTRACE_BIN=target/debug/streamtrace scripts/readme-examples.sh   # use that binary
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
mode=${1:-quick}
# README_FILE: another file in the README's form (the script's own test uses one).
readme=$(realpath "${README_FILE:-README.md}")
case "$mode" in quick | --all | --list) ;; *) echo "usage: $0 [--all|--list]" >&2; exit 2 ;; esac

log() { echo "readme-examples: $*" >&2; }

# One shell script from the README: per block a header that records where it comes from,
# a cd to the tree's root, then the block's lines as written.
extract() {
    awk -v mode="$mode" '
        /^<!-- readme-examples: skip/ { pending = "skip"; next }
        /^<!-- readme-examples: slow/ { pending = "slow"; next }
        /^```sh[[:space:]]*$/ {
            n++; inblock = 1; start = NR + 1
            treat = pending == "" ? "run" : pending
            if (treat == "slow" && mode == "--all") treat = "run"
            pending = ""
            if (mode == "--list") printf "block %d (README.md:%d): %s\n", n, start, treat
            else if (treat == "run") printf "block=%d; block_start=$SECONDS; cd \"$tree\"\necho \"== README.md:%d (block %d)\" >&2\n", n, start, n
            next
        }
        inblock && /^```/ {
            inblock = 0
            if (mode != "--list" && treat == "run") printf "echo \"   block %d: $((SECONDS - block_start)) s\" >&2\n", n
            next
        }
        # Each command (a line, with its backslash continuations) in a group of its own
        # that exits on failure: set -e alone lets `cd DIR && cmd` fail silently.
        inblock {
            if (mode != "--list" && treat == "run") {
                if (cmd == "" && $0 ~ /^[[:space:]]*(#.*)?$/) { print; next }
                if (cmd == "") cstart = NR
                cmd = cmd $0 "\n"
                if ($0 !~ /\\$/) { printf "line=%d\n{\n%s} || exit $?\n", cstart, cmd; cmd = "" }
            }
            next
        }
        /[^[:space:]]/ { pending = "" }
    ' "$readme"
}

if [ "$mode" = --list ]; then
    extract
    exit 0
fi

# The binary the README's alias names: STREAMTRACE_BIN if given (scripts/test.sh passes the
# debug build its tests just made, whose simulation crates are optimized: no second
# build), else this checkout's release build.
if [ -n "${STREAMTRACE_BIN:-}" ]; then
    bin=$STREAMTRACE_BIN
    [ -x "$bin" ] || { log "STREAMTRACE_BIN=$bin is not an executable"; exit 2; }
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
    log "building the release binary"
    cargo build --release --quiet
    bin=$CARGO_TARGET_DIR/release/streamtrace
fi

tree=$(mktemp -d "${TMPDIR:-/tmp}/readme-examples.XXXXXX")
trap 'rm -rf "$tree"' EXIT
# The tracked files as they are in this checkout (so a change is tested before its commit).
git ls-files -z | while IFS= read -r -d '' f; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    mkdir -p "$tree/$(dirname "$f")"
    cp -P "$f" "$tree/$f"
done
mkdir -p "$tree/target/release"
cp "$bin" "$tree/target/release/streamtrace"

script=$tree/.readme-examples.sh
{
    echo 'set -euo pipefail'
    # The README's alias, as in an interactive shell.
    echo 'shopt -s expand_aliases'
    echo "tree='$tree'"
    echo 'block=0; line=0'
    echo 'trap '\''s=$?; [ $s -eq 0 ] || echo "readme-examples: block $block ('"$(basename "$readme")"':$line) failed with status $s" >&2'\'' EXIT'
    extract
} >"$script"
blocks=$(grep -c '^block=[1-9]' "$script" || true)
log "running $blocks blocks in $tree"
start=$SECONDS
if ! (cd "$tree" && bash "$script" >"$tree/.stdout"); then
    log "the last lines the examples printed on stdout:"
    tail -n 20 "$tree/.stdout" >&2
    exit 1
fi
log "all $blocks blocks passed in $((SECONDS - start)) s"
