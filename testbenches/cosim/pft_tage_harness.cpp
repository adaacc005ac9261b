// Verilator replay bench for pft's direction predictor alone (hw/src/pft/tage.rs).
//
// VECTORS (written by hw/tests/pft_tage.rs): one cycle per line,
//   "CLEAR UPDATE TAKEN IW_ADDR PRED CTX"
// (IW_ADDR in hex, the rest decimal); '#' starts a comment. Each cycle: apply the inputs,
// settle, compare `pred` and `ctx` with the expectation (the model's prediction in the
// current state), then clock. One reset cycle comes first.
//
// Usage: bench VECTORS. Exit 0 when every cycle agrees ("OK rows=N ..."), 1 at the first
// mismatch ("MISMATCH row=R ..."), 2 on bad input.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vtop.h"
#include "verilated.h"

struct Row {
    bool clear, update, push, taken;
    uint32_t addr;
    bool pred;
    unsigned ctx;
};

static std::vector<Row> read_rows(const char* path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "bench: %s: cannot open\n", path);
        std::exit(2);
    }
    std::vector<Row> rows;
    std::string line;
    size_t n = 0;
    while (std::getline(in, line)) {
        n++;
        if (line.empty() || line[0] == '#') continue;
        std::istringstream s(line);
        unsigned clear, update, push, taken, pred, ctx;
        std::string addr;
        if (!(s >> clear >> update >> push >> taken >> addr >> pred >> ctx)) {
            std::fprintf(stderr, "bench: %s:%zu: expected CLEAR UPDATE PUSH TAKEN IW_ADDR PRED CTX\n", path, n);
            std::exit(2);
        }
        rows.push_back({clear != 0, update != 0, push != 0, taken != 0, (uint32_t)std::strtoul(addr.c_str(), nullptr, 16),
                        pred != 0, ctx});
    }
    return rows;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    const std::vector<Row> rows = read_rows(argv[1]);
    auto vctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(vctx.get());
    auto tick = [&]() {
        top->clock = 1;
        top->eval();
        top->clock = 0;
        top->eval();
    };
    top->clock = 0;
    top->reset = 1;
    top->clear = 0;
    top->update = 0;
    top->push = 0;
    top->taken = 0;
    top->iw_addr = 0;
    top->eval();
    tick();
    top->reset = 0;

    auto start = std::chrono::steady_clock::now();
    uint64_t updates = 0, pushes = 0, clears = 0;
    for (size_t r = 0; r < rows.size(); r++) {
        const Row& x = rows[r];
        top->clear = x.clear;
        top->update = x.update;
        top->push = x.push;
        top->taken = x.taken;
        top->iw_addr = x.addr;
        top->eval();
        if ((bool)top->pred != x.pred || (unsigned)top->ctx != x.ctx) {
            std::printf("MISMATCH row=%zu iw_addr=%#x rtl_pred=%u rtl_ctx=%u model_pred=%u model_ctx=%u\n", r, x.addr,
                        (unsigned)top->pred, (unsigned)top->ctx, (unsigned)x.pred, x.ctx);
            return 1;
        }
        updates += x.update;
        pushes += x.push;
        clears += x.clear;
        tick();
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("OK rows=%zu updates=%llu pushes=%llu clears=%llu seconds=%.3f\n", rows.size(), (unsigned long long)updates,
                (unsigned long long)pushes, (unsigned long long)clears, secs);
    return 0;
}
