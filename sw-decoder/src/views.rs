//! Post-mortem views of a decoded trace, as debuggers show them: addresses as
//! function+offset ([`Symbolizer`]), the last instructions ([`Tail`]), the call tree the
//! trace implies ([`CallTree`]) and instructions per function ([`Profile`]). Each view is an
//! [`AddressSink`], so it runs while the trace streams through the decoder, in memory
//! bounded by the program (its functions and call paths), not by the trace length.

use std::collections::{HashMap, VecDeque};

use streamtrace_isa::{LineTable, ProgramImage, Symbol, SymbolKind};
use streamtrace_model::pft::{links, return_address, ARM_MOV_LR_PC};

use crate::AddressSink;

/// Function ranges from an ELF symbol table: code symbols (functions and labels), each
/// covering its size, or up to the next symbol when it has none.
#[derive(Clone, Debug, Default)]
pub struct Symbolizer {
    /// (start, end exclusive, name index), sorted by start, not overlapping.
    ranges: Vec<(u32, u64, usize)>,
    names: Vec<String>,
    /// Source lines (DWARF), when the ELF has them.
    lines: LineTable,
}

/// The name index of addresses no symbol covers.
pub const UNKNOWN: usize = usize::MAX;

impl Symbolizer {
    pub fn new(symbols: &[Symbol]) -> Self {
        let mut code: Vec<&Symbol> = symbols.iter().filter(|s| s.kind != SymbolKind::Object).collect();
        // At one address, prefer a sized function, then a global name.
        code.sort_by_key(|s| (s.addr, s.kind != SymbolKind::Function, s.size == 0, !s.global));
        code.dedup_by_key(|s| s.addr);
        let mut out = Symbolizer::default();
        for (i, s) in code.iter().enumerate() {
            let next = code.get(i + 1).map_or(1u64 << 32, |n| n.addr as u64);
            let end = if s.size > 0 { (s.addr as u64 + s.size as u64).min(next) } else { next };
            out.ranges.push((s.addr, end, out.names.len()));
            out.names.push(s.name.clone());
        }
        out
    }

    /// Add source lines ([`streamtrace_isa::line_table`]): [`Self::format`] then appends
    /// ` at FILE:LINE` where they cover an address.
    pub fn with_lines(mut self, lines: LineTable) -> Self {
        self.lines = lines;
        self
    }

    /// `FILE:LINE` of `addr`, when the ELF's line information covers it.
    pub fn source_line(&self, addr: u32) -> Option<String> {
        self.lines.lookup(addr).map(|(f, l)| format!("{f}:{l}"))
    }

    /// The range index holding `addr` (bit 0 ignored).
    #[inline]
    fn range(&self, addr: u32) -> Option<usize> {
        let a = addr & !1;
        let i = self.ranges.partition_point(|r| r.0 <= a).checked_sub(1)?;
        ((a as u64) < self.ranges[i].1).then_some(i)
    }

    /// Function name index and offset of `addr`, or None outside every symbol.
    pub fn lookup(&self, addr: u32) -> Option<(usize, u32)> {
        self.range(addr).map(|i| (self.ranges[i].2, (addr & !1) - self.ranges[i].0))
    }

    pub fn name(&self, idx: usize) -> &str {
        self.names.get(idx).map_or("??", |s| s.as_str())
    }

    /// `name+0xOFF` (`name` at offset 0), or `??`; then ` at FILE:LINE` when source lines
    /// cover the address (gdb's form).
    pub fn format(&self, addr: u32) -> String {
        let mut s = match self.lookup(addr) {
            Some((f, 0)) => self.names[f].clone(),
            Some((f, off)) => format!("{}+{off:#x}", self.names[f]),
            None => "??".into(),
        };
        if let Some(line) = self.source_line(addr) {
            s.push_str(" at ");
            s.push_str(&line);
        }
        s
    }

    pub fn functions(&self) -> usize {
        self.names.len()
    }
}

/// Function index of each address, with the last range cached (consecutive addresses are
/// mostly in one function).
struct Cursor {
    start: u32,
    end: u64,
    func: usize,
}

impl Cursor {
    fn new() -> Self {
        Cursor { start: 1, end: 0, func: UNKNOWN }
    }

    #[inline]
    fn func(&mut self, sym: &Symbolizer, addr: u32) -> usize {
        let a = addr & !1;
        if a < self.start || a as u64 >= self.end {
            match sym.range(a) {
                Some(i) => (self.start, self.end, self.func) = sym.ranges[i],
                None => return UNKNOWN,
            }
        }
        self.func
    }
}

/// The last `n` instruction addresses.
#[derive(Clone, Debug)]
pub struct Tail {
    n: usize,
    addrs: VecDeque<u32>,
    pub total: u64,
}

impl Tail {
    pub fn new(n: usize) -> Self {
        Tail { n, addrs: VecDeque::with_capacity(n.min(1 << 20)), total: 0 }
    }

    /// The kept addresses, oldest first.
    pub fn last(&self) -> impl Iterator<Item = u32> + '_ {
        self.addrs.iter().copied()
    }
}

impl AddressSink for Tail {
    fn addresses(&mut self, addrs: &[u32]) {
        self.total += addrs.len() as u64;
        let keep = &addrs[addrs.len().saturating_sub(self.n)..];
        while self.addrs.len() + keep.len() > self.n {
            self.addrs.pop_front();
        }
        self.addrs.extend(keep);
    }
}

/// Instructions executed per function.
pub struct Profile<'s> {
    sym: &'s Symbolizer,
    counts: Vec<u64>,
    unknown: u64,
    cursor: Cursor,
}

impl<'s> Profile<'s> {
    pub fn new(sym: &'s Symbolizer) -> Self {
        Profile { sym, counts: vec![0; sym.functions()], unknown: 0, cursor: Cursor::new() }
    }

    /// (function name, instructions), most first; addresses outside every symbol as `??`.
    pub fn rows(&self) -> Vec<(String, u64)> {
        let mut rows: Vec<(String, u64)> =
            self.counts.iter().enumerate().filter(|(_, &c)| c > 0).map(|(i, &c)| (self.sym.name(i).to_string(), c)).collect();
        if self.unknown > 0 {
            rows.push(("??".into(), self.unknown));
        }
        rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        rows
    }
}

impl AddressSink for Profile<'_> {
    fn addresses(&mut self, addrs: &[u32]) {
        for &a in addrs {
            match self.cursor.func(self.sym, a) {
                UNKNOWN => self.unknown += 1,
                f => self.counts[f] += 1,
            }
        }
    }
}

/// A node of the call tree: a function reached through one path of calls.
#[derive(Clone, Debug)]
pub struct CallNode {
    pub func: usize,
    /// Times this path was entered by a call.
    pub calls: u64,
    pub children: Vec<usize>,
}

/// Deepest call path kept; deeper calls are counted at this depth.
const MAX_DEPTH: usize = 64;
/// Return addresses kept (a program that never returns, e.g. longjmp, drops the oldest).
const MAX_STACK: usize = 4096;

/// The call/return tree the trace implies: a call is a taken branch-with-link (or the jump
/// after an ARM `mov lr, pc`), a return is a jump to the return address of a call on the
/// stack (the stack unwinds to it, so tail calls and skipped frames stay consistent).
pub struct CallTree<'s, I: ProgramImage + ?Sized> {
    sym: &'s Symbolizer,
    image: &'s I,
    pub nodes: Vec<CallNode>,
    index: HashMap<(usize, usize), usize>,
    /// (return address, node to return to).
    stack: Vec<(u32, usize)>,
    node: usize,
    prev: Option<u32>,
    /// Return address when the previous instruction was a taken-if-jumping call.
    call_ret: Option<u32>,
    mov_lr: Option<u32>,
    cursor: Cursor,
    pub calls: u64,
    pub returns: u64,
}

impl<'s, I: ProgramImage + ?Sized> CallTree<'s, I> {
    pub fn new(sym: &'s Symbolizer, image: &'s I) -> Self {
        CallTree {
            sym,
            image,
            nodes: Vec::new(),
            index: HashMap::new(),
            stack: Vec::new(),
            node: usize::MAX,
            prev: None,
            call_ret: None,
            mov_lr: None,
            cursor: Cursor::new(),
            calls: 0,
            returns: 0,
        }
    }

    fn depth(&self) -> usize {
        self.stack.len()
    }

    fn child(&mut self, parent: usize, func: usize) -> usize {
        if let Some(&n) = self.index.get(&(parent, func)) {
            return n;
        }
        let n = self.nodes.len();
        self.nodes.push(CallNode { func, calls: 0, children: Vec::new() });
        self.nodes[parent].children.push(n);
        self.index.insert((parent, func), n);
        n
    }

    #[inline]
    fn step(&mut self, a: u32) {
        let Some(prev) = self.prev else {
            // The root: the function of the first instruction.
            let f = self.cursor.func(self.sym, a);
            self.nodes.push(CallNode { func: f, calls: 1, children: Vec::new() });
            self.node = 0;
            self.observe(a);
            self.prev = Some(a);
            return;
        };
        let sequential = a == return_address(prev);
        if let Some(ret) = self.call_ret.take().filter(|_| !sequential) {
            self.calls += 1;
            let f = self.cursor.func(self.sym, a);
            let node = if self.depth() >= MAX_DEPTH { self.node } else { self.child(self.node, f) };
            self.nodes[node].calls += 1;
            if self.stack.len() == MAX_STACK {
                self.stack.remove(0);
            }
            self.stack.push((ret, self.node));
            self.node = node;
        } else if !sequential {
            if let Some(i) = self.stack.iter().rposition(|&(r, _)| r == a) {
                self.returns += 1;
                self.node = self.stack[i].1;
                self.stack.truncate(i);
            }
        }
        self.observe(a);
        self.prev = Some(a);
    }

    /// Note whether the instruction at `a` calls if it jumps.
    #[inline]
    fn observe(&mut self, a: u32) {
        let thumb = a & 1 != 0;
        let insn = if thumb { self.image.read_u16(a & !1).map(u32::from) } else { self.image.read_u32(a) };
        let Some(insn) = insn else { return };
        if let Some(ret) = self.mov_lr.take() {
            self.call_ret = Some(ret);
        }
        if links(insn, thumb) {
            self.call_ret = Some(return_address(a));
        } else if !thumb && insn == ARM_MOV_LR_PC {
            self.mov_lr = Some(a.wrapping_add(8));
        }
    }

    /// Visit the tree depth first: (depth, node).
    pub fn walk(&self, mut f: impl FnMut(usize, &CallNode)) {
        if self.nodes.is_empty() {
            return;
        }
        let mut todo = vec![(0usize, 0usize)];
        while let Some((d, n)) = todo.pop() {
            f(d, &self.nodes[n]);
            for &c in self.nodes[n].children.iter().rev() {
                todo.push((d + 1, c));
            }
        }
    }

    pub fn name(&self, node: &CallNode) -> &str {
        self.sym.name(node.func)
    }
}

impl<I: ProgramImage + ?Sized> AddressSink for CallTree<'_, I> {
    fn addresses(&mut self, addrs: &[u32]) {
        for &a in addrs {
            self.step(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, addr: u32, size: u32, kind: SymbolKind) -> Symbol {
        Symbol { name: name.into(), addr, size, thumb: false, kind, global: true }
    }

    #[test]
    fn symbols_cover_their_size_or_up_to_the_next() {
        let s = Symbolizer::new(&[
            sym("a", 0x100, 0x10, SymbolKind::Function),
            sym("alias", 0x100, 0, SymbolKind::Other),
            sym("label", 0x200, 0, SymbolKind::Other),
            sym("data", 0x180, 4, SymbolKind::Object),
            sym("b", 0x300, 8, SymbolKind::Function),
        ]);
        assert_eq!(s.format(0x100), "a");
        assert_eq!(s.format(0x10d), "a+0xc");
        assert_eq!(s.format(0x110), "??");
        assert_eq!(s.format(0x2f0), "label+0xf0");
        assert_eq!(s.format(0x305), "b+0x4");
        assert_eq!(s.format(0x308), "??");
        let mut t = Tail::new(3);
        t.addresses(&[1, 2]);
        t.addresses(&[3, 4]);
        assert_eq!(t.last().collect::<Vec<_>>(), vec![2, 3, 4]);
        t.addresses(&[5, 6, 7, 8, 9]);
        assert_eq!(t.last().collect::<Vec<_>>(), vec![7, 8, 9]);
        assert_eq!(t.total, 9);
    }
}
