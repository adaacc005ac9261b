//! The uncompressed execution record of a run (every step kept), and the same queries
//! answered from it by brute force. The WET's answers are checked against these.

use crate::hash::FastMap;

use super::capture::{Port, Step, StepSink};
use super::cd::{ControlDeps, PostDominators};

/// Every step of a run, in order.
#[derive(Clone, Debug, Default)]
pub struct ExecRecord {
    pub steps: Vec<Step>,
}

impl StepSink for ExecRecord {
    fn step(&mut self, s: &Step) {
        self.steps.push(s.clone());
    }
}

impl ExecRecord {
    /// Instruction addresses (bit 0: Thumb) in execution order.
    pub fn cf(&self) -> Vec<u32> {
        self.steps.iter().map(Step::iw).collect()
    }

    /// Per executed instance of `iw`: the values of its load destination registers.
    pub fn load_values(&self, iw: u32) -> Vec<Vec<u32>> {
        self.steps
            .iter()
            .filter(|s| s.iw() == iw && s.executed)
            .map(|s| s.defs.iter().filter(|(p, _)| *p < 15 && s.loaded & (1 << p) != 0).map(|d| d.1).collect())
            .collect()
    }

    /// Per executed instance of `iw`: the values it defined, in port order.
    pub fn values(&self, iw: u32) -> Vec<Vec<u32>> {
        self.steps.iter().filter(|s| s.iw() == iw && s.executed).map(|s| s.defs.iter().map(|d| d.1).collect()).collect()
    }

    /// Per executed instance of `iw`: its data addresses.
    pub fn addresses(&self, iw: u32) -> Vec<Vec<u32>> {
        self.steps.iter().filter(|s| s.iw() == iw && s.executed).map(|s| s.accesses.iter().map(|a| a.addr).collect()).collect()
    }

    /// For every step, the steps whose definitions it used (registers, flags, memory
    /// bytes), by a forward pass with last-writer maps over global step indices, and, with
    /// post-dominators, the branch step it is control dependent on.
    pub fn parents(&self, pd: Option<&PostDominators>) -> Vec<Vec<usize>> {
        let mut control = pd.map(|pd| ControlDeps::<usize>::new(pd.clone()));
        let mut regs: [Option<usize>; 17] = [None; 17];
        let mut mem: FastMap<u32, usize> = FastMap::default();
        let mut out = Vec::with_capacity(self.steps.len());
        for (i, s) in self.steps.iter().enumerate() {
            let mut parents: Vec<usize> = s.uses.iter().filter_map(|&p: &Port| regs[p as usize]).collect();
            for a in s.accesses.iter().filter(|a| !a.write) {
                parents.extend((0..a.size as u32).filter_map(|b| mem.get(&a.addr.wrapping_add(b)).copied()));
            }
            if let Some(c) = control.as_mut().and_then(|c| c.step(s, i)) {
                parents.push(c);
            }
            parents.sort_unstable();
            parents.dedup();
            out.push(parents);
            if s.executed {
                for &(p, _) in &s.defs {
                    regs[p as usize] = Some(i);
                }
                for a in s.accesses.iter().filter(|a| a.write) {
                    for b in 0..a.size as u32 {
                        mem.insert(a.addr.wrapping_add(b), i);
                    }
                }
            }
        }
        out
    }

    /// The backward slice of step `i` over `parents` as sorted step indices (criterion included).
    pub fn backward_slice(parents: &[Vec<usize>], i: usize) -> Vec<usize> {
        let mut seen = vec![false; parents.len()];
        let mut work = vec![i];
        seen[i] = true;
        while let Some(x) = work.pop() {
            for &p in &parents[x] {
                if !seen[p] {
                    seen[p] = true;
                    work.push(p);
                }
            }
        }
        seen.iter().enumerate().filter(|(_, &s)| s).map(|(i, _)| i).collect()
    }
}
