#!/usr/bin/env bash
# Build our own C programs (testbenches/programs/src) as static ARM Linux (EABI, glibc)
# executables, each in an ARM and a Thumb variant, into testbenches/linux/bin/ (gitignored).
#
#   testbenches/linux/build.sh              # build bin/NAME_arm and bin/NAME_thumb
#   testbenches/linux/build.sh --if-missing # build only when a binary is missing
#   testbenches/linux/build.sh --compare    # build, then run each variant under QEMU with the
#                                           # arguments of testbenches/programs/programs.json
#                                           # and compare its stdout with the semihosting ELF's
#
# Needs: gcc-arm-linux-gnueabi and libc6-dev-armel-cross (scripts/setup.sh installs them),
# qemu-user and python3 for --compare. After building, the sha256 of every binary is compared
# with the one recorded in programs.json: a different toolchain (another Debian cross gcc or
# glibc) gives other binaries, for which the recorded outputs still hold but the recorded
# instruction counts do not; re-record with scripts/linux-manifest.sh then.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/../programs/src"
SEMI="$HERE/../programs"
OUT="$HERE/bin"
CC=arm-linux-gnueabi-gcc
STRIP=arm-linux-gnueabi-strip
CFLAGS=(-static -O2 -march=armv5te -Wall -Wextra -Werror -fno-ident)

# The programs of testbenches/programs/src built here. Left out: tiny (start-up only, a few
# thousand instructions), crc32 (reads testbenches/programs/data/lorem.txt, outside this
# directory). The sources are plain C with printf: no change was needed for glibc.
PROGRAMS=(sha256 dijkstra qsort_structs jpeg_dct aes adpcm bitcount stringsearch)

log() { echo "linux/build.sh: $*" >&2; }

mode=build
case "${1:-}" in
    --if-missing) mode=if-missing ;;
    --compare) mode=compare ;;
    "") ;;
    *) echo "usage: $0 [--if-missing|--compare]" >&2; exit 2 ;;
esac

if [ "$mode" = if-missing ]; then
    all=1
    for name in "${PROGRAMS[@]}"; do
        for state in arm thumb; do [ -f "$OUT/${name}_$state" ] || all=0; done
    done
    [ "$all" = 1 ] && exit 0
fi

command -v "$CC" >/dev/null || { log "$CC not found; install: apt-get install -y gcc-arm-linux-gnueabi libc6-dev-armel-cross (or run scripts/setup.sh)"; exit 1; }
mkdir -p "$OUT"
for name in "${PROGRAMS[@]}"; do
    for state in arm thumb; do
        "$CC" "${CFLAGS[@]}" "-m$state" -I"$SRC" "$SRC/$name.c" -o "$OUT/${name}_$state.tmp"
        "$STRIP" --strip-debug "$OUT/${name}_$state.tmp"
        mv "$OUT/${name}_$state.tmp" "$OUT/${name}_$state"
    done
done
log "built ${#PROGRAMS[@]} programs x {arm, thumb} into testbenches/linux/bin"

# Compare with the sha256 of the manifest (only for the binaries it lists).
python3 - "$HERE/programs.json" "$HERE" <<'EOF'
import hashlib, json, os, sys
m = json.load(open(sys.argv[1]))
bad = []
for p in m["programs"]:
    if p.get("kind") != "own" or "sha256" not in p:
        continue
    path = os.path.join(sys.argv[2], p["elf"])
    if hashlib.sha256(open(path, "rb").read()).hexdigest() != p["sha256"]:
        bad.append(p["elf"])
if bad:
    print("linux/build.sh: warning: these binaries differ from the sha256 recorded in "
          "programs.json (another toolchain?), so their recorded instruction counts do not "
          "apply: " + ", ".join(bad), file=sys.stderr)
EOF

[ "$mode" = compare ] || exit 0

# ---- compare with the semihosting builds, with their manifest arguments ----
status=0
while IFS=$'\t' read -r name args; do
    for state in arm thumb; do
        # shellcheck disable=SC2086
        semi="$(cd "$SEMI" && env -i qemu-arm -cpu pxa270 "bin/$name.elf" $args </dev/null)"
        # shellcheck disable=SC2086
        lin="$(cd "$HERE" && env -i qemu-arm -cpu pxa270 "bin/${name}_$state" $args </dev/null)"
        if [ "$semi" = "$lin" ]; then
            echo "same output: ${name}_$state $args"
        else
            echo "DIFFERENT output: ${name}_$state $args" >&2
            diff <(echo "$semi") <(echo "$lin") >&2 || true
            status=1
        fi
    done
done < <(python3 - "$SEMI/programs.json" "${PROGRAMS[@]}" <<'EOF'
import json, sys
want = set(sys.argv[2:])
for p in json.load(open(sys.argv[1]))["programs"]:
    if p["name"] in want:
        print(p["name"] + "\t" + " ".join(p["args"]))
EOF
)
exit $status
