//! Measurements of one program's WET for `streamtrace report wet` (the paper's Tables 1-3
//! and 5-9): sizes at each tier by label category, build and compression times, and query
//! rates on the compressed form.

use std::time::Instant;

use serde::Serialize;
use streamtrace_sim::sweep::ProgramSpec;

use super::build::{LabelBits, WetCounts};
use super::build_program;

#[derive(Clone, Debug, Serialize)]
pub struct WetMeasurement {
    pub program: String,
    pub counts: WetCounts,
    pub nodes: usize,
    pub statements: usize,
    pub edges: usize,
    pub value_groups: usize,
    pub original: LabelBits,
    pub tier1: LabelBits,
    pub tier2: LabelBits,
    /// Bytes of the tier-2 `.wet` file (skeleton included).
    pub file_bytes: usize,
    /// Two runs of the core model and the graph build.
    pub build_seconds: f64,
    pub compress_seconds: f64,
    /// Control-flow trace from the compressed WET, each direction.
    pub cf_forward_seconds: f64,
    pub cf_backward_seconds: f64,
    /// Load values and addresses of every memory instruction.
    pub load_value_instances: u64,
    pub loads_seconds: f64,
    pub address_instances: u64,
    pub addrs_seconds: f64,
    /// Backward slices from `slices` criteria spread over the run.
    pub slices: usize,
    pub slice_items: u64,
    pub slice_seconds: f64,
}

/// Build, compress and query the WET of `p` (capped at `max_insns` instructions).
pub fn measure(p: &ProgramSpec, max_insns: u64, slices: usize) -> Result<WetMeasurement, String> {
    let t = Instant::now();
    let g = build_program(p, max_insns, true)?;
    let build_seconds = t.elapsed().as_secs_f64();
    let original = LabelBits::original(&g.counts);
    let tier1 = g.label_bits();
    let (nodes, statements, edges, value_groups) = (g.nodes.len(), g.stmts.len(), g.edges.len(), g.groups.len());
    let t = Instant::now();
    let mut c = g.compress();
    let compress_seconds = t.elapsed().as_secs_f64();
    let tier2 = c.label_bits();
    let file_bytes = c.to_bytes().len();

    let t = Instant::now();
    let forward = c.cf_forward()?;
    let cf_forward_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let backward = c.cf_backward()?;
    let cf_backward_seconds = t.elapsed().as_secs_f64();
    if forward.len() != backward.len() || forward.len() as u64 != c.counts.instructions {
        return Err(format!("{}: the control-flow walks disagree with the instruction count", p.name));
    }
    let mut mem_pcs: Vec<u32> = c.stmts.iter().filter(|s| s.accesses_each > 0 || s.access_counts.is_some()).map(|s| s.iw).collect();
    mem_pcs.sort_unstable();
    mem_pcs.dedup();
    let t = Instant::now();
    let load_value_instances: u64 = mem_pcs.iter().map(|&pc| c.load_values(pc).len() as u64).sum();
    let loads_seconds = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let address_instances: u64 = mem_pcs.iter().map(|&pc| c.addresses(pc).len() as u64).sum();
    let addrs_seconds = t.elapsed().as_secs_f64();

    // Criteria: the last executed instance of statements spread over the statement table.
    let mut criteria = Vec::new();
    let n = c.stmts.len().max(1);
    for i in 0..slices {
        let sid = (i * n / slices.max(1)) as u32;
        if let Some(node) = c.stmts.get(sid as usize).map(|s| s.node as usize) {
            let execs = super::stream::Cursor::len(&c.nodes[node].ts) as u64;
            if execs > 0 {
                criteria.push((sid, execs - 1));
            }
        }
    }
    let t = Instant::now();
    let slice_items: u64 = criteria.iter().map(|&(s, k)| c.backward_slice(s, k).len() as u64).sum();
    let slice_seconds = t.elapsed().as_secs_f64();
    Ok(WetMeasurement {
        program: p.name.clone(),
        counts: c.counts.clone(),
        nodes,
        statements,
        edges,
        value_groups,
        original,
        tier1,
        tier2,
        file_bytes,
        build_seconds,
        compress_seconds,
        cf_forward_seconds,
        cf_backward_seconds,
        load_value_instances,
        loads_seconds,
        address_instances,
        addrs_seconds,
        slices: criteria.len(),
        slice_items,
        slice_seconds,
    })
}
