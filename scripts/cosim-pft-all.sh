#!/bin/bash
# Co-simulate the pft RTL (Verilator) against the model's cycle mode on every test program,
# first 3 M instructions, with the default buffers and with sdb=1,obuf=40: one line per run,
# the program, the buffers and `streamtrace cosim --json`'s result (a mismatch is printed as
# the error). Needs `cargo build --release` and verilator. About 6 minutes.
cd "$(dirname "$0")/../testbenches/programs"
S="$(cd ../.. && pwd)/target/release/streamtrace"
python3 -c "
import json
for p in json.load(open('programs.json'))['programs']:
    print(p['name'], p['elf'], ' '.join(p['args']))" | while read name elf args; do
  for b in "" "sdb=1,obuf=40"; do
    r=$(nice $S cosim -c pft --buffers "$b" --max-insns 3000000 --json $elf $args 2>&1 | tail -1)
    echo "$name [$b] $r"
  done
done
