// Verilator replay bench for the pft range coder block alone (hw/src/pft/coder.rs).
//
// VECTORS (written by the Rust side, `vectors_text`): one line per cycle,
//   "RESET VALID KIND ESCAPE HIT FIXED CTX VALUE BITS OUT_LEN OUT_BYTES"
// VALUE and OUT_BYTES in hex (OUT_BYTES 128 bits, 32 digits), the rest decimal; '#' starts
// a comment. Each cycle: apply the inputs with the clock low, settle, compare the Mealy
// outputs `out_len` and `out_bytes` with the expectation, then clock.
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

// 32 hex digits -> four 32-bit words, least significant first (VlWide order).
static bool parse_word128(const std::string& hex, uint32_t w[4]) {
    if (hex.size() != 32) return false;
    for (int i = 0; i < 4; i++) {
        const std::string part = hex.substr(32 - 8 * (i + 1), 8);
        char* end = nullptr;
        w[i] = (uint32_t)std::strtoul(part.c_str(), &end, 16);
        if (*end != '\0') return false;
    }
    return true;
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
    top->op_valid = 0;
    top->eval();

    std::string line;
    size_t n = 0;
    uint64_t cycles = 0, ops = 0, bytes = 0;
    while (std::getline(in, line)) {
        n++;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream s(line);
        unsigned reset, valid, kind, escape, hit, fixed, ctxi, bits, len;
        std::string value, word;
        if (!(s >> reset >> valid >> kind >> escape >> hit >> fixed >> ctxi >> value >> bits >> len >> word))
            bad_input(argv[1], n, "expected RESET VALID KIND ESCAPE HIT FIXED CTX VALUE BITS OUT_LEN OUT_BYTES");
        uint32_t want[4];
        if (!parse_word128(word, want)) bad_input(argv[1], n, "OUT_BYTES must be 32 hex digits");

        top->reset = reset;
        top->op_valid = valid;
        top->op_kind = kind;
        top->op_escape = escape;
        top->op_hit = hit;
        top->op_fixed = fixed;
        top->op_ctx = ctxi;
        top->op_value = (uint16_t)std::strtoul(value.c_str(), nullptr, 16);
        top->op_bits = bits;
        top->eval();

        bool same = top->out_len == len;
        for (int i = 0; i < 4; i++) same = same && top->out_bytes[i] == want[i];
        if (!same) {
            std::printf("MISMATCH line=%zu cycle=%llu rtl_len=%u rtl_bytes=%08x%08x%08x%08x model_len=%u model_bytes=%s\n", n,
                        (unsigned long long)cycles, (unsigned)top->out_len, top->out_bytes[3], top->out_bytes[2],
                        top->out_bytes[1], top->out_bytes[0], len, word.c_str());
            return 1;
        }
        cycles++;
        if (valid) ops++;
        bytes += len / 8;
        top->clock = 1;
        top->eval();
        top->clock = 0;
        top->eval();
    }
    std::printf("OK cycles=%llu ops=%llu bytes=%llu\n", (unsigned long long)cycles, (unsigned long long)ops,
                (unsigned long long)bytes);
    return 0;
}
