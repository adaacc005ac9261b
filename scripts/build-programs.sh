#!/usr/bin/env bash
# Build the ARM test programs of testbenches/programs/ and (with --manifest) run each one
# under QEMU to record its output, exit status, instruction count and QEMU's HEAPINFO stack
# base in testbenches/programs/programs.json.
#
#   scripts/build-programs.sh              # compile src/*.c -> bin/*.elf
#   scripts/build-programs.sh --manifest   # compile, then run under QEMU and write programs.json
#   scripts/build-programs.sh --check      # compile into a temporary directory and compare
#
# Needs: gcc-arm-none-eabi libnewlib-arm-none-eabi (compile), qemu-user (manifest), python3
# (manifest). Install: apt-get update && apt-get install -y gcc-arm-none-eabi \
#   libnewlib-arm-none-eabi qemu-user python3
#
# The ELFs are committed, so tests never need the cross compiler. They keep their symbol
# table (--strip-debug, not -s) for disassembly in reports.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROG="$ROOT/testbenches/programs"
CC=arm-none-eabi-gcc
STRIP=arm-none-eabi-strip
CFLAGS=(-mcpu=xscale -O2 -specs=rdimon.specs -Wall -Wextra -Werror -fno-ident)

# name | state (arm/thumb) | manifest arguments (after argv[0])
PROGRAMS=(
  "tiny|arm|"
  "bitcount|arm|15000"
  "qsort_structs|arm|6000"
  "basicmath|arm|4000"
  "dijkstra|thumb|24 80"
  "patricia|arm|30000 1500"
  "aes|arm|400"
  "sha256|arm|768"
  "sha256_thumb|thumb|96"
  "crc32|arm|data/lorem.txt 12"
  "fft|arm|60 8"
  "adpcm|thumb|60000"
  "jpeg_dct|arm|128 96"
  "stringsearch|thumb|48 lorem zz"
)

# System-mode (bare-metal) programs of testbenches/programs/system: name | state.
SYSTEM_PROGRAMS=(
  "sys_timer|arm"
  "sys_io|arm"
  "sys_io_thumb|thumb"
)
SYS="$PROG/system"
SYS_CFLAGS=(-mcpu=xscale -O2 -nostdlib -ffreestanding -Wall -Wextra -Werror -fno-ident -T "$SYS/src/system.ld" -I"$SYS/src")

mode=build
case "${1:-}" in
  --manifest) mode=manifest ;;
  --check) mode=check ;;
  "") ;;
  *) echo "usage: $0 [--manifest|--check]" >&2; exit 2 ;;
esac

if ! command -v "$CC" >/dev/null; then
  echo "error: $CC not found; install: apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi" >&2
  exit 1
fi

OUT="$PROG/bin"
if [ "$mode" = check ]; then
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
fi
mkdir -p "$OUT"

for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r name state _args <<<"$entry"
  src="$PROG/src/${name%_thumb}.c"
  flags=("${CFLAGS[@]}")
  [ "$state" = thumb ] && flags+=(-mthumb)
  "$CC" "${flags[@]}" -I"$PROG/src" "$src" -o "$OUT/$name.elf"
  "$STRIP" --strip-debug "$OUT/$name.elf"
  echo "built $name ($state): $(stat -c %s "$OUT/$name.elf") bytes"
done

SYS_OUT="$SYS/bin"
[ "$mode" = check ] && SYS_OUT="$OUT/system" && mkdir -p "$SYS_OUT"
for entry in "${SYSTEM_PROGRAMS[@]}"; do
  IFS='|' read -r name state <<<"$entry"
  flags=("${SYS_CFLAGS[@]}")
  [ "$state" = thumb ] && flags+=(-mthumb)
  # start.S is ARM code; platform.c keeps its coprocessor and CPSR helpers in ARM state.
  "$CC" "${flags[@]}" "$SYS/src/start.S" "$SYS/src/platform.c" "$SYS/src/${name%_thumb}.c" -lgcc -o "$SYS_OUT/$name.elf"
  "$STRIP" --strip-debug "$SYS_OUT/$name.elf"
  echo "built system/$name ($state): $(stat -c %s "$SYS_OUT/$name.elf") bytes"
done

# compare BUILT_DIR COMMITTED_DIR LABEL ENTRY...: every built ELF must equal the committed one.
status=0
compare() {
  local built="$1" committed="$2" label="$3" entry name
  shift 3
  for entry in "$@"; do
    name="${entry%%|*}"
    if ! cmp -s "$built/$name.elf" "$committed/$name.elf"; then
      echo "differs from the committed ELF: $label/$name.elf" >&2
      status=1
    fi
  done
}

if [ "$mode" = check ]; then
  compare "$OUT" "$PROG/bin" bin "${PROGRAMS[@]}"
  compare "$SYS_OUT" "$SYS/bin" system/bin "${SYSTEM_PROGRAMS[@]}"
  exit $status
fi

total=$(cat "$PROG"/bin/*.elf | wc -c)
echo "total ELF size: $total bytes"
[ "$mode" = manifest ] || exit 0

# ---- manifest: run every program under QEMU (recipe of xscale-timing.md section 4) ----
command -v qemu-arm >/dev/null || { echo "error: qemu-arm not found; install: apt-get install -y qemu-user" >&2; exit 1; }
command -v python3 >/dev/null || { echo "error: python3 not found" >&2; exit 1; }
qver="$(qemu-arm --version | head -1 | sed -E 's/.*version ([0-9]+)\.([0-9]+).*/\1 \2/')"
read -r qmaj qmin <<<"$qver"
if [ "$qmaj" -gt 8 ] || { [ "$qmaj" -eq 8 ] && [ "$qmin" -ge 1 ]; }; then ONE=-one-insn-per-tb; else ONE=-singlestep; fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
: >"$TMP/rows"
cd "$PROG"
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r name state args <<<"$entry"
  # shellcheck disable=SC2086
  set -- $args
  # Output, exit status (stdout to a file, never a terminal; stdin empty).
  set +e
  env -i qemu-arm -cpu pxa270 "bin/$name.elf" "$@" >"$TMP/$name.out" </dev/null
  code=$?
  # Retired instructions: one exec line per instruction with one instruction per TB.
  insns=$(env -i qemu-arm -cpu pxa270 $ONE -d exec,nochain -D /dev/fd/3 "bin/$name.elf" "$@" 3>&1 >/dev/null </dev/null \
          | grep -c '^Trace')
  # Stack base = SP at the first instruction (QEMU's HEAPINFO returns its start_stack).
  sp=$(env -i qemu-arm -cpu pxa270 $ONE -d cpu,nochain -D /dev/fd/3 "bin/$name.elf" "$@" 3>&1 >/dev/null </dev/null \
       | grep -m1 -o 'R13=[0-9a-f]*' | cut -d= -f2)
  set -e
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$state" "$args" "$code" "$insns" "$sp" >>"$TMP/rows"
  echo "ran $name: exit $code, $insns instructions, stack base 0x$sp"
done
QEMU_VERSION="$(qemu-arm --version | head -1)" python3 - "$TMP" "$PROG/programs.json" <<'EOF'
import json, os, sys
tmp, dest = sys.argv[1], sys.argv[2]
progs = []
for line in open(os.path.join(tmp, "rows")):
    name, state, args, code, insns, sp = line.rstrip("\n").split("\t")
    out = open(os.path.join(tmp, name + ".out"), "rb").read().decode()
    argv = args.split() if args else []
    progs.append({
        "name": name,
        "elf": f"bin/{name}.elf",
        "state": state,
        "args": argv,
        "cmdline": " ".join([f"bin/{name}.elf"] + argv),
        "exit_code": int(code),
        "stdout": out,
        "checksum_line": out.rstrip("\n").split("\n")[-1],
        "qemu_instructions": int(insns),
        "qemu_stack_base": "0x" + sp,
    })
doc = {
    "about": "Test programs of streamtrace: run from testbenches/programs with argv[0] = elf; "
             "outputs and instruction counts recorded by scripts/build-programs.sh --manifest "
             "under `env -i qemu-arm -cpu pxa270` (one instruction per TB, -d exec,nochain). "
             "qemu_instructions counts QEMU's exec lines, in which a Thumb BL/BLX pair is one "
             "line (the simulator retires its two halves).",
    "qemu_version": os.environ["QEMU_VERSION"],
    "programs": progs,
}
with open(dest, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("wrote", dest)
EOF
