// Verilator co-simulation bench for the streamtrace trace module.
//
// Replays retire events into the Verilated module and compares the trace port and the
// stall output with the model's expectations on every cycle. Both files are written by the
// Rust side (`streamtrace cosim`, hw/src/cosim.rs):
//
//   STIMULUS: one retirement per line, "CYCLE VALID PC CLASS TAKEN EXCEPTION [INSN NEXT_PC]"
//             (decimal cycle before stalls, PC in hex as the interworking address pc|T,
//             CLASS the model's branch-class code; INSN and NEXT_PC in hex, used by the pft
//             modules, built with -DPFT_PORTS); '#' starts a comment.
//   EXPECTED: "C CYCLES" (module cycles until the last port bit), then "B CYCLE BITS DATA"
//             per port beat (DATA in hex, as on the pins) and "S CYCLE" per stall cycle.
//
// Schedule (the same rule as hw/src/golden.rs): event i is presented in module cycle
// CYCLE_i - CYCLE_0 + delay, where delay counts stall cycles so far; while `stall` is high
// the same event is presented again; `trace_end` follows one cycle after the last event.
//
// Usage: harness STIMULUS EXPECTED [WAVE [FROM [TO]]]. Exit 0 when every cycle agrees, 1 at
// the first mismatch (printed with the cycle and both values), 2 on bad input. WAVE is a
// waveform file (VCD when built with --trace, FST with --trace-fst) holding module cycles
// FROM to TO (inclusive; default all): a long run's waveform stays small.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "Vtop.h"
#include "verilated.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
using Wave = VerilatedFstC;
#elif VM_TRACE
#include "verilated_vcd_c.h"
using Wave = VerilatedVcdC;
#endif

struct Retire {
    uint64_t cycle;
    uint32_t pc;
    unsigned cls;
    bool taken;
    bool exception;
    uint32_t insn;
    uint32_t next_pc;
};

struct Beat {
    uint64_t cycle;
    unsigned bits;
    uint64_t data;
};

static void bad_input(const char* file, size_t line, const std::string& why) {
    std::fprintf(stderr, "harness: %s:%zu: %s\n", file, line, why.c_str());
    std::exit(2);
}

// The files are read whole and scanned by hand: iostream extraction took longer than the
// replay itself (about 0.45 s against 0.33 s for a million retirements).
static std::string slurp(const char* path) {
    std::FILE* f = std::fopen(path, "rb");
    if (!f) bad_input(path, 0, "cannot open");
    std::string text;
    static char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) bad_input(path, 0, "read error");
    return text;
}

// The blank-separated fields of one line.
struct Fields {
    const char* p;
    const char* end;
    void skip_blanks() {
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) p++;
    }
    bool at_end() {
        skip_blanks();
        return p == end;
    }
    // The next field as `t` and its length `n`; false when the line has no more.
    bool token(const char*& t, size_t& n) {
        if (at_end()) return false;
        t = p;
        while (p < end && *p != ' ' && *p != '\t' && *p != '\r') p++;
        n = (size_t)(p - t);
        return true;
    }
    // The next field.
    bool word(std::string& w) {
        const char* t;
        size_t n;
        if (!token(t, n)) return false;
        w.assign(t, n);
        return true;
    }
    // The next field as a number in base 10 or 16 (16: an optional 0x); false when there is
    // no field or it is not a number that fits 64 bits.
    bool number(uint64_t& v, unsigned base) {
        const char* t;
        size_t n;
        if (!token(t, n)) return false;
        if (base == 16 && n > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) t += 2, n -= 2;
        if (n == 0) return false;
        v = 0;
        for (size_t i = 0; i < n; i++) {
            const char c = t[i];
            unsigned d;
            if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
            else if (base == 16 && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
            else if (base == 16 && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
            else return false;
            if (v > (UINT64_MAX - d) / base) return false;
            v = v * base + d;
        }
        return true;
    }
};

// Calls `line(fields, line_number)` for every line that is neither blank nor a comment
// ('#' first).
template <typename F>
static void for_each_line(const std::string& text, F line) {
    const char* p = text.data();
    const char* const end = p + text.size();
    size_t n = 0;
    while (p < end) {
        const char* eol = static_cast<const char*>(std::memchr(p, '\n', (size_t)(end - p)));
        if (!eol) eol = end;
        n++;
        Fields f{p, eol};
        if (!f.at_end() && *f.p != '#') line(f, n);
        p = eol + 1;
    }
}

static std::vector<Retire> read_stimulus(const char* path) {
    const std::string text = slurp(path);
    std::vector<Retire> v;
    v.reserve(text.size() / 24);
    for_each_line(text, [&](Fields& f, size_t n) {
        uint64_t cycle, valid, pc, cls, taken, exc;
        if (!(f.number(cycle, 10) && f.number(valid, 10) && f.number(pc, 16) && f.number(cls, 10) &&
              f.number(taken, 10) && f.number(exc, 10)))
            bad_input(path, n, "expected CYCLE VALID PC CLASS TAKEN EXCEPTION");
        // pft's modules also take the instruction word and the next address (optional columns).
        uint64_t insn = 0, next_pc = 0;
        if (!f.at_end() && !(f.number(insn, 16) && f.number(next_pc, 16)))
            bad_input(path, n, "INSN and NEXT_PC must be hexadecimal numbers, both or neither");
        if (!valid) return;  // idle cycles carry nothing
        if (!v.empty() && cycle <= v.back().cycle) bad_input(path, n, "cycles must increase strictly");
        v.push_back({cycle, (uint32_t)pc, (unsigned)cls, taken != 0, exc != 0, (uint32_t)insn, (uint32_t)next_pc});
    });
    return v;
}

struct Expected {
    uint64_t cycles = 0;
    std::vector<Beat> beats;
    std::vector<uint64_t> stalls;
};

static Expected read_expected(const char* path) {
    const std::string text = slurp(path);
    Expected e;
    bool have_cycles = false;
    size_t lines = 0;
    std::string kind;
    for_each_line(text, [&](Fields& f, size_t n) {
        lines = n;
        f.word(kind);
        if (kind == "C") {
            if (!f.number(e.cycles, 10)) bad_input(path, n, "C needs a cycle count");
            have_cycles = true;
        } else if (kind == "B") {
            Beat b;
            uint64_t bits;
            if (!(f.number(b.cycle, 10) && f.number(bits, 10) && f.number(b.data, 16))) bad_input(path, n, "expected B CYCLE BITS DATA");
            b.bits = (unsigned)bits;
            e.beats.push_back(b);
        } else if (kind == "S") {
            uint64_t c;
            if (!f.number(c, 10)) bad_input(path, n, "expected S CYCLE");
            e.stalls.push_back(c);
        } else {
            bad_input(path, n, "unknown line kind '" + kind + "'");
        }
    });
    if (!have_cycles) bad_input(path, lines, "missing the C line");
    return e;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s STIMULUS EXPECTED [WAVE [FROM [TO]]]\n", argv[0]);
        return 2;
    }
    // The waveform's window of module cycles.
    uint64_t wave_from = 0, wave_to = UINT64_MAX;
    for (int i = 4; i < argc && i < 6; i++) {
        char* end = nullptr;
        const unsigned long long v = std::strtoull(argv[i], &end, 10);
        if (end == argv[i] || *end != 0) {
            std::fprintf(stderr, "%s: argument %d: '%s' is not a cycle number\n", argv[0], i, argv[i]);
            return 2;
        }
        (i == 4 ? wave_from : wave_to) = v;
    }
    const std::vector<Retire> ev = read_stimulus(argv[1]);
    const Expected exp = read_expected(argv[2]);

    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(ctx.get());
#if VM_TRACE
    std::unique_ptr<Wave> vcd;
    if (argc > 3) {
        ctx->traceEverOn(true);
        vcd = std::make_unique<Wave>();
        top->trace(vcd.get(), 99);
        vcd->open(argv[3]);
    }
#endif
    // Whether the current module cycle is inside the waveform's window (the reset cycle
    // counts as cycle 0).
    bool dumping = wave_from == 0;
    uint64_t time = 0;
    auto tick = [&]() {
        top->clock = 1;
        top->eval();
#if VM_TRACE
        if (vcd && dumping) vcd->dump(time);
#endif
        time++;
        // The falling edge needs no evaluation of its own: no logic acts on it, and the
        // next cycle's evaluation (after its inputs are set) settles everything. Only a
        // waveform wants the falling edge as its own time step.
        top->clock = 0;
#if VM_TRACE
        if (vcd && dumping) {
            top->eval();
            vcd->dump(time);
        }
#endif
        time++;
    };

    // Synchronous reset for one cycle before module cycle 0.
    top->clock = 0;
    top->reset = 1;
    top->retire_valid = 0;
    top->trace_end = 0;
    top->eval();
    tick();
    top->reset = 0;

    const uint64_t origin = ev.empty() ? 0 : ev.front().cycle;
    size_t next = 0, beat = 0, stall_i = 0;
    uint64_t delay = 0, bits = 0;
    bool end_done = false;
    auto start = std::chrono::steady_clock::now();
    for (uint64_t mc = 0; mc <= exp.cycles; mc++) {
        dumping = mc >= wave_from && mc <= wave_to;
        bool presenting = false, ending = false;
        top->retire_valid = 0;
        top->trace_end = 0;
        if (next < ev.size()) {
            const Retire& r = ev[next];
            if (r.cycle - origin + delay == mc) {
                presenting = true;
                top->retire_valid = 1;
                top->pc = r.pc;
                top->branch_class = r.cls;
                top->taken = r.taken;
                top->exception = r.exception;
#ifdef PFT_PORTS
                top->insn = r.insn;
                top->next_pc = r.next_pc;
#endif
            }
        } else if (!end_done) {
            uint64_t end = (ev.empty() ? 0 : ev.back().cycle - origin + 1) + delay;
            if (mc >= end) {
                ending = true;
                top->trace_end = 1;
            }
        }
        top->eval();

        unsigned want_bits = 0;
        uint64_t want_data = 0;
        if (beat < exp.beats.size() && exp.beats[beat].cycle == mc) {
            want_bits = exp.beats[beat].bits;
            want_data = exp.beats[beat].data;
            beat++;
        }
        const unsigned got_bits = top->port_valid;
        const uint64_t got_data = top->port_data;
        if (got_bits != want_bits || got_data != want_data) {
            std::printf("MISMATCH cycle=%llu signal=port rtl_bits=%u rtl_data=%#llx model_bits=%u model_data=%#llx agreed_bits=%llu\n",
                        (unsigned long long)mc, got_bits, (unsigned long long)got_data, want_bits,
                        (unsigned long long)want_data, (unsigned long long)bits);
            return 1;
        }
        bits += want_bits;
        bool want_stall = false;
        if (stall_i < exp.stalls.size() && exp.stalls[stall_i] == mc) {
            want_stall = true;
            stall_i++;
        }
        if ((bool)top->stall != want_stall) {
            std::printf("MISMATCH cycle=%llu signal=stall rtl=%u model=%u retire_valid=%u pc=%#x trace_end=%u\n",
                        (unsigned long long)mc, (unsigned)top->stall, (unsigned)want_stall,
                        (unsigned)top->retire_valid, (unsigned)top->pc, (unsigned)top->trace_end);
            return 1;
        }
        if (mc == exp.cycles && !top->trace_done) {
            std::printf("MISMATCH cycle=%llu signal=trace_done rtl=0 model=1\n", (unsigned long long)mc);
            return 1;
        }
        const bool stalled = top->stall;
        tick();
        if (presenting || ending) {
            if (stalled) delay++;
            else if (presenting) next++;
            else end_done = true;
        }
    }
#if VM_TRACE
    if (vcd) vcd->close();
#endif
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("OK cycles=%llu beats=%zu bits=%llu stalls=%zu retirements=%zu seconds=%.3f cycles_per_second=%.0f\n",
                (unsigned long long)(exp.cycles + 1), exp.beats.size(), (unsigned long long)bits,
                exp.stalls.size(), ev.size(), secs, secs > 0 ? (exp.cycles + 1) / secs : 0.0);
    return 0;
}
