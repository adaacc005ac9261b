//! Queries over a WET (algorithms.md §6.6), on either stream form: the control-flow trace
//! forwards and backwards, per-instruction load values and addresses, and the backward
//! data slice of one statement instance. Every query moves stream cursors only; nothing is
//! decompressed as a whole.

use super::build::{NodeId, StmtId, WetGraph};
use super::capture::Port;
use super::stream::Cursor;

/// One executed instance of an instruction, with what a per-instruction query returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// Timestamp of the path execution it belongs to.
    pub t: u64,
    /// The statement and its local instance number.
    pub at: SliceItem,
    pub values: Vec<u32>,
}

/// What a per-instruction query takes of an instance: (def ports, loaded mask, values,
/// addresses) -> answer.
type Pick = dyn Fn(&[Port], u16, &[u32], &[u32]) -> Vec<u32>;

/// One statement instance in a slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SliceItem {
    pub stmt: StmtId,
    /// Local instance number (the node's execution index).
    pub inst: u64,
}

impl<S: Cursor> WetGraph<S> {
    /// The path nodes in execution order, from the first (`f` is called once per path
    /// execution). Follows the successor whose timestamp stream holds t + 1.
    pub fn walk_forward(&mut self, mut f: impl FnMut(NodeId)) -> Result<(), String> {
        for n in &mut self.nodes {
            n.ts.seek(0);
        }
        let Some(mut n) = self.first_node else { return Ok(()) };
        let total = self.counts.path_executions;
        let mut t = 1u64;
        if self.nodes[n as usize].ts.fwd() != Some(1) {
            return Err("the first node does not start at timestamp 1".into());
        }
        f(n);
        while t < total {
            let next = self.nodes[n as usize].succ.iter().copied().find(|&s| self.nodes[s as usize].ts.peek_next() == Some(t + 1));
            let Some(s) = next else {
                return Err(format!("no successor of node {n} holds timestamp {}", t + 1));
            };
            self.nodes[s as usize].ts.fwd();
            n = s;
            t += 1;
            f(n);
        }
        Ok(())
    }

    /// The path nodes in reverse execution order, from the last.
    pub fn walk_backward(&mut self, mut f: impl FnMut(NodeId)) -> Result<(), String> {
        for n in &mut self.nodes {
            let len = n.ts.len();
            n.ts.seek(len);
        }
        let Some(mut n) = self.last_node else { return Ok(()) };
        let mut t = self.counts.path_executions;
        if self.nodes[n as usize].ts.back() != Some(t) {
            return Err("the last node does not end at the last timestamp".into());
        }
        f(n);
        while t > 1 {
            let prev = self.nodes[n as usize].pred.iter().copied().find(|&p| self.nodes[p as usize].ts.peek_prev() == Some(t - 1));
            let Some(p) = prev else {
                return Err(format!("no predecessor of node {n} holds timestamp {}", t - 1));
            };
            self.nodes[p as usize].ts.back();
            n = p;
            t -= 1;
            f(n);
        }
        Ok(())
    }

    /// The instruction addresses (bit 0: Thumb) in execution order.
    pub fn cf_forward(&mut self) -> Result<Vec<u32>, String> {
        let mut nodes = Vec::new();
        self.walk_forward(|n| nodes.push(n))?;
        Ok(nodes.iter().flat_map(|&n| self.nodes[n as usize].stmts.iter().map(|&s| self.stmts[s as usize].iw)).collect())
    }

    /// The instruction addresses in reverse execution order.
    pub fn cf_backward(&mut self) -> Result<Vec<u32>, String> {
        let mut nodes = Vec::new();
        self.walk_backward(|n| nodes.push(n))?;
        Ok(nodes.iter().flat_map(|&n| self.nodes[n as usize].stmts.iter().rev().map(|&s| self.stmts[s as usize].iw)).collect())
    }

    /// Per executed instance of `stmt`, in order: its timestamp and `pick(values of its
    /// def ports, addresses)`.
    fn instances(&mut self, stmt: StmtId, pick: &Pick) -> Vec<Instance> {
        let node = self.stmts[stmt as usize].node as usize;
        let ts = &mut self.nodes[node].ts;
        ts.seek(0);
        let st = &mut self.stmts[stmt as usize];
        if let Some(e) = &mut st.exec {
            e.seek(0);
        }
        for v in &mut st.values {
            v.seek(0);
        }
        if let Some(c) = &mut st.access_counts {
            c.seek(0);
        }
        st.addrs.seek(0);
        // A grouped statement: its columns' unique values (a small table, read once) and
        // the group's pattern stream.
        let mut grouped: Option<(&mut S, Vec<Vec<u64>>)> = None;
        if let Some(gid) = st.group {
            let g = &mut self.groups[gid as usize];
            let mut tables = Vec::new();
            for (c, &(s, _)) in g.columns.iter().enumerate() {
                if s == stmt {
                    let u = &mut g.uvals[c];
                    u.seek(0);
                    tables.push(std::iter::from_fn(|| u.fwd()).collect::<Vec<u64>>());
                }
            }
            g.pattern.seek(0);
            grouped = Some((&mut g.pattern, tables));
        }
        let mut out = Vec::new();
        let mut vals = Vec::new();
        let mut addrs = Vec::new();
        let mut k = 0u64;
        while let Some(t) = ts.fwd() {
            let inst = k;
            k += 1;
            let executed = st.exec.as_mut().is_none_or(|e| e.fwd() == Some(1));
            if !executed {
                continue;
            }
            vals.clear();
            match &mut grouped {
                Some((pattern, tables)) => {
                    let i = pattern.fwd().unwrap_or(0) as usize;
                    vals.extend(tables.iter().map(|t| t.get(i).copied().unwrap_or(0) as u32));
                }
                None => vals.extend(st.values.iter_mut().map(|v| v.fwd().unwrap_or(0) as u32)),
            }
            addrs.clear();
            let n = match &mut st.access_counts {
                Some(c) => c.fwd().unwrap_or(0),
                None => st.accesses_each as u64,
            };
            // The count comes from the file: take at most what the address stream holds, so
            // a count that disagrees with it cannot make the query allocate without bound.
            addrs.extend((0..n).map_while(|_| st.addrs.fwd().map(|a| a as u32)));
            out.push(Instance { t, at: SliceItem { stmt, inst }, values: pick(&st.def_ports, st.loaded, &vals, &addrs) });
        }
        out
    }

    /// Merge the instances of every statement of `iw` by timestamp (an instruction can sit
    /// in several path nodes).
    fn per_instruction(&mut self, iw: u32, pick: &Pick) -> Vec<Instance> {
        let stmts: Vec<StmtId> = self.stmts_of(iw).collect();
        let mut all: Vec<Instance> = stmts.into_iter().flat_map(|s| self.instances(s, pick)).collect();
        all.sort_by_key(|i| i.t);
        all
    }

    /// The values each executed instance of the instruction at `iw` loaded from memory
    /// (its load destination registers, in register order).
    pub fn load_values(&mut self, iw: u32) -> Vec<Instance> {
        self.per_instruction(iw, &|ports, loaded, vals, _| {
            ports.iter().zip(vals).filter(|(&p, _)| p < 15 && loaded & (1 << p) != 0).map(|(_, &v)| v).collect()
        })
    }

    /// The values each executed instance of the instruction at `iw` defined (registers in
    /// port order, then the flags).
    pub fn values(&mut self, iw: u32) -> Vec<Instance> {
        self.per_instruction(iw, &|_, _, vals, _| vals.to_vec())
    }

    /// The data addresses each executed instance of the instruction at `iw` accessed.
    pub fn addresses(&mut self, iw: u32) -> Vec<Instance> {
        self.per_instruction(iw, &|_, _, _, addrs| addrs.to_vec())
    }

    /// The `n`-th executed instance (from 0, in execution order) of the instruction at `iw`,
    /// over every node that holds it.
    pub fn instance_of(&mut self, iw: u32, n: u64) -> Option<SliceItem> {
        let all = self.per_instruction(iw, &|_, _, _, _| Vec::new());
        all.get(usize::try_from(n).ok()?).map(|i| i.at)
    }

    /// Timestamp of instance `inst` of `stmt`.
    pub fn timestamp(&mut self, stmt: StmtId, inst: u64) -> Option<u64> {
        let ts = &mut self.nodes[self.stmts[stmt as usize].node as usize].ts;
        ts.seek(inst as usize);
        ts.peek_next()
    }

    /// The definitions instance `inst` of `stmt` used, through `port` (None: every port).
    pub fn parents(&mut self, stmt: StmtId, inst: u64, port: Option<Port>) -> Vec<(Port, SliceItem)> {
        let mut out = Vec::new();
        for &eid in &self.stmts[stmt as usize].edges {
            let e = &self.edges[eid as usize];
            if port.is_some_and(|p| p != e.port) {
                continue;
            }
            let (eport, edef, owner) = (e.port, e.def, e.shared.unwrap_or(eid));
            if e.local_implicit {
                out.push((eport, SliceItem { stmt: edef, inst }));
                continue;
            }
            // A shared edge reads its owner's labels.
            let e = &mut self.edges[owner as usize];
            // use_inst is non-decreasing: move its cursor to the first pair of `inst`.
            let u = &mut e.use_inst;
            while u.peek_next().is_some_and(|k| k < inst) {
                u.fwd();
            }
            while u.peek_prev().is_some_and(|k| k >= inst) {
                u.back();
            }
            e.def_inst.seek(u.position());
            while u.peek_next() == Some(inst) {
                u.fwd();
                let d = e.def_inst.fwd().unwrap_or(0);
                out.push((eport, SliceItem { stmt: edef, inst: d }));
            }
        }
        out
    }

    /// The backward dynamic slice of instance `inst` of `stmt`: every statement instance
    /// its values came from, transitively through registers, flags and memory, and the
    /// branch instances that decided each of them executes (when the WET was built with
    /// control dependences). The criterion included; sorted.
    pub fn backward_slice(&mut self, stmt: StmtId, inst: u64) -> Vec<SliceItem> {
        // Newest first (a heap on timestamp and position): every stream cursor then moves
        // mostly backwards, so a slice costs about one pass over the streams it touches
        // instead of a seek per visited instance.
        let mut seen = crate::hash::FastSet::default();
        let start = SliceItem { stmt, inst };
        let mut work = std::collections::BinaryHeap::new();
        let key = |g: &mut Self, it: SliceItem| (g.timestamp(it.stmt, it.inst).unwrap_or(0), g.stmts[it.stmt as usize].offset, it);
        work.push(key(self, start));
        seen.insert(start);
        while let Some((_, _, x)) = work.pop() {
            for (_, p) in self.parents(x.stmt, x.inst, None) {
                if seen.insert(p) {
                    let k = key(self, p);
                    work.push(k);
                }
            }
        }
        let mut v: Vec<SliceItem> = seen.into_iter().collect();
        v.sort();
        v
    }
}
