//! Storage primitives whose geometry is chosen at run time (one Rust type serves every
//! configuration): a table RAM with asynchronous read, one with synchronous read (block
//! RAM), and a flag array that can be cleared in one cycle. Both are custom-Verilog blocks: the Rust `update` below is their
//! simulation, `hdl` their Verilog; the Verilator co-simulation checks that the two agree.
//! Table contents live in `_`-prefixed fields, which the LogicBlock derive ignores.

use rust_hdl::prelude::*;

/// Address bits of the table address buses (depths up to 65536).
pub const ADDR_BITS: usize = 16;

fn addr_bits(depth: usize) -> usize {
    (usize::BITS - (depth - 1).leading_zeros()) as usize
}

/// `depth` words of `width` bits (1..=32), read asynchronously, written at the clock edge.
/// `rdata` is zero-extended to 32 bits. Only the low ceil(log2(depth)) address bits are
/// decoded. A depth that is not a power of two leaves addresses without a word: the
/// simulation reads them as 0 and ignores writes there, the Verilog leaves them undefined,
/// so callers must not use them (pft's probabilities: 47 contexts).
#[derive(LogicBlock)]
pub struct TableRam {
    pub clock: Signal<In, Clock>,
    pub raddr: Signal<In, Bits<ADDR_BITS>>,
    pub rdata: Signal<Out, Bits<32>>,
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<ADDR_BITS>>,
    pub wdata: Signal<In, Bits<32>>,
    _mem: Vec<u32>,
    _width: usize,
}

impl TableRam {
    pub fn new(depth: usize, width: usize) -> TableRam {
        assert!((1..=1 << ADDR_BITS).contains(&depth));
        assert!((1..=32).contains(&width));
        TableRam {
            clock: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            _mem: vec![0; depth],
            _width: width,
        }
    }

    fn mask(&self) -> u32 {
        if self._width == 32 {
            u32::MAX
        } else {
            (1 << self._width) - 1
        }
    }

    /// The word at `addr` (its decoded bits), if the table has one there.
    fn slot(&self, addr: Bits<ADDR_BITS>) -> Option<usize> {
        let a = addr.index() & ((1 << addr_bits(self._mem.len())) - 1);
        (a < self._mem.len()).then_some(a)
    }
}

impl Logic for TableRam {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.we.val() {
            if let Some(a) = self.slot(self.waddr.val()) {
                let m = self.mask();
                self._mem[a] = self.wdata.val().to_u32() & m;
            }
        }
        let word = self.slot(self.raddr.val()).map_or(0, |a| self._mem[a]);
        self.rdata.next = (word as u64).into();
    }

    fn connect(&mut self) {
        self.rdata.connect();
    }

    fn hdl(&self) -> Verilog {
        let depth = self._mem.len();
        let w = self._width;
        let ab = addr_bits(depth);
        let (widx, ridx, unused) = if ab == 0 {
            ("0".to_string(), "0".to_string(), format!("raddr[{}:0], waddr[{}:0]", ADDR_BITS - 1, ADDR_BITS - 1))
        } else if ab == ADDR_BITS {
            ("waddr".to_string(), "raddr".to_string(), "1'b0".to_string())
        } else {
            (
                format!("waddr[{}:0]", ab - 1),
                format!("raddr[{}:0]", ab - 1),
                format!("raddr[{}:{ab}], waddr[{}:{ab}]", ADDR_BITS - 1, ADDR_BITS - 1),
            )
        };
        let (wdata, rdata, unused_data) = if w == 32 {
            ("wdata".to_string(), format!("mem[{ridx}]"), "1'b0".to_string())
        } else {
            (
                format!("wdata[{}:0]", w - 1),
                format!("{{{}'d0, mem[{ridx}]}}", 32 - w),
                format!("wdata[31:{w}]"),
            )
        };
        Verilog::Custom(format!(
            "\
// {depth} x {w} table: asynchronous read, synchronous write
reg [{wm1}:0] mem [0:{last}];
integer i;
initial begin
    for (i = 0; i < {depth}; i = i + 1) mem[i] = {w}'d0;
end
// address and data bits above the table's size are unused by design
wire unused_bits = &{{1'b0, {unused}, {unused_data}, 1'b0}};
always @(posedge clock) begin
    if (we) mem[{widx}] <= {wdata};
end
always @(*) rdata = {rdata};",
            wm1 = w - 1,
            last = depth - 1,
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "table_write".into(),
            clock: "clock".into(),
            inputs: vec!["waddr".into(), "wdata".into(), "we".into()],
            outputs: vec![],
        }]
    }
}

/// `depth` words of `width` bits (1..=32) with a **synchronous** read: `rdata` in a cycle is
/// the word at the `raddr` presented in the cycle before, as written by then (a write to
/// that word in that same cycle is forwarded). The memory itself is read-before-write
/// (`q <= mem[raddr]` at the clock edge), the shape Yosys infers as a `$mem` read port with
/// its data register and maps to block RAM (SB_RAM40_4K on iCE40); the forwarding is a
/// `width`-bit register and a multiplexer beside it. `rdata` is zero-extended to 32 bits.
#[derive(LogicBlock)]
pub struct SyncTableRam {
    pub clock: Signal<In, Clock>,
    pub raddr: Signal<In, Bits<ADDR_BITS>>,
    pub rdata: Signal<Out, Bits<32>>,
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<ADDR_BITS>>,
    pub wdata: Signal<In, Bits<32>>,
    _mem: Vec<u32>,
    _width: usize,
    _q: u32,
}

impl SyncTableRam {
    pub fn new(depth: usize, width: usize) -> SyncTableRam {
        assert!((1..=1 << ADDR_BITS).contains(&depth) && depth.is_power_of_two());
        assert!((1..=32).contains(&width));
        SyncTableRam {
            clock: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            _mem: vec![0; depth],
            _width: width,
            _q: 0,
        }
    }

    fn mask(&self) -> u32 {
        if self._width == 32 {
            u32::MAX
        } else {
            (1 << self._width) - 1
        }
    }

    fn slot(&self, addr: Bits<ADDR_BITS>) -> usize {
        addr.index() & (self._mem.len() - 1)
    }
}

impl Logic for SyncTableRam {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let r = self.slot(self.raddr.val());
            let w = self.slot(self.waddr.val());
            let m = self.mask();
            // Idempotent within the edge's delta cycles: a forwarded word does not depend
            // on whether the write below has happened yet.
            if self.we.val() {
                if r == w {
                    self._q = self.wdata.val().to_u32() & m;
                } else {
                    self._q = self._mem[r];
                }
                self._mem[w] = self.wdata.val().to_u32() & m;
            } else {
                self._q = self._mem[r];
            }
        }
        self.rdata.next = (self._q as u64).into();
    }

    fn connect(&mut self) {
        self.rdata.connect();
    }

    fn hdl(&self) -> Verilog {
        let depth = self._mem.len();
        let w = self._width;
        let ab = addr_bits(depth);
        let (widx, ridx, unused) = if ab == 0 {
            ("0".to_string(), "0".to_string(), format!("raddr[{}:0], waddr[{}:0]", ADDR_BITS - 1, ADDR_BITS - 1))
        } else if ab == ADDR_BITS {
            ("waddr".to_string(), "raddr".to_string(), "1'b0".to_string())
        } else {
            (
                format!("waddr[{}:0]", ab - 1),
                format!("raddr[{}:0]", ab - 1),
                format!("raddr[{}:{ab}], waddr[{}:{ab}]", ADDR_BITS - 1, ADDR_BITS - 1),
            )
        };
        let same = if ab == 0 { "1'b1".to_string() } else { format!("({widx} == {ridx})") };
        let (wdata, unused_data) = if w == 32 {
            ("wdata".to_string(), "1'b0".to_string())
        } else {
            (format!("wdata[{}:0]", w - 1), format!("wdata[31:{w}]"))
        };
        let rdata = |x: &str| if w == 32 { x.to_string() } else { format!("{{{}'d0, {x}}}", 32 - w) };
        Verilog::Custom(format!(
            "\
// {depth} x {w} table: synchronous read (block RAM), synchronous write; a write to the
// word being read is forwarded
reg [{wm1}:0] mem [0:{last}];
reg [{wm1}:0] q;
reg [{wm1}:0] fwd_data;
reg fwd;
integer i;
initial begin
    for (i = 0; i < {depth}; i = i + 1) mem[i] = {w}'d0;
    q = {w}'d0;
    fwd_data = {w}'d0;
    fwd = 1'b0;
end
// address and data bits above the table's size are unused by design
wire unused_bits = &{{1'b0, {unused}, {unused_data}, 1'b0}};
always @(posedge clock) begin
    if (we) mem[{widx}] <= {wdata};
    q <= mem[{ridx}];
    fwd <= we & {same};
    fwd_data <= {wdata};
end
always @(*) rdata = fwd ? {fwd_rdata} : {q_rdata};",
            wm1 = w - 1,
            last = depth - 1,
            fwd_rdata = rdata("fwd_data"),
            q_rdata = rdata("q"),
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "table_access".into(),
            clock: "clock".into(),
            inputs: vec!["raddr".into(), "waddr".into(), "wdata".into(), "we".into()],
            outputs: vec![],
        }]
    }
}

/// `rows` rows of `row_bits` (1..=32) flag bits in flip-flops: one row read asynchronously,
/// one row written at the clock edge, and every flag cleared at once by `clear` (which wins
/// over a write), as a sync or overflow reset needs. `rdata` is zero-extended to 32 bits.
#[derive(LogicBlock)]
pub struct FlagArray {
    pub clock: Signal<In, Clock>,
    pub clear: Signal<In, Bit>,
    pub raddr: Signal<In, Bits<ADDR_BITS>>,
    pub rdata: Signal<Out, Bits<32>>,
    pub we: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<ADDR_BITS>>,
    pub wdata: Signal<In, Bits<32>>,
    _rows: Vec<u32>,
    _row_bits: usize,
    /// Verilog with a write decoder per row (see [`FlagArray::decoded`]).
    _decoded: bool,
    /// `rdata` registered (see [`FlagArray::registered_read`]), its value now.
    _registered: bool,
    _rdata_r: u32,
}

impl FlagArray {
    pub fn new(rows: usize, row_bits: usize) -> FlagArray {
        assert!((1..=1 << ADDR_BITS).contains(&rows) && rows.is_power_of_two());
        assert!((1..=32).contains(&row_bits) && row_bits.is_power_of_two());
        FlagArray {
            clock: Default::default(),
            clear: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            we: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            _rows: vec![0; rows],
            _row_bits: row_bits,
            _decoded: false,
            _registered: false,
            _rdata_r: 0,
        }
    }

    /// The same array, emitted with a write decoder per row (`if (we && waddr == r)`)
    /// instead of a part-select at a computed bit offset, which Yosys builds as a shifter
    /// of the whole array (about half the cells; the SDC and LSP flags use it).
    pub fn decoded(rows: usize, row_bits: usize) -> FlagArray {
        FlagArray { _decoded: true, ..FlagArray::new(rows, row_bits) }
    }

    /// The decoded array with a registered read: `raddr` is presented a cycle ahead, and
    /// `rdata` is the row as the clock edge leaves it (a write to that row in the same cycle
    /// is forwarded, a clear reads as 0), as a block RAM's read port with forwarding
    /// behaves. The row multiplexer then ends at a flip-flop instead of lying on the reader's
    /// path (the LSP's flags: docs/results.md).
    pub fn registered_read(rows: usize, row_bits: usize) -> FlagArray {
        FlagArray { _registered: true, ..FlagArray::decoded(rows, row_bits) }
    }

    fn mask(&self) -> u32 {
        if self._row_bits == 32 {
            u32::MAX
        } else {
            (1 << self._row_bits) - 1
        }
    }
}

impl Logic for FlagArray {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            if self.clear.val() {
                self._rows.iter_mut().for_each(|r| *r = 0);
            } else if self.we.val() {
                let a = self.waddr.val().index() & (self._rows.len() - 1);
                let m = self.mask();
                self._rows[a] = self.wdata.val().to_u32() & m;
            }
        }
        let a = self.raddr.val().index() & (self._rows.len() - 1);
        if self._registered {
            // At the edge, after the write: the forwarded row.
            if self.clock.pos_edge() {
                self._rdata_r = self._rows[a];
            }
            self.rdata.next = (self._rdata_r as u64).into();
        } else {
            self.rdata.next = (self._rows[a] as u64).into();
        }
    }

    fn connect(&mut self) {
        self.rdata.connect();
    }

    fn hdl(&self) -> Verilog {
        let rows = self._rows.len();
        let rb = self._row_bits;
        let total = rows * rb;
        let ab = addr_bits(rows);
        // Row sizes are powers of two, so the bit offset of a row is its address followed by
        // log2(row_bits) zero bits.
        let lb = addr_bits(rb);
        let offset = |a: &str| -> String {
            let sel = match ab {
                0 => return "0".to_string(),
                ADDR_BITS => a.to_string(),
                _ => format!("{a}[{}:0]", ab - 1),
            };
            if lb == 0 {
                sel
            } else {
                format!("{{{sel}, {lb}'d0}}")
            }
        };
        let (rsel, wsel) = (offset("raddr"), offset("waddr"));
        // One flat vector: a one-cycle clear of every flag rules out a RAM.
        let unused = if ab == 0 {
            format!("raddr[{}:0], waddr[{}:0]", ADDR_BITS - 1, ADDR_BITS - 1)
        } else if ab == ADDR_BITS {
            "1'b0".to_string()
        } else {
            format!("raddr[{}:{ab}], waddr[{}:{ab}]", ADDR_BITS - 1, ADDR_BITS - 1)
        };
        let (wdata, rdata, unused_data) = if rb == 32 {
            ("wdata".to_string(), format!("flags[{rsel} +: 32]"), "1'b0".to_string())
        } else {
            (
                format!("wdata[{}:0]", rb - 1),
                format!("{{{}'d0, flags[{rsel} +: {rb}]}}", 32 - rb),
                format!("wdata[31:{rb}]"),
            )
        };
        // The registered read: the row at the edge, a same-cycle write forwarded.
        let (rdata, read_reg) = if self._registered {
            let same = match ab {
                0 => "1'b1".to_string(),
                ADDR_BITS => "waddr == raddr".to_string(),
                _ => format!("waddr[{m}:0] == raddr[{m}:0]", m = ab - 1),
            };
            let row = format!("flags[{rsel} +: {rb}]");
            let rq = if rb == 32 { "rq".to_string() } else { format!("{{{}'d0, rq}}", 32 - rb) };
            (
                rq,
                format!(
                    "
reg [{rbm1}:0] rq;
initial rq = {rb}'d0;
always @(posedge clock) begin
    if (clear) rq <= {rb}'d0;
    else if (we && {same}) rq <= {wdata};
    else rq <= {row};
end",
                    rbm1 = rb - 1
                ),
            )
        } else {
            (rdata, String::new())
        };
        Verilog::Custom(format!(
            "\
// {rows} rows x {rb} flags in flip-flops, cleared together
reg [{tm1}:0] flags;
initial flags = {total}'d0;
// address and data bits above the array's size are unused by design
wire unused_bits = &{{1'b0, {unused}, {unused_data}, 1'b0}};
{write}{read_reg}
always @(*) rdata = {rdata};",
            tm1 = total - 1,
            write = if self._decoded {
                let hit = match ab {
                    0 => "we".to_string(),
                    ADDR_BITS => format!("we && waddr == r[{}:0]", ab - 1),
                    _ => format!("we && waddr[{m}:0] == r[{m}:0]", m = ab - 1),
                };
                format!(
                    "integer r;
always @(posedge clock) begin
    for (r = 0; r < {rows}; r = r + 1) begin
        if (clear) flags[r * {rb} +: {rb}] <= {rb}'d0;
        else if ({hit}) flags[r * {rb} +: {rb}] <= {wdata};
    end
end"
                )
            } else {
                format!(
                    "always @(posedge clock) begin
    if (clear) flags <= {total}'d0;
    else if (we) flags[{wsel} +: {rb}] <= {wdata};
end"
                )
            },
        ))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        let mut inputs: Vec<String> = vec!["clear".into(), "waddr".into(), "wdata".into(), "we".into()];
        if self._registered {
            inputs.push("raddr".into());
        }
        vec![TimingInfo {
            name: "flag_write".into(),
            clock: "clock".into(),
            inputs,
            outputs: if self._registered { vec!["rdata".into()] } else { vec![] },
        }]
    }
}
