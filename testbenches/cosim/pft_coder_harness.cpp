// Verilator replay bench for the pft range coder block alone (hw/src/pft/coder.rs).
//
// VECTORS (written by the Rust side, `vectors_text`): one line per cycle,
//   "RESET STEP VALID KIND ESCAPE HIT FIXED CTX VALUE BITS BUSY OUT_VALID OUT_BYTE"
// VALUE and OUT_BYTE in hex, the rest decimal (BUSY 2: not checked, a reset cycle); '#'
// starts a comment. Each cycle: apply the inputs with the clock low, settle, compare `busy`
// (from registers) and the Mealy outputs `out_valid` and `out_byte` with the expectation,
// then clock. The coder works one step per cycle (docs/trace-timing.md 7, version 1.3).
//
// Usage: pft_coder_harness VECTORS. Exit 0 when every cycle agrees, 1 at the first mismatch
// (printed with the vector line and both values), 2 on bad input.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "Vtop.h"
#include "verilated.h"

static void bad_input(const char* file, size_t line, const std::string& why) {
    std::fprintf(stderr, "pft_coder_harness: %s:%zu: %s\n", file, line, why.c_str());
    std::exit(2);
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) bad_input(argv[1], 0, "cannot open");

    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(ctx.get());
    top->clock = 0;
    top->reset = 0;
    top->step = 0;
    top->op_valid = 0;
    top->eval();

    std::string line;
    size_t n = 0;
    uint64_t cycles = 0, ops = 0, bytes = 0;
    while (std::getline(in, line)) {
        n++;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream s(line);
        unsigned reset, step, valid, kind, escape, hit, fixed, ctxi, bits, busy, out_valid;
        std::string value, byte;
        if (!(s >> reset >> step >> valid >> kind >> escape >> hit >> fixed >> ctxi >> value >> bits >> busy >> out_valid >>
              byte))
            bad_input(argv[1], n, "expected RESET STEP VALID KIND ESCAPE HIT FIXED CTX VALUE BITS BUSY OUT_VALID OUT_BYTE");
        char* end = nullptr;
        const unsigned long v = std::strtoul(value.c_str(), &end, 16);
        if (*end != '\0' || v > 0xFFFF) bad_input(argv[1], n, "VALUE must be at most 4 hex digits");
        const unsigned long want = std::strtoul(byte.c_str(), &end, 16);
        if (*end != '\0' || want > 0xFF) bad_input(argv[1], n, "OUT_BYTE must be at most 2 hex digits");
        if (busy > 2 || out_valid > 1) bad_input(argv[1], n, "BUSY is 0, 1 or 2 and OUT_VALID 0 or 1");

        top->reset = reset;
        top->step = step;
        top->op_valid = valid;
        top->op_kind = kind;
        top->op_escape = escape;
        top->op_hit = hit;
        top->op_fixed = fixed;
        top->op_ctx = ctxi;
        top->op_value = (uint16_t)v;
        top->op_bits = bits;
        top->eval();

        const bool same = (busy == 2 || top->busy == busy) && top->out_valid == out_valid &&
                          (!out_valid || top->out_byte == want);
        if (!same) {
            std::printf("MISMATCH line=%zu cycle=%llu rtl_busy=%u rtl_valid=%u rtl_byte=%02x model_busy=%u model_valid=%u "
                        "model_byte=%02lx\n",
                        n, (unsigned long long)cycles, (unsigned)top->busy, (unsigned)top->out_valid,
                        (unsigned)top->out_byte, busy, out_valid, want);
            return 1;
        }
        cycles++;
        if (valid) ops++;
        bytes += out_valid;
        top->clock = 1;
        top->eval();
        top->clock = 0;
        top->eval();
    }
    std::printf("OK cycles=%llu ops=%llu bytes=%llu\n", (unsigned long long)cycles, (unsigned long long)ops,
                (unsigned long long)bytes);
    return 0;
}
