#!/usr/bin/env bash
# Synthesize every export in this directory with Yosys and report, per module, the cell
# count, flip-flops outside memories, inferred memory bits and NAND2 gate equivalents without
# the memories (what `streamtrace area` prints;
# the same generic flow: Yosys synth without memory_map, so memories stay $mem_v2 cells).
#   verilog-out/synth.ys.sh [FILE.v ...]     (default: every *.v here)
# Needs yosys (apt-get install -y yosys, or scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")"
command -v yosys >/dev/null || { echo "yosys not found: apt-get install -y yosys (or scripts/setup.sh)" >&2; exit 1; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(*.v)
printf '%-40s %8s %11s %12s %10s\n' module cells flip-flops memory-bits nand2-eq
for f in "${files[@]}"; do
    top=$(basename "$f" .v)
    # Memory bits: RTLIL memories before mapping (SDC tag/SL tables, LSP table).
    mem=$(yosys -p "read_verilog $f; hierarchy -top $top; proc; flatten; stat" 2>&1 \
        | awk '/Printing statistics/{m=0} /Number of memory bits:/{m=$NF} END{print m}')
    # Cells and flip-flops after a generic synthesis that keeps memories (hw/src/tools.rs).
    # Then gate equivalents without the memories: every flip-flop a plain D flip-flop, Yosys's
    # CMOS transistor estimate / 4 (the transistors of a NAND2).
    log=$(yosys -p "read_verilog $f; synth -flatten -top $top -run begin:fine; opt -fast -full; opt -full; techmap; opt -fast; abc -fast; opt -fast; stat; dfflegalize -cell \$_DFF_P_ 01; opt_clean; stat -tech cmos" 2>&1)
    stat=$(echo "$log" | awk '/Executing DFFLEGALIZE/{exit} /Printing statistics/{buf=""} {buf=buf"\n"$0} END{print buf}')
    cells=$(echo "$stat" | awk '/Number of cells:/{c=$NF} END{print c}')
    ffs=$(echo "$stat" | awk '$1 ~ /^\$_S?DFFE?_/{n+=$2} END{print n+0}')
    ge=$(echo "$log" | awk '/Estimated number of transistors:/{t=$NF} END{sub(/\+$/, "", t); print int((t + 3) / 4)}')
    printf '%-40s %8s %11s %12s %10s\n' "$top" "$cells" "$ffs" "$mem" "$ge"
done
