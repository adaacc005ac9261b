//! Dynamic control dependences (algorithms.md §6.5): immediate post-dominators on the
//! augmented dynamic control-flow graph of a run, and the online control-dependence stack.
//!
//! The graph is intraprocedural and per instruction: a call is an edge to its return site,
//! a return (and the last instruction of the run) an edge to one EXIT node, every other
//! instruction has edges to the successors observed, and every executed direct conditional
//! branch also to the successor it did not take. Building it needs the whole run, so a WET
//! build runs the program twice (runs are deterministic).

use crate::hash::{FastMap, FastSet};

use streamtrace_model::BranchClass;

use super::capture::{Step, StepSink};

/// The EXIT node's address (no instruction has it: bit 0 set with bit 1 set is never a
/// Thumb address the simulator produces, as Thumb addresses are even).
pub const EXIT: u32 = u32::MAX;

fn other_successor(s: &Step) -> Option<u32> {
    if s.class != BranchClass::DirectCond {
        return None;
    }
    let target = if s.thumb {
        streamtrace_isa::classify_thumb(s.word as u16, None, s.pc).target
    } else {
        streamtrace_isa::classify_arm(s.word, s.pc).target
    }?;
    let fall = s.pc.wrapping_add(if s.thumb { 2 } else { 4 }) | s.thumb as u32;
    Some(if s.next_pc == target { fall } else { target })
}

/// Collects the augmented dynamic CFG of a run.
#[derive(Default)]
pub struct CfgBuilder {
    succ: FastMap<u32, Vec<u32>>,
    last: Option<u32>,
}

impl CfgBuilder {
    fn add(&mut self, from: u32, to: u32) {
        let v = self.succ.entry(from).or_default();
        if !v.contains(&to) {
            v.push(to);
        }
    }

    /// Immediate post-dominators of every instruction seen (EXIT for those whose only
    /// post-dominator is EXIT, or which cannot reach it).
    pub fn finish(mut self) -> PostDominators {
        if let Some(l) = self.last {
            self.add(l, EXIT);
        }
        // Reverse graph, numbered in reverse post-order of a DFS from EXIT over predecessor
        // edges (Cooper, Harvey and Kennedy's iterative algorithm on the reverse CFG).
        let mut preds: FastMap<u32, Vec<u32>> = FastMap::default();
        for (&f, ts) in &self.succ {
            for &t in ts {
                preds.entry(t).or_default().push(f);
            }
        }
        for v in preds.values_mut() {
            v.sort_unstable();
        }
        let mut order: Vec<u32> = Vec::new();
        let mut index: FastMap<u32, usize> = FastMap::default();
        let mut seen: FastSet<u32> = FastSet::default();
        let mut stack: Vec<(u32, usize)> = vec![(EXIT, 0)];
        seen.insert(EXIT);
        while let Some((v, i)) = stack.pop() {
            let ps = preds.get(&v).map_or(&[][..], |p| &p[..]);
            if i < ps.len() {
                stack.push((v, i + 1));
                let p = ps[i];
                if seen.insert(p) {
                    stack.push((p, 0));
                }
            } else {
                order.push(v);
            }
        }
        order.reverse(); // reverse post-order: EXIT first
        for (i, &v) in order.iter().enumerate() {
            index.insert(v, i);
        }
        let mut idom: Vec<Option<usize>> = vec![None; order.len()];
        idom[0] = Some(0);
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..order.len() {
                // In the reverse CFG the "predecessors" are the successors.
                let mut new: Option<usize> = None;
                for s in self.succ.get(&order[i]).map_or(&[][..], |s| &s[..]) {
                    let Some(&j) = index.get(s) else { continue };
                    if idom[j].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => j,
                        Some(mut a) => {
                            let mut b = j;
                            while a != b {
                                while a > b {
                                    a = idom[a].expect("processed");
                                }
                                while b > a {
                                    b = idom[b].expect("processed");
                                }
                            }
                            a
                        }
                    });
                }
                if new.is_some() && idom[i] != new {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        let mut ipdom = FastMap::default();
        for (i, &v) in order.iter().enumerate().skip(1) {
            ipdom.insert(v, order[idom[i].unwrap_or(0)]);
        }
        // Instructions that never reach EXIT (endless loops): EXIT.
        for &v in self.succ.keys() {
            ipdom.entry(v).or_insert(EXIT);
        }
        let branches = self.succ.iter().filter(|(_, s)| s.len() > 1).map(|(&v, _)| v).collect();
        PostDominators { ipdom, branches }
    }
}

impl StepSink for CfgBuilder {
    fn step(&mut self, s: &Step) {
        let iw = s.iw();
        let fall = s.pc.wrapping_add(if s.thumb { 2 } else { 4 }) | s.thumb as u32;
        if s.call {
            self.add(iw, fall);
        } else if s.class == BranchClass::Return {
            self.add(iw, if s.taken { EXIT } else { s.next_pc });
            // A conditional return has both successors whichever this run took.
            if !s.thumb && s.word >> 28 < 0xE {
                self.add(iw, EXIT);
                self.add(iw, fall);
            }
        } else {
            self.add(iw, s.next_pc);
            if let Some(o) = other_successor(s) {
                self.add(iw, o);
            }
        }
        self.last = Some(iw);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(pc: u32, next: u32, class: BranchClass, taken: bool) -> Step {
        Step { pc, next_pc: next, class, taken, executed: true, word: 0xE1A0_0000, ..Step::default() }
    }

    /// A diamond inside a loop: 0 branches to 8 or falls to 4; both reach 12, which loops
    /// back to 0 or returns.
    #[test]
    fn post_dominators_of_a_diamond_in_a_loop() {
        let mut b = CfgBuilder::default();
        let trace = [
            step(0, 4, BranchClass::IndirectCond, false),
            step(4, 12, BranchClass::DirectUncond, true),
            step(12, 0, BranchClass::IndirectCond, true),
            step(0, 8, BranchClass::IndirectCond, true),
            step(8, 12, BranchClass::None, false),
            step(12, 16, BranchClass::IndirectCond, false),
            step(16, 100, BranchClass::Return, true),
        ];
        for s in &trace {
            b.step(s);
        }
        let pd = b.finish();
        assert_eq!(pd.ipdom[&0], 12);
        assert_eq!(pd.ipdom[&4], 12);
        assert_eq!(pd.ipdom[&8], 12);
        assert_eq!(pd.ipdom[&12], 16);
        assert_eq!(pd.ipdom[&16], EXIT);
        let mut branches: Vec<u32> = pd.branches.iter().copied().collect();
        branches.sort_unstable();
        assert_eq!(branches, [0, 12]);
        // Control parents: 4 and 8 depend on 0, and 0 on the loop branch 12 before it; 12
        // and 16 post-dominate the branches before them, so depend on nothing in this frame.
        let mut cd = ControlDeps::<usize>::new(pd);
        let parents: Vec<Option<usize>> = trace.iter().enumerate().map(|(i, s)| cd.step(s, i)).collect();
        assert_eq!(parents, [None, Some(0), None, Some(2), Some(3), Some(2), None]);
    }
}

/// Immediate post-dominators and the instructions with more than one successor.
#[derive(Clone, Debug, Default)]
pub struct PostDominators {
    pub ipdom: FastMap<u32, u32>,
    pub branches: FastSet<u32>,
}

/// The online control-dependence stack: feed steps in order with an identity for each
/// (a global index, or a statement instance); it returns each step's control parent.
pub struct ControlDeps<X: Copy> {
    pd: PostDominators,
    /// (branch instance, its ipdom, call depth when pushed).
    stack: Vec<(X, u32, u32)>,
    depth: u32,
}

impl<X: Copy> ControlDeps<X> {
    pub fn new(pd: PostDominators) -> Self {
        ControlDeps { pd, stack: Vec::new(), depth: 0 }
    }

    /// The control parent of step `s` (identified by `id`), then account for its effect.
    pub fn step(&mut self, s: &Step, id: X) -> Option<X> {
        let iw = s.iw();
        // Reaching the ipdom of a branch of this frame ends its region.
        while self.stack.last().is_some_and(|&(_, pd, d)| d == self.depth && pd == iw) {
            self.stack.pop();
        }
        let parent = self.stack.last().map(|e| e.0);
        if s.call {
            self.depth += 1;
        } else if s.class == BranchClass::Return && s.taken {
            while self.stack.last().is_some_and(|e| e.2 == self.depth) {
                self.stack.pop();
            }
            self.depth = self.depth.saturating_sub(1);
        }
        let leaves_frame = s.call || (s.class == BranchClass::Return && s.taken);
        if !leaves_frame && self.pd.branches.contains(&iw) {
            let pd = self.pd.ipdom.get(&iw).copied().unwrap_or(EXIT);
            // A loop branch met again replaces its own entry instead of piling up.
            if let Some(top) = self.stack.last_mut() {
                if top.1 == pd && top.2 == self.depth {
                    *top = (id, pd, self.depth);
                    return parent;
                }
            }
            self.stack.push((id, pd, self.depth));
        }
        parent
    }
}
