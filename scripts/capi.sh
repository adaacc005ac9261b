#!/usr/bin/env bash
# libstreamtrace, the decoder's C API (capi/, docs/decoder.md): build the library, check
# that the committed header equals what cbindgen generates now, compile the C example and
# the C tests with the system C compiler against the header and the built library, run
# them (the tests decode committed golden vectors to their expected addresses; the example
# must print exactly the addresses `streamtrace decode -o` prints), and run both under
# valgrind, failing on any invalid access or leak. Called by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=${CARGO_TARGET_DIR:-$PWD/target}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

cargo build -q -p streamtrace-capi
cargo build -q --bin streamtrace
lib="$target/debug"

cbindgen --quiet --config capi/cbindgen.toml --crate streamtrace-capi --output "$out/streamtrace.h"
if ! diff -u capi/include/streamtrace.h "$out/streamtrace.h"; then
    echo "capi: capi/include/streamtrace.h is stale; regenerate it with" >&2
    echo "  cbindgen --config capi/cbindgen.toml --crate streamtrace-capi --output capi/include/streamtrace.h" >&2
    exit 1
fi

cflags=(-std=c99 -O1 -g -Wall -Wextra -Werror -pedantic -I capi/include)
# The example links the static library, the tests the shared one.
cc "${cflags[@]}" examples/c/decode.c "$lib/libstreamtrace.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$out/decode"
cc "${cflags[@]}" capi/tests/c/test_capi.c -L "$lib" -lstreamtrace -Wl,-rpath,"$lib" -o "$out/test_capi"

vectors=(testbenches/vectors/interworking.stv testbenches/vectors/fig4.stv testbenches/vectors/exception-after-dcond.stv
    testbenches/vectors/isa-arm.stv testbenches/vectors/maxsl-cut.stv)
echo "== C API tests (golden vectors ${vectors[*]##*/})"
"$out/test_capi" "${vectors[@]}" -- isa/tests/data/tiny.elf

vg=(valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect)
echo "== C API tests under valgrind"
"${vg[@]}" "$out/test_capi" "${vectors[@]}" -- isa/tests/data/tiny.elf

echo "== C example against streamtrace decode"
st="$target/debug/streamtrace"
progs=testbenches/programs
for cfg in pft rsdc-32x4-128,sync=20000 nexs; do
    # The C library takes what a probe captures: the bare bit stream (--raw), not a trace file.
    "$st" run -c "$cfg" --trace-out "$out/t.trace" --raw "$progs/bin/sha256_thumb.elf" 96 >/dev/null 2>&1
    "$st" decode --raw -c "$cfg" --elf "$progs/bin/sha256_thumb.elf" -t "$out/t.trace" -o "$out/rust.txt" >/dev/null
    "$out/decode" "$cfg" - "$progs/bin/sha256_thumb.elf" <"$out/t.trace" >"$out/c.txt" 2>"$out/c.err"
    cmp "$out/rust.txt" "$out/c.txt"
    echo "$cfg: $(wc -l <"$out/c.txt") addresses equal ($(tail -1 "$out/c.err"))"
done
echo "== C example on trace files (configuration from the header)"
for cfg in pft rsdc-32x4-128,sync=20000; do
    "$st" run -c "$cfg" --trace-out "$out/t.stf" "$progs/bin/sha256_thumb.elf" 96 >/dev/null 2>&1
    "$st" decode --elf "$progs/bin/sha256_thumb.elf" -t "$out/t.stf" -o "$out/rust.txt" >/dev/null
    "$out/decode" file "$out/t.stf" "$progs/bin/sha256_thumb.elf" >"$out/c.txt" 2>"$out/c.err"
    cmp "$out/rust.txt" "$out/c.txt"
    grep -q "the trace file's configuration: $cfg" "$out/c.err" || { cat "$out/c.err"; exit 1; }
    echo "$cfg: $(wc -l <"$out/c.txt") addresses equal ($(tail -1 "$out/c.err"))"
done
# A flipped bit inside a block: its CRC fails, an Error element says so, exit 1. A file cut short
# and a file with bytes after it: ST_ERR_TRACE_FILE naming the byte, exit 1.
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[len(b) // 2] ^= 0x10; open(sys.argv[2], "wb").write(b)' "$out/t.stf" "$out/flip.stf"
size=$(stat -c %s "$out/t.stf")
head -c $((size - 7)) "$out/t.stf" >"$out/cut.stf"
{ cat "$out/t.stf"; printf 'junk'; } >"$out/tail.stf"
for bad in flip cut tail; do
    if "$out/decode" file "$out/$bad.stf" "$progs/bin/sha256_thumb.elf" >/dev/null 2>"$out/bad.err"; then
        echo "capi: the C example accepted the damaged trace file ($bad)" >&2
        exit 1
    fi
    case $bad in
        flip) want="damaged block" ;;
        cut) want="truncated" ;;
        tail) want="after the trailer" ;;
    esac
    grep -q "$want" "$out/bad.err" || { echo "capi: $bad: no '$want' in:" >&2; cat "$out/bad.err" >&2; exit 1; }
    echo "$bad trace file: refused ($(grep -m1 "$want" "$out/bad.err"))"
done

"$st" run -c pft --trace-out "$out/tiny.trace" --raw "$progs/bin/tiny.elf" >/dev/null 2>&1
"${vg[@]}" "$out/decode" pft "$out/tiny.trace" "$progs/bin/tiny.elf" >/dev/null 2>"$out/vg.err" || { cat "$out/vg.err"; exit 1; }
echo "C example under valgrind: clean ($(tail -1 "$out/vg.err"))"
# Exit 1 (the trace file is refused), not valgrind's 99.
rc=0
"${vg[@]}" "$out/decode" file "$out/cut.stf" "$progs/bin/sha256_thumb.elf" >/dev/null 2>"$out/vg.err" || rc=$?
[ "$rc" = 1 ] || { cat "$out/vg.err"; echo "capi: exit $rc under valgrind" >&2; exit 1; }
echo "C example on a cut trace file under valgrind: clean"
