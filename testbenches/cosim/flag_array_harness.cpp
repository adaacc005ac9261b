// Verilator replay bench for one flag array (hw/src/mem.rs, `FlagArray`) alone.
//
// VECTORS (written by hw/tests/flag_array.rs): one cycle per line,
//   "CLEAR WE WADDR WDATA RADDR RDATA"
// (decimal; RDATA is what the RustHDL simulation of the same array reads in that cycle,
// after its inputs settle); '#' starts a comment. Each cycle: apply the inputs, evaluate,
// compare `rdata`, then clock.
//
// Usage: bench VECTORS. Exit 0 when every cycle agrees ("OK rows=N"), 1 at the first
// mismatch ("MISMATCH row=R ..."), 2 on bad input.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "Vtop.h"
#include "verilated.h"

struct Row {
    unsigned long clear, we, waddr, wdata, raddr, rdata;
};

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    std::FILE* f = std::fopen(argv[1], "r");
    if (!f) {
        std::fprintf(stderr, "bench: %s: cannot open\n", argv[1]);
        return 2;
    }
    std::vector<Row> rows;
    char line[256];
    size_t n = 0;
    while (std::fgets(line, sizeof line, f)) {
        n++;
        if (line[0] == '#' || line[0] == '\n') continue;
        Row r;
        if (std::sscanf(line, "%lu %lu %lu %lu %lu %lu", &r.clear, &r.we, &r.waddr, &r.wdata, &r.raddr, &r.rdata) != 6) {
            std::fprintf(stderr, "bench: %s:%zu: expected CLEAR WE WADDR WDATA RADDR RDATA\n", argv[1], n);
            return 2;
        }
        rows.push_back(r);
    }
    std::fclose(f);

    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(ctx.get());
    top->clock = 0;
    top->eval();
    for (size_t i = 0; i < rows.size(); i++) {
        const Row& r = rows[i];
        top->clear = r.clear;
        top->we = r.we;
        top->waddr = r.waddr;
        top->wdata = r.wdata;
        top->raddr = r.raddr;
        top->eval();
        if (top->rdata != r.rdata) {
            std::printf("MISMATCH row=%zu rtl_rdata=%u rusthdl_rdata=%lu\n", i, (unsigned)top->rdata, r.rdata);
            return 1;
        }
        top->clock = 1;
        top->eval();
        top->clock = 0;
    }
    std::printf("OK rows=%zu\n", rows.size());
    return 0;
}
