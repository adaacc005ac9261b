// Icarus Verilog co-simulation bench for the streamtrace trace module: the second,
// independent simulator next to the Verilator bench of testbenches/cosim/harness.cpp.
//
// It reads the same two files as harness.cpp (formats in its header comment), applies the
// same schedule and compares the same signals every cycle:
//
//   STIMULUS: one retirement per line, "CYCLE VALID PC CLASS TAKEN EXCEPTION INSN NEXT_PC"
//             (INSN and NEXT_PC in hex, read only by a pft module: built with
//             -DPFT_PORTS); '#' starts a comment line; lines with VALID = 0 carry nothing.
//   EXPECTED: "C CYCLES", "B CYCLE BITS DATA" per port beat (DATA in hex, as on the pins),
//             "S CYCLE" per stall cycle.
//
// Schedule (hw/src/golden.rs): one reset cycle, then event i is presented in module cycle
// CYCLE_i - CYCLE_0 + delay, where delay counts stall cycles so far; while `stall` is high
// the same event is presented again; `trace_end` follows one cycle after the last event.
// In module cycle C the module must raise `trace_done`.
//
// Verilog-2005 (iverilog -g2005). The top module comes in as a macro:
//   iverilog -g2005 -DTOP=streamtrace_rsdc_32x4_128 -o sim.vvp tb.v streamtrace_rsdc_32x4_128.v
//   iverilog -g2005 -DTOP=streamtrace_pft -DPFT_PORTS -o sim.vvp tb.v streamtrace_pft.v
//   vvp -n sim.vvp +stimulus=stimulus.txt +expected=expected.txt [+vcd=wave.vcd]
//
// With +progress it prints "AT cycle=N" (flushed) before each cycle settles, so that a
// caller can tell where a simulation that stops advancing is stuck.
//
// Result, as the last line of stdout (vvp's exit status does not carry it):
//   AGREE cycles=N beats=N bits=N stalls=N retirements=N   every cycle agreed
//   MISMATCH cycle=N signal=... (both values)                the first difference
//   BADINPUT file:line: why                                  unreadable input
// The files are read as streams (beats, stalls and events are consumed in order), so no
// size limit applies.

`ifndef TOP
`define TOP streamtrace_rsdc_32x4_128
`endif

module tb;
    reg clock = 1'b0;
    reg reset = 1'b1;
    reg retire_valid = 1'b0;
    reg [31:0] pc = 32'd0;
    reg [2:0] branch_class = 3'd0;
    reg taken = 1'b0;
    reg exception = 1'b0;
`ifdef PFT_PORTS
    // pft's front end walks the instruction and is told where control went.
    reg [31:0] insn = 32'd0;
    reg [31:0] next_pc = 32'd0;
`endif
    reg trace_end = 1'b0;
    wire stall;
    wire [63:0] port_data;
    wire [7:0] port_valid;
    wire trace_done;

    `TOP dut(
        .clock(clock),
        .reset(reset),
        .retire_valid(retire_valid),
        .pc(pc),
        .branch_class(branch_class),
        .taken(taken),
        .exception(exception),
`ifdef PFT_PORTS
        .insn(insn),
        .next_pc(next_pc),
`endif
        .trace_end(trace_end),
        .stall(stall),
        .port_data(port_data),
        .port_valid(port_valid),
        .trace_done(trace_done)
    );

    // ---- files -------------------------------------------------------------------------
    reg [8*1024-1:0] stim_name, exp_name, vcd_name;
    reg [8*256-1:0] line;
    reg [8*16-1:0] kind;
    reg [7:0] first;
    integer fd_stim, fd_beat, fd_stall, fd_scan;
    integer n, r;
    integer ln_stim, ln_beat, ln_stall, ln_scan;

    // Counts from the validating first pass.
    reg [63:0] exp_cycles, n_beats, n_stalls, n_events;
    reg have_cycles;

    // The next unconsumed retirement (have_ev = 0 once the file is exhausted).
    reg have_ev;
    reg [63:0] ev_cycle, last_cycle, origin;
    reg [31:0] ev_pc, ev_insn, ev_next_pc;
    reg [63:0] ev_cls, ev_taken, ev_exc, ev_valid;
    reg any_ev;

    // The next unconsumed beat and stall.
    reg have_beat, have_stall;
    reg [63:0] beat_cycle, beat_bits, beat_data, stall_cycle;

    reg [63:0] f1, f2, f3, f4, f5, f6, f7, f8;

    task bad_input(input [8*1024-1:0] file, input integer lno, input [8*80-1:0] why);
        begin
            $display("BADINPUT %0s:%0d: %0s", file, lno, why);
            $finish;
        end
    endtask

    // A line to skip: empty, or a comment.
    function skip_line(input [8*256-1:0] l);
        reg [7:0] c;
        integer k;
        begin
            k = $sscanf(l, "%c", c);
            skip_line = (k != 1) || c == "#" || c == 8'd10 || c == 8'd13;
        end
    endfunction

    // Next retirement with VALID = 1 from the stimulus stream.
    task next_event;
        reg done;
        begin
            done = 1'b0;
            have_ev = 1'b0;
            while (!done) begin
                n = $fgets(line, fd_stim);
                if (n == 0) begin
                    done = 1'b1;
                end else begin
                    ln_stim = ln_stim + 1;
                    if (!skip_line(line)) begin
                        f7 = 0;
                        f8 = 0;
                        r = $sscanf(line, "%d %d %h %d %d %d %h %h", f1, f2, f3, f4, f5, f6, f7, f8);
`ifdef PFT_PORTS
                        if (r != 8) bad_input(stim_name, ln_stim, "expected CYCLE VALID PC CLASS TAKEN EXCEPTION INSN NEXT_PC");
`else
                        if (r < 6) bad_input(stim_name, ln_stim, "expected CYCLE VALID PC CLASS TAKEN EXCEPTION");
`endif
                        if (f2 != 0) begin
                            if (any_ev && f1 <= last_cycle) bad_input(stim_name, ln_stim, "cycles must increase strictly");
                            ev_cycle = f1;
                            ev_pc = f3[31:0];
                            ev_cls = f4;
                            ev_taken = f5;
                            ev_exc = f6;
                            ev_insn = f7[31:0];
                            ev_next_pc = f8[31:0];
                            if (!any_ev) origin = f1;
                            any_ev = 1'b1;
                            last_cycle = f1;
                            have_ev = 1'b1;
                            done = 1'b1;
                        end
                    end
                end
            end
        end
    endtask

    // Next "B" line of the expectation stream.
    task next_beat;
        reg done;
        begin
            done = 1'b0;
            have_beat = 1'b0;
            while (!done) begin
                n = $fgets(line, fd_beat);
                if (n == 0) begin
                    done = 1'b1;
                end else if (!skip_line(line)) begin
                    kind = 0;
                    r = $sscanf(line, "%s %d %d %h", kind, f1, f2, f3);
                    if (kind == "B") begin
                        beat_cycle = f1;
                        beat_bits = f2;
                        beat_data = f3;
                        have_beat = 1'b1;
                        done = 1'b1;
                    end
                end
            end
        end
    endtask

    // Next "S" line of the expectation stream.
    task next_stall;
        reg done;
        begin
            done = 1'b0;
            have_stall = 1'b0;
            while (!done) begin
                n = $fgets(line, fd_stall);
                if (n == 0) begin
                    done = 1'b1;
                end else if (!skip_line(line)) begin
                    kind = 0;
                    r = $sscanf(line, "%s %d", kind, f1);
                    if (kind == "S") begin
                        stall_cycle = f1;
                        have_stall = 1'b1;
                        done = 1'b1;
                    end
                end
            end
        end
    endtask

    // First pass: validate both files, count their entries, find C.
    task scan_files;
        reg done;
        begin
            have_cycles = 1'b0;
            n_beats = 0;
            n_stalls = 0;
            n_events = 0;
            fd_scan = $fopen(exp_name, "r");
            if (fd_scan == 0) bad_input(exp_name, 0, "cannot open");
            ln_scan = 0;
            done = 1'b0;
            while (!done) begin
                n = $fgets(line, fd_scan);
                if (n == 0) begin
                    done = 1'b1;
                end else begin
                    ln_scan = ln_scan + 1;
                    if (!skip_line(line)) begin
                        kind = 0;
                        r = $sscanf(line, "%s %d %d %h", kind, f1, f2, f3);
                        if (kind == "C") begin
                            if (r < 2) bad_input(exp_name, ln_scan, "C needs a cycle count");
                            exp_cycles = f1;
                            have_cycles = 1'b1;
                        end else if (kind == "B") begin
                            if (r != 4) bad_input(exp_name, ln_scan, "expected B CYCLE BITS DATA");
                            n_beats = n_beats + 1;
                        end else if (kind == "S") begin
                            if (r < 2) bad_input(exp_name, ln_scan, "expected S CYCLE");
                            n_stalls = n_stalls + 1;
                        end else begin
                            bad_input(exp_name, ln_scan, "unknown line kind");
                        end
                    end
                end
            end
            $fclose(fd_scan);
            if (!have_cycles) bad_input(exp_name, ln_scan, "missing the C line");
            // The stimulus: count valid retirements (next_event validates each line).
            fd_stim = $fopen(stim_name, "r");
            if (fd_stim == 0) bad_input(stim_name, 0, "cannot open");
            ln_stim = 0;
            any_ev = 1'b0;
            next_event;
            while (have_ev) begin
                n_events = n_events + 1;
                next_event;
            end
            $fclose(fd_stim);
        end
    endtask

    // C's "%#llx": 0 prints as "0".
    function [8*20-1:0] hex(input [63:0] v);
        reg [8*20-1:0] s;
        begin
            if (v == 0) $sformat(s, "0");
            else $sformat(s, "0x%0h", v);
            hex = s;
        end
    endfunction

    // ---- the run -----------------------------------------------------------------------
    reg [63:0] mc, delay, bits, end_cycle;
    reg end_done, presenting, ending, stalled, want_stall, progress;
    reg [7:0] want_bits;
    reg [63:0] want_data;

    initial begin
        if (!$value$plusargs("stimulus=%s", stim_name)) begin
            $display("BADINPUT +stimulus=FILE is missing");
            $finish;
        end
        if (!$value$plusargs("expected=%s", exp_name)) begin
            $display("BADINPUT +expected=FILE is missing");
            $finish;
        end
        scan_files;
        progress = $test$plusargs("progress");
        if ($value$plusargs("vcd=%s", vcd_name)) begin
            $dumpfile(vcd_name);
            $dumpvars(0, tb);
        end

        // The streams.
        fd_stim = $fopen(stim_name, "r");
        fd_beat = $fopen(exp_name, "r");
        fd_stall = $fopen(exp_name, "r");
        ln_stim = 0;
        any_ev = 1'b0;
        origin = 0;
        last_cycle = 0;
        next_event;
        next_beat;
        next_stall;

        // Synchronous reset for one cycle before module cycle 0 (inputs that carry no
        // event stay 0, as in the Verilated model).
        reset = 1'b1;
        retire_valid = 1'b0;
        trace_end = 1'b0;
        #5 clock = 1'b1;
        #5 clock = 1'b0;
        reset = 1'b0;

        delay = 0;
        bits = 0;
        end_done = 1'b0;
        for (mc = 0; mc <= exp_cycles; mc = mc + 1) begin
            presenting = 1'b0;
            ending = 1'b0;
            retire_valid = 1'b0;
            trace_end = 1'b0;
            if (have_ev) begin
                if (ev_cycle - origin + delay == mc) begin
                    presenting = 1'b1;
                    retire_valid = 1'b1;
                    pc = ev_pc;
                    branch_class = ev_cls[2:0];
                    taken = ev_taken != 0;
                    exception = ev_exc != 0;
`ifdef PFT_PORTS
                    insn = ev_insn;
                    next_pc = ev_next_pc;
`endif
                end
            end else if (!end_done) begin
                end_cycle = (any_ev ? last_cycle - origin + 1 : 0) + delay;
                if (mc >= end_cycle) begin
                    ending = 1'b1;
                    trace_end = 1'b1;
                end
            end
            // With +progress, the cycle about to settle, flushed: if the simulation stops
            // advancing (a zero-delay loop in the design), the caller sees where.
            if (progress) begin
                $display("AT cycle=%0d", mc);
                $fflush;
            end
            #4;  // inputs settle through the combinational logic; clock is low

            want_bits = 0;
            want_data = 0;
            if (have_beat && beat_cycle == mc) begin
                want_bits = beat_bits[7:0];
                want_data = beat_data;
                next_beat;
            end
            if (port_valid !== want_bits || port_data !== want_data) begin
                $display("MISMATCH cycle=%0d signal=port rtl_bits=%0d rtl_data=%0s model_bits=%0d model_data=%0s agreed_bits=%0d",
                         mc, port_valid, hex(port_data), want_bits, hex(want_data), bits);
                $finish;
            end
            bits = bits + want_bits;
            want_stall = 1'b0;
            if (have_stall && stall_cycle == mc) begin
                want_stall = 1'b1;
                next_stall;
            end
            if (stall !== want_stall) begin
                $display("MISMATCH cycle=%0d signal=stall rtl=%0b model=%0d retire_valid=%0d pc=%0s trace_end=%0d",
                         mc, stall, want_stall, retire_valid, hex(pc), trace_end);
                $finish;
            end
            if (mc == exp_cycles && trace_done !== 1'b1) begin
                $display("MISMATCH cycle=%0d signal=trace_done rtl=%0b model=1", mc, trace_done);
                $finish;
            end
            stalled = stall;

            // One clock: rising edge, falling edge.
            #1 clock = 1'b1;
            #5 clock = 1'b0;

            if (presenting || ending) begin
                if (stalled) delay = delay + 1;
                else if (presenting) next_event;
                else end_done = 1'b1;
            end
        end
        $display("AGREE cycles=%0d beats=%0d bits=%0d stalls=%0d retirements=%0d",
                 exp_cycles + 1, n_beats, bits, n_stalls, n_events);
        $finish;
    end
endmodule
