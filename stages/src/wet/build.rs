//! Building the WET graph from captured steps (algorithms.md §6.1, §6.2 (a), (c), (e), §6.4 option B).
//!
//! * Nodes are dynamic acyclic paths: a path ends after a call, a return, an exception, a
//!   transfer back into a block of the current path, or 64 blocks. A node is the interned
//!   sequence of its instruction addresses, so every statement of a node executes exactly
//!   as often as the node, and a statement's instance number is the node's execution index.
//! * Timestamps count path executions from 1.
//! * Dependences are labelled with local instance numbers `(use_inst, def_inst)`; an edge
//!   inside one node whose pairs are all `(k, k)` is local-implicit and keeps no label.
//!
//! Steps of the current path are held back until the path ends (at most 64 blocks), because
//! the node, and so the instance numbers, are known only then.

use crate::hash::FastMap;

use super::capture::{Port, Step, StepSink};
use super::cd::{ControlDeps, PostDominators};
use super::stream::{Cursor, RawStream};

/// The memory operand port of a load (its data dependences on stores).
pub const MEM: Port = 17;
/// The control-dependence port (the edge goes to the branch instance that decided that
/// the statement executes).
pub const CONTROL: Port = 18;
/// Blocks per path before it is cut (§6.4 option B).
pub const MAX_PATH_BLOCKS: u32 = 64;

pub type NodeId = u32;
/// Index into [`WetGraph::stmts`].
pub type StmtId = u32;

/// A path node.
#[derive(Clone, Debug, Default)]
pub struct Node<S = RawStream> {
    /// Statement ids, in execution order.
    pub stmts: Vec<StmtId>,
    /// Control-flow successors and predecessors (unlabelled, as in the paper).
    pub succ: Vec<NodeId>,
    pub pred: Vec<NodeId>,
    /// Timestamps of the node's executions, increasing.
    pub ts: S,
}

/// A statement: one instruction inside one path node.
#[derive(Clone, Debug, Default)]
pub struct Stmt<S = RawStream> {
    /// Instruction address, bit 0 set for Thumb.
    pub iw: u32,
    pub node: NodeId,
    /// Position inside the node.
    pub offset: u32,
    /// Ports defined when the instruction executes (fixed per statement).
    pub def_ports: Vec<Port>,
    /// Mask of the registers among `def_ports` that receive memory data.
    pub loaded: u16,
    /// Present when some instance's condition failed: 1 executed, 0 not, per instance.
    pub exec: Option<S>,
    /// Per def port (same order as `def_ports`), the values of the executed instances.
    pub values: Vec<S>,
    /// Data accesses per executed instance: `accesses_each` when every instance made the
    /// same number (the usual case: it follows from the instruction), else the counts.
    pub accesses_each: u32,
    pub access_counts: Option<S>,
    /// The addresses of every executed instance's accesses, in order.
    pub addrs: S,
    /// Edges leaving this statement as a use, by (port, def statement).
    pub edges: Vec<EdgeId>,
    /// The value group holding this statement's values (tier 1 (b)); `values` is then empty.
    pub group: Option<u32>,
}

/// Statements of one node whose value tuples repeat together (§6.2 (b)): instance i of
/// column c has the value `uvals[c][pattern[i]]`.
#[derive(Clone, Debug, Default)]
pub struct ValueGroup<S = RawStream> {
    pub node: NodeId,
    /// (statement, index into its `def_ports`), by statement position then port.
    pub columns: Vec<(StmtId, u8)>,
    /// Number of unique tuples.
    pub unique: u32,
    pub pattern: S,
    pub uvals: Vec<S>,
}

pub type EdgeId = u32;

/// A dependence edge from a use (`user`, `port`) to the statement that defined it.
#[derive(Clone, Debug, Default)]
pub struct Edge<S = RawStream> {
    pub user: StmtId,
    pub port: Port,
    pub def: StmtId,
    /// Local instance numbers of the use (non-decreasing) and of the def, pairwise.
    /// Empty when `local_implicit`.
    pub use_inst: S,
    pub def_inst: S,
    /// Both ends in one node, one pair per instance of the user and every pair `(k, k)`:
    /// the label is implied (instance k of the user depends on instance k of the def).
    pub local_implicit: bool,
    /// Tier 1 (d): an earlier edge between the same two nodes with the same pairs holds the
    /// labels; this edge's streams are empty.
    pub shared: Option<EdgeId>,
    /// Number of pairs (kept for implicit edges, whose streams are dropped).
    pub pairs: u64,
}

impl Edge<RawStream> {
    /// Write out the implied pairs (0, 0) .. (pairs - 1, pairs - 1) of an edge that was
    /// local-implicit so far, and make it explicit.
    fn materialize(&mut self) {
        for j in 0..self.pairs {
            self.use_inst.push(j);
            self.def_inst.push(j);
        }
        self.local_implicit = false;
    }
}

/// Counts for the size tables (as in the paper's Tables 1-3).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WetCounts {
    pub instructions: u64,
    /// Basic-block executions (what the uncompressed WET timestamps).
    pub block_executions: u64,
    pub path_executions: u64,
    pub values: u64,
    pub addresses: u64,
    pub dependence_pairs: u64,
    /// Pairs of local-implicit edges (no label stored after tier 1).
    pub implicit_pairs: u64,
}

/// The WET with uncompressed label sequences.
#[derive(Clone, Debug, Default)]
pub struct WetGraph<S = RawStream> {
    pub nodes: Vec<Node<S>>,
    pub stmts: Vec<Stmt<S>>,
    pub edges: Vec<Edge<S>>,
    pub groups: Vec<ValueGroup<S>>,
    /// The first executed node (the start of the control-flow trace).
    pub first_node: Option<NodeId>,
    pub last_node: Option<NodeId>,
    pub counts: WetCounts,
}

impl<S: Cursor> WetGraph<S> {
    /// The statements of instruction `iw` (one per node that contains it).
    pub fn stmts_of(&self, iw: u32) -> impl Iterator<Item = StmtId> + '_ {
        self.stmts.iter().enumerate().filter(move |(_, s)| s.iw == iw).map(|(i, _)| i as StmtId)
    }
}

/// Writer of last definitions: per register/flags port and per memory byte.
#[derive(Default)]
struct LastWriters {
    regs: [Option<(StmtId, u64)>; 17],
    pages: FastMap<u32, Box<[(StmtId, u64)]>>,
}

const NO_WRITER: (StmtId, u64) = (StmtId::MAX, 0);

impl LastWriters {
    fn byte(&self, addr: u32) -> Option<(StmtId, u64)> {
        let w = self.pages.get(&(addr >> 12))?[(addr & 0xFFF) as usize];
        (w.0 != StmtId::MAX).then_some(w)
    }

    fn set_byte(&mut self, addr: u32, w: (StmtId, u64)) {
        self.pages.entry(addr >> 12).or_insert_with(|| vec![NO_WRITER; 4096].into_boxed_slice())[(addr & 0xFFF) as usize] = w;
    }
}

/// Builds a [`WetGraph`] from steps; feed it with [`super::capture::capture`].
pub struct WetBuilder {
    g: WetGraph,
    path_ids: FastMap<Vec<u32>, NodeId>,
    /// Steps of the current path (the first `pending_len` slots; kept to reuse their
    /// allocations) and their addresses.
    pending: Vec<Step>,
    pending_len: usize,
    pending_iws: Vec<u32>,
    blocks: u32,
    prev_node: Option<NodeId>,
    /// Parents of the current load through memory (a buffer reused across steps).
    mem_defs: Vec<(StmtId, u64)>,
    writers: LastWriters,
    /// Error found while building (a statement whose def ports change between instances).
    error: Option<String>,
    control: Option<ControlDeps<(StmtId, u64)>>,
}

impl Default for WetBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl WetBuilder {
    pub fn new() -> Self {
        WetBuilder {
            g: WetGraph::default(),
            path_ids: FastMap::default(),
            pending: Vec::new(),
            pending_len: 0,
            pending_iws: Vec::new(),
            blocks: 0,
            prev_node: None,
            mem_defs: Vec::new(),
            writers: LastWriters::default(),
            error: None,
            control: None,
        }
    }

    /// A builder that also records control dependences, from the post-dominators of a
    /// first run of the same program ([`super::cd::CfgBuilder`]).
    pub fn with_control(pd: PostDominators) -> Self {
        WetBuilder { control: Some(ControlDeps::new(pd)), ..Self::new() }
    }

    fn end_path(&mut self) {
        if self.pending_len == 0 {
            return;
        }
        let iws = std::mem::take(&mut self.pending_iws);
        let node = match self.path_ids.get(&iws) {
            Some(&n) => n,
            None => {
                let n = self.g.nodes.len() as NodeId;
                let first = self.g.stmts.len() as StmtId;
                for (offset, s) in self.pending[..self.pending_len].iter().enumerate() {
                    self.g.stmts.push(Stmt {
                        iw: s.iw(),
                        node: n,
                        offset: offset as u32,
                        def_ports: Vec::new(),
                        loaded: 0,
                        exec: None,
                        values: Vec::new(),
                        accesses_each: 0,
                        access_counts: Some(RawStream::default()),
                        addrs: RawStream::default(),
                        edges: Vec::new(),
                        group: None,
                    });
                }
                let stmts = (first..first + self.pending_len as StmtId).collect();
                self.g.nodes.push(Node { stmts, ..Node::default() });
                self.path_ids.insert(iws.clone(), n);
                n
            }
        };
        self.pending_iws = iws;
        self.pending_iws.clear();
        self.g.counts.path_executions += 1;
        let t = self.g.counts.path_executions;
        let k = self.g.nodes[node as usize].ts.len() as u64;
        self.g.nodes[node as usize].ts.push(t);
        if let Some(p) = self.prev_node {
            if !self.g.nodes[p as usize].succ.contains(&node) {
                self.g.nodes[p as usize].succ.push(node);
                self.g.nodes[node as usize].pred.push(p);
            }
        } else {
            self.g.first_node = Some(node);
        }
        self.prev_node = Some(node);
        self.g.last_node = Some(node);
        let steps = std::mem::take(&mut self.pending);
        for (offset, s) in steps[..self.pending_len].iter().enumerate() {
            let sid = self.g.nodes[node as usize].stmts[offset];
            self.record(sid, k, s);
        }
        self.pending = steps;
        self.pending_len = 0;
        self.blocks = 0;
    }

    fn edge(&mut self, user: StmtId, port: Port, def: StmtId) -> EdgeId {
        // A statement has few edges: a scan beats hashing.
        let edges = &mut self.g.edges;
        let st = &mut self.g.stmts[user as usize];
        if let Some(&id) = st.edges.iter().find(|&&id| {
            let e = &edges[id as usize];
            e.port == port && e.def == def
        }) {
            return id;
        }
        let id = edges.len() as EdgeId;
        edges.push(Edge { user, port, def, local_implicit: true, ..Edge::default() });
        st.edges.push(id);
        id
    }

    fn add_pair(&mut self, user: StmtId, port: Port, k: u64, def: (StmtId, u64)) {
        let id = self.edge(user, port, def.0);
        let same_node = self.g.stmts[user as usize].node == self.g.stmts[def.0 as usize].node;
        let e = &mut self.g.edges[id as usize];
        self.g.counts.dependence_pairs += 1;
        // While every instance so far had exactly the pair (k, k), the labels are implied by
        // the pair count and are not stored (most edges stay so: memory for long runs).
        if e.local_implicit {
            if same_node && def.1 == k && e.pairs == k {
                e.pairs += 1;
                return;
            }
            e.materialize();
        }
        e.use_inst.push(k);
        e.def_inst.push(def.1);
        e.pairs += 1;
    }

    /// Labels of one executed (or condition-failed) instance `k` of statement `sid`.
    fn record(&mut self, sid: StmtId, k: u64, s: &Step) {
        let c = &mut self.g.counts;
        c.instructions += 1;
        if s.taken || s.exception || s.class != streamtrace_model::BranchClass::None {
            c.block_executions += 1;
        }
        // Uses first: an instruction reading and writing one register reads the old def.
        for &p in &s.uses {
            if let Some(w) = self.writers.regs[p as usize] {
                self.add_pair(sid, p, k, w);
            }
        }
        let mut mem_defs = std::mem::take(&mut self.mem_defs);
        mem_defs.clear();
        for a in s.accesses.iter().filter(|a| !a.write) {
            for b in 0..a.size as u32 {
                if let Some(w) = self.writers.byte(a.addr.wrapping_add(b)) {
                    if !mem_defs.contains(&w) {
                        mem_defs.push(w);
                    }
                }
            }
        }
        for &w in &mem_defs {
            self.add_pair(sid, MEM, k, w);
        }
        self.mem_defs = mem_defs;
        if let Some(parent) = self.control.as_mut().and_then(|c| c.step(s, (sid, k))) {
            self.add_pair(sid, CONTROL, k, parent);
        }
        let st = &mut self.g.stmts[sid as usize];
        if !s.executed && st.exec.is_none() {
            // The first failed instance: all earlier ones executed.
            st.exec = Some(RawStream::from(vec![1; k as usize]));
        }
        if let Some(e) = &mut st.exec {
            e.push(s.executed as u64);
        }
        if !s.executed {
            return;
        }
        if st.values.is_empty() && !s.defs.is_empty() && st.def_ports.is_empty() {
            st.def_ports = s.defs.iter().map(|d| d.0).collect();
            st.values = vec![RawStream::default(); s.defs.len()];
            st.loaded = s.loaded;
        }
        if !st.def_ports.iter().copied().eq(s.defs.iter().map(|d| d.0)) {
            self.error.get_or_insert(format!(
                "instruction at {:#010x}: defines ports {:?} in one instance and {:?} in another",
                s.pc,
                st.def_ports,
                s.defs.iter().map(|d| d.0).collect::<Vec<_>>()
            ));
            return;
        }
        for (i, &(_, v)) in s.defs.iter().enumerate() {
            st.values[i].push(v as u64);
        }
        if let Some(c) = &mut st.access_counts {
            c.push(s.accesses.len() as u64);
        }
        for a in &s.accesses {
            st.addrs.push(a.addr as u64);
        }
        self.g.counts.values += s.defs.len() as u64;
        self.g.counts.addresses += s.accesses.len() as u64;
        for &(p, _) in &s.defs {
            self.writers.regs[p as usize] = Some((sid, k));
        }
        for a in s.accesses.iter().filter(|a| a.write) {
            for b in 0..a.size as u32 {
                self.writers.set_byte(a.addr.wrapping_add(b), (sid, k));
            }
        }
    }

    /// Close the last path and return the graph.
    pub fn finish(mut self) -> Result<WetGraph, String> {
        self.end_path();
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut g = self.g;
        for st in &mut g.stmts {
            let counts = st.access_counts.as_ref().map_or(&[][..], |c| c.values());
            if counts.windows(2).all(|w| w[0] == w[1]) {
                st.accesses_each = counts.first().copied().unwrap_or(0) as u32;
                st.access_counts = None;
            }
        }
        for e in &mut g.edges {
            let node = g.stmts[e.user as usize].node;
            if e.local_implicit && e.pairs == g.nodes[node as usize].ts.len() as u64 {
                g.counts.implicit_pairs += e.pairs;
            } else if e.local_implicit {
                e.materialize();
            }
        }
        share_labels(&mut g);
        for n in 0..g.nodes.len() {
            group_values(&mut g, n as NodeId);
        }
        Ok(g)
    }
}

impl StepSink for WetBuilder {
    fn step(&mut self, s: &Step) {
        if self.pending_len < self.pending.len() {
            self.pending[self.pending_len].clone_from(s);
        } else {
            self.pending.push(s.clone());
        }
        self.pending_len += 1;
        self.pending_iws.push(s.iw());
        if s.taken {
            self.blocks += 1;
        }
        let next = s.next_pc;
        let back_edge = self.pending_iws.contains(&next);
        if s.call || s.class == streamtrace_model::BranchClass::Return || s.exception || back_edge || self.blocks >= MAX_PATH_BLOCKS {
            self.end_path();
        }
    }
}


impl<S> WetGraph<S> {
    /// The same graph with every label stream converted by `f(stream, width)` (width 32 or
    /// 64 bits: the smallest that holds the stream's values).
    pub fn map_streams<T>(self, mut f: impl FnMut(S, u8) -> T, width_of: impl Fn(&S) -> u8) -> WetGraph<T> {
        let mut conv = |s: S| {
            let w = width_of(&s);
            f(s, w)
        };
        WetGraph {
            nodes: self
                .nodes
                .into_iter()
                .map(|n| Node { stmts: n.stmts, succ: n.succ, pred: n.pred, ts: conv(n.ts) })
                .collect(),
            stmts: self
                .stmts
                .into_iter()
                .map(|s| Stmt {
                    iw: s.iw,
                    node: s.node,
                    offset: s.offset,
                    def_ports: s.def_ports,
                    loaded: s.loaded,
                    exec: s.exec.map(&mut conv),
                    values: s.values.into_iter().map(&mut conv).collect(),
                    accesses_each: s.accesses_each,
                    access_counts: s.access_counts.map(&mut conv),
                    addrs: conv(s.addrs),
                    edges: s.edges,
                    group: s.group,
                })
                .collect(),
            edges: self
                .edges
                .into_iter()
                .map(|e| Edge {
                    user: e.user,
                    port: e.port,
                    def: e.def,
                    use_inst: conv(e.use_inst),
                    def_inst: conv(e.def_inst),
                    local_implicit: e.local_implicit,
                    shared: e.shared,
                    pairs: e.pairs,
                })
                .collect(),
            groups: self
                .groups
                .into_iter()
                .map(|g| ValueGroup {
                    node: g.node,
                    columns: g.columns,
                    unique: g.unique,
                    pattern: conv(g.pattern),
                    uvals: g.uvals.into_iter().map(&mut conv).collect(),
                })
                .collect(),
            first_node: self.first_node,
            last_node: self.last_node,
            counts: self.counts,
        }
    }
}

/// Sizes of the label categories, in bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LabelBits {
    pub timestamps: u64,
    pub values: u64,
    pub edge_labels: u64,
    pub addresses: u64,
}

impl std::ops::AddAssign for LabelBits {
    fn add_assign(&mut self, b: LabelBits) {
        self.timestamps += b.timestamps;
        self.values += b.values;
        self.edge_labels += b.edge_labels;
        self.addresses += b.addresses;
    }
}

impl LabelBits {
    pub fn total(&self) -> u64 {
        self.timestamps + self.values + self.edge_labels + self.addresses
    }

    /// The uncompressed WET of §6.1: every statement execution carries a 32-bit timestamp,
    /// every value 32 bits, every dependence pair two 32-bit timestamps; addresses (our
    /// extra address port) 32 bits each.
    pub fn original(c: &WetCounts) -> LabelBits {
        LabelBits {
            timestamps: 32 * c.instructions,
            values: 32 * c.values,
            edge_labels: 64 * c.dependence_pairs,
            addresses: 32 * c.addresses,
        }
    }
}

impl<S: Cursor> WetGraph<S> {
    /// Stored label bits: values of 32 bits each for an uncompressed graph (tier 1), the
    /// streams' stored sizes for a compressed one (tier 2). Execution flags and varying
    /// access counts are counted with the values.
    pub fn label_bits(&self) -> LabelBits {
        let mut b = LabelBits::default();
        for n in &self.nodes {
            b.timestamps += n.ts.stored_bits(32);
        }
        for s in &self.stmts {
            b.values += s.values.iter().map(|v| v.stored_bits(32)).sum::<u64>();
            b.values += s.exec.as_ref().map_or(0, |e| e.stored_bits(1));
            b.addresses += s.addrs.stored_bits(32) + s.access_counts.as_ref().map_or(0, |c| c.stored_bits(32));
        }
        for g in &self.groups {
            b.values += g.pattern.stored_bits(ceil_log2(g.unique as u64));
            b.values += g.uvals.iter().map(|u| u.stored_bits(32)).sum::<u64>();
        }
        for e in self.edges.iter().filter(|e| !e.local_implicit && e.shared.is_none()) {
            b.edge_labels += e.use_inst.stored_bits(32) + e.def_inst.stored_bits(32);
        }
        b
    }
}

pub fn ceil_log2(x: u64) -> u32 {
    if x <= 1 {
        0
    } else {
        64 - (x - 1).leading_zeros()
    }
}

/// Tier 1 (b) for one node (algorithms.md §6.2): group its fully executed statements by
/// the node inputs their values depend on, merge a group into the smallest superset group,
/// intern each group's tuples of output values, and keep a group only where
/// `U·k·w + E·ceil(log2 U) < E·k·w`.
fn group_values(g: &mut WetGraph<RawStream>, node: NodeId) {
    use std::collections::BTreeSet;
    let e_count = g.nodes[node as usize].ts.len() as u64;
    if e_count == 0 {
        return;
    }
    let members: Vec<StmtId> = g.nodes[node as usize].stmts.clone();
    let mut inputs: FastMap<StmtId, BTreeSet<(StmtId, Port)>> = FastMap::default();
    let mut candidates: Vec<StmtId> = Vec::new();
    for &sid in &members {
        let st = &g.stmts[sid as usize];
        let mut set = BTreeSet::new();
        if st.loaded != 0 {
            set.insert((sid, MEM));
        }
        for &eid in &st.edges {
            let e = &g.edges[eid as usize];
            if e.port == CONTROL {
                continue;
            }
            match inputs.get(&e.def) {
                Some(parent) if e.local_implicit => set.extend(parent.iter().copied()),
                _ => {
                    set.insert((sid, e.port));
                }
            }
        }
        if !st.def_ports.is_empty() && st.exec.is_none() {
            candidates.push(sid);
        }
        inputs.insert(sid, set);
    }
    // Groups by identical input sets, in statement order.
    type Inputs = BTreeSet<(StmtId, Port)>;
    let mut groups: Vec<(Inputs, Vec<StmtId>)> = Vec::new();
    for &sid in &candidates {
        let set = &inputs[&sid];
        match groups.iter_mut().find(|(s, _)| s == set) {
            Some((_, m)) => m.push(sid),
            None => groups.push((set.clone(), vec![sid])),
        }
    }
    // Merge each group into the superset group with the fewest inputs (ties: the lower
    // first-statement address), smallest groups first, one merge per group.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&i| groups[i].0.len());
    let mut merged_into: Vec<Option<usize>> = vec![None; groups.len()];
    for &i in &order {
        let best = (0..groups.len())
            .filter(|&j| j != i && merged_into[j].is_none() && groups[i].0.len() < groups[j].0.len() && groups[i].0.is_subset(&groups[j].0))
            .min_by_key(|&j| (groups[j].0.len(), g.stmts[groups[j].1[0] as usize].iw));
        if let Some(j) = best {
            let moved = std::mem::take(&mut groups[i].1);
            groups[j].1.extend(moved);
            merged_into[i] = Some(j);
        }
    }
    for (_, mut stmts) in groups.into_iter().filter(|(_, m)| !m.is_empty()) {
        stmts.sort_by_key(|&s| g.stmts[s as usize].offset);
        let columns: Vec<(StmtId, u8)> =
            stmts.iter().flat_map(|&s| (0..g.stmts[s as usize].def_ports.len() as u8).map(move |p| (s, p))).collect();
        let k = columns.len() as u64;
        let mut ids: FastMap<Vec<u64>, u64> = FastMap::default();
        let mut pattern = Vec::with_capacity(e_count as usize);
        let mut tuple = Vec::with_capacity(columns.len());
        for i in 0..e_count as usize {
            tuple.clear();
            tuple.extend(columns.iter().map(|&(s, p)| g.stmts[s as usize].values[p as usize].values()[i]));
            let next = ids.len() as u64;
            pattern.push(*ids.entry(tuple.clone()).or_insert(next));
        }
        let u = ids.len() as u64;
        if u * k * 32 + e_count * ceil_log2(u) as u64 >= e_count * k * 32 {
            continue;
        }
        let mut uvals = vec![vec![0u64; u as usize]; columns.len()];
        for (t, &id) in &ids {
            for (c, &v) in t.iter().enumerate() {
                uvals[c][id as usize] = v;
            }
        }
        let gid = g.groups.len() as u32;
        for &s in &stmts {
            let st = &mut g.stmts[s as usize];
            st.values = Vec::new();
            st.group = Some(gid);
        }
        g.groups.push(ValueGroup {
            node,
            columns,
            unique: u as u32,
            pattern: RawStream::from(pattern),
            uvals: uvals.into_iter().map(RawStream::from).collect(),
        });
    }
}

/// Tier 1 (d): edges between the same pair of nodes whose label sequences are identical keep
/// one copy (the first edge's); the others point to it.
fn share_labels(g: &mut WetGraph<RawStream>) {
    type Labels<'a> = (NodeId, NodeId, &'a [u64], &'a [u64]);
    let mut first: FastMap<Labels, EdgeId> = FastMap::default();
    let mut shared: Vec<(usize, EdgeId)> = Vec::new();
    for (i, e) in g.edges.iter().enumerate() {
        if e.local_implicit {
            continue;
        }
        let key = (g.stmts[e.user as usize].node, g.stmts[e.def as usize].node, e.use_inst.values(), e.def_inst.values());
        match first.get(&key) {
            Some(&owner) => shared.push((i, owner)),
            None => {
                first.insert(key, i as EdgeId);
            }
        }
    }
    for (i, owner) in shared {
        let e = &mut g.edges[i];
        e.shared = Some(owner);
        e.use_inst = RawStream::default();
        e.def_inst = RawStream::default();
    }
}
