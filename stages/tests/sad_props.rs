//! SAD properties of algorithms.md §5.4 on random traces: P1 (LRU events and final resident
//! set for every m in [r, pages+1]), P2 (OPT fault counts), P3 (subsequence, stamps
//! copied), P4 (idempotence), P5 (dirty flags), P6 (a window of r+1 breaks P1 at m = r),
//! the naive-rule counterexample, and the per-ASID guarantee.

use proptest::prelude::*;
use std::collections::BTreeSet;
use streamtrace_stages::laplace::{Access, RawRecord, SadRecord};
use streamtrace_stages::paging::{opt_faults, simulate_lru, Fault, LruReport, PageKey};
use streamtrace_stages::sad::{key_of, reduce_pages, reduce_raw, split_pages};

fn lru(v: &[SadRecord], m: usize) -> LruReport {
    simulate_lru(v.iter().map(|r| (key_of(r), r.kind == Access::Write)), m)
}

fn distinct_pages(v: &[SadRecord]) -> usize {
    v.iter().map(key_of).collect::<BTreeSet<_>>().len()
}

/// Fault events without dirty flags (P1 compares pages only).
fn events_no_dirty(r: &LruReport) -> Vec<(PageKey, Option<PageKey>)> {
    r.events
        .iter()
        .map(|f: &Fault| (f.page, f.evicted.map(|e| e.page)))
        .collect()
}

fn resident_pages(r: &LruReport) -> Vec<PageKey> {
    r.resident.iter().map(|(p, _)| *p).collect()
}

/// P1 for one m: `Err` describes the first difference.
fn p1_holds(orig: &[SadRecord], red: &[SadRecord], m: usize) -> Result<(), String> {
    let (a, b) = (lru(orig, m), lru(red, m));
    if events_no_dirty(&a) != events_no_dirty(&b) {
        return Err(format!("m={m}: fault sequences differ ({} vs {} faults)", a.faults, b.faults));
    }
    if resident_pages(&a) != resident_pages(&b) {
        return Err(format!("m={m}: final resident sets differ"));
    }
    Ok(())
}

/// Page references with rtime = index: `ops` are (page, is_write) over `asid`.
fn page_trace(ops: &[(u8, bool)], asid: u64) -> Vec<SadRecord> {
    ops.iter()
        .enumerate()
        .map(|(i, &(p, w))| SadRecord {
            kind: if w { Access::Write } else { Access::Read },
            cycle: 3 * i as u64,
            itime: i as u64 / 2,
            rtime: i as u64,
            asid,
            vpn: p as u64,
        })
        .collect()
}

/// Traces with locality: runs over a few pages drawn from up to `pages` pages.
fn ops_strategy(pages: u8, max_len: usize) -> impl Strategy<Value = Vec<(u8, bool)>> {
    proptest::collection::vec((0..pages, 1usize..6, proptest::bool::weighted(0.2)), 0..max_len)
        .prop_map(|runs| {
            let mut out = Vec::new();
            for (p, rep, w) in runs {
                // A run: the page, then neighbours, so repeats and middles both occur.
                for k in 0..rep {
                    let q = if k % 2 == 0 { p } else { p.wrapping_add(k as u8) % 16 };
                    out.push((q, w && k == rep - 1));
                }
            }
            out
        })
}

/// `red` is a subsequence of `orig`: each output record equals an input record, in order,
/// except that a read may have become a write (dirty propagation).
fn is_subsequence(orig: &[SadRecord], red: &[SadRecord]) -> bool {
    let mut it = orig.iter();
    red.iter().all(|o| {
        it.by_ref().any(|i| {
            SadRecord {
                kind: o.kind,
                ..*i
            } == *o
                && (o.kind == i.kind || o.kind == Access::Write)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// P1, P2, P3, P4 and P5 together on one random trace.
    #[test]
    fn sad_properties(ops in ops_strategy(12, 60), r in 1usize..7) {
        let orig = page_trace(&ops, 1);
        let (red, st) = reduce_pages(&orig, r).unwrap();
        prop_assert_eq!(st.output_refs as usize, red.len());
        prop_assert_eq!(st.page_refs as usize, orig.len());
        let pages = distinct_pages(&orig);
        let keys_o: Vec<PageKey> = orig.iter().map(key_of).collect();
        let keys_r: Vec<PageKey> = red.iter().map(key_of).collect();
        for m in r..=pages + 1 {
            // P1
            if let Err(e) = p1_holds(&orig, &red, m) { prop_assert!(false, "P1 r={}: {}", r, e); }
            // P5: dirty flags of every eviction and the final dirty set.
            let (a, b) = (lru(&orig, m), lru(&red, m));
            prop_assert_eq!(&a.events, &b.events, "P5 r={} m={}", r, m);
            prop_assert_eq!(&a.resident, &b.resident, "P5 final dirty set r={} m={}", r, m);
            // P2
            prop_assert_eq!(opt_faults(&keys_o, m), opt_faults(&keys_r, m), "P2 r={} m={}", r, m);
        }
        // P3
        prop_assert!(red.windows(2).all(|w| w[0].rtime < w[1].rtime));
        prop_assert!(is_subsequence(&orig, &red));
        // P4
        let (again, _) = reduce_pages(&red, r).unwrap();
        prop_assert_eq!(&again, &red, "P4 r={}", r);
        // No two neighbours refer to the same page (blocking holds on the output).
        prop_assert!(red.windows(2).all(|w| key_of(&w[0]) != key_of(&w[1])));
        // Reduction never grows the trace; every distinct page survives.
        prop_assert!(red.len() <= orig.len());
        prop_assert_eq!(distinct_pages(&red), pages);
    }

    /// The same on raw references with page-crossing accesses, itimes and several page sizes.
    #[test]
    fn sad_on_raw_references(
        raw in proptest::collection::vec((0u8..3, 0u64..0x600, prop::sample::select(vec![1u64, 2, 4, 8])), 0..150),
        r in 1usize..6,
        page_log2 in 4u32..9,
    ) {
        let page = 1u64 << page_log2;
        let refs: Vec<RawRecord> = raw.iter().enumerate().map(|(i, &(k, a, len))| RawRecord {
            kind: [Access::Read, Access::Write, Access::Ifetch][k as usize],
            cycle: 10 * i as u64,
            len,
            asid: 1,
            vaddr: a,
        }).collect();
        let orig = split_pages(&refs, page).unwrap();
        let (red, st) = reduce_raw(&refs, r, page).unwrap();
        prop_assert_eq!(st.input_refs as usize, refs.len());
        prop_assert_eq!(st.page_refs as usize, orig.len());
        prop_assert_eq!(st.page_refs, st.blocked + st.dropped + st.output_refs);
        for m in r..=distinct_pages(&orig) + 1 {
            let (a, b) = (lru(&orig, m), lru(&red, m));
            prop_assert_eq!(&a.events, &b.events, "r={} m={}", r, m);
            prop_assert_eq!(&a.resident, &b.resident);
        }
        prop_assert!(is_subsequence(&orig, &red));
        // §4.4: stamps never decrease; equal RTIMEs only for the two halves of a crossing.
        for w in red.windows(2) {
            prop_assert!(w[0].rtime <= w[1].rtime && w[0].itime <= w[1].itime && w[0].cycle <= w[1].cycle);
            if w[0].rtime == w[1].rtime {
                prop_assert_eq!(w[0].vpn + 1, w[1].vpn);
                prop_assert_eq!((w[0].itime, w[0].cycle), (w[1].itime, w[1].cycle));
            }
        }
        // ITIME counts the ifetches before the reference.
        for o in &red {
            let before = refs[..o.rtime as usize].iter().filter(|x| x.kind == Access::Ifetch).count();
            prop_assert_eq!(o.itime, before as u64);
        }
        prop_assert_eq!(&reduce_pages(&red, r).unwrap().0, &red);
    }

    /// Per-ASID (§5.1): two unshared address spaces, each simulated by its own LRU with an
    /// allocation of at least r pages, see exactly the original per-process behaviour.
    #[test]
    fn per_asid_lru_is_exact(a in ops_strategy(8, 30), b in ops_strategy(8, 30), picks in proptest::collection::vec(any::<bool>(), 0..400), r in 1usize..5) {
        let (ta, tb) = (page_trace(&a, 1), page_trace(&b, 2));
        // Interleave the two processes in a random schedule.
        let (mut ia, mut ib) = (0, 0);
        let mut mixed = Vec::new();
        for (i, pick_a) in picks.iter().chain(std::iter::repeat_n(&true, ta.len() + tb.len())).enumerate() {
            let next = if (*pick_a && ia < ta.len()) || ib == tb.len() { ia += 1; ta.get(ia - 1) } else { ib += 1; tb.get(ib - 1) };
            match next {
                Some(&rec) => mixed.push(SadRecord { rtime: mixed.len() as u64, cycle: i as u64, ..rec }),
                None => break,
            }
        }
        prop_assert_eq!(mixed.len(), ta.len() + tb.len());
        let (red, _) = reduce_pages(&mixed, r).unwrap();
        for asid in [1u64, 2] {
            let po: Vec<SadRecord> = mixed.iter().filter(|x| x.asid == asid).copied().collect();
            let pr: Vec<SadRecord> = red.iter().filter(|x| x.asid == asid).copied().collect();
            for m in r..=distinct_pages(&po) + 1 {
                let (x, y) = (lru(&po, m), lru(&pr, m));
                prop_assert_eq!(&x.events, &y.events, "asid {} r={} m={}", asid, r, m);
                prop_assert_eq!(&x.resident, &y.resident);
            }
        }
        // And global LRU with m >= r, as for one process.
        for m in r..=distinct_pages(&mixed) + 1 {
            prop_assert_eq!(lru(&mixed, m).events, lru(&red, m).events);
        }
    }
}

// SplitMix64 for the deterministic searches below.
#[path = "../../scripts/bench-support/splitmix.rs"]
mod splitmix;
use splitmix::Rng;

fn random_ops(rng: &mut Rng) -> Vec<(u8, bool)> {
    let pages = 2 + rng.below(8) as u8;
    let len = rng.below(40) as usize;
    (0..len)
        .map(|_| (rng.below(pages as u64) as u8, rng.below(5) == 0))
        .collect()
}

/// P6: reducing with a window of r+1 pages violates P1 at m = r on many random traces; the
/// checker therefore can fail, and r is the tight bound.
#[test]
fn window_of_r_plus_one_breaks_lru_at_r() {
    let mut rng = Rng(6);
    let (mut cases, mut broken) = (0, 0);
    let mut example = None;
    for _ in 0..3000 {
        let ops = random_ops(&mut rng);
        let r = 1 + rng.below(4) as usize;
        let orig = page_trace(&ops, 1);
        let (too_wide, _) = reduce_pages(&orig, r + 1).unwrap();
        let (exact, _) = reduce_pages(&orig, r).unwrap();
        cases += 1;
        assert!(p1_holds(&orig, &exact, r).is_ok(), "SAD itself broke P1: {ops:?} r={r}");
        if let Err(e) = p1_holds(&orig, &too_wide, r) {
            broken += 1;
            example.get_or_insert((ops.clone(), r, e));
        }
    }
    eprintln!("P6: a window of r+1 broke P1 at m=r in {broken} of {cases} random traces; first: {example:?}");
    assert!(broken > cases / 10, "only {broken} of {cases}");
}

/// The checker also catches a reduction that loses one record it needed.
#[test]
fn checker_catches_a_removed_record() {
    let mut rng = Rng(7);
    let mut caught = 0;
    for _ in 0..500 {
        let ops = random_ops(&mut rng);
        let orig = page_trace(&ops, 1);
        let r = 1 + rng.below(3) as usize;
        let (mut red, _) = reduce_pages(&orig, r).unwrap();
        if red.len() < 2 {
            continue;
        }
        red.remove(rng.below(red.len() as u64) as usize);
        if (r..=distinct_pages(&orig) + 1).any(|m| p1_holds(&orig, &red, m).is_err()) {
            caught += 1;
        }
    }
    assert!(caught > 100, "caught only {caught}");
}

/// algorithms.md §5.2 negative test: the naive rule ("drop x if the previous and next
/// references to its page in the original bracket x within <= r distinct pages") is unsound
/// on `p a p b p c p` with r = 3; SAD is not.
#[test]
fn naive_rule_fails_where_sad_does_not() {
    let s: Vec<(u8, bool)> = "papbpcp".bytes().map(|c| (c, false)).collect();
    let orig = page_trace(&s, 1);
    let r = 3;
    let naive: Vec<SadRecord> = (0..orig.len())
        .filter(|&i| {
            let k = key_of(&orig[i]);
            let prev = (0..i).rev().find(|&j| key_of(&orig[j]) == k);
            let next = (i + 1..orig.len()).find(|&j| key_of(&orig[j]) == k);
            let drop = match (prev, next) {
                (Some(a), Some(b)) => {
                    orig[a..=b].iter().map(key_of).collect::<BTreeSet<_>>().len() <= r
                }
                _ => false,
            };
            !drop
        })
        .map(|i| orig[i])
        .collect();
    let text = |v: &[SadRecord]| v.iter().map(|x| x.vpn as u8 as char).collect::<String>();
    assert_eq!(text(&naive), "pabcp");
    assert_eq!(lru(&orig, 3).faults, 4);
    assert_eq!(lru(&naive, 3).faults, 5);
    assert!(p1_holds(&orig, &naive, 3).is_err());
    let (sad, _) = reduce_pages(&orig, r).unwrap();
    assert_eq!(lru(&sad, 3).faults, 4);
    for m in 3..=5 {
        p1_holds(&orig, &sad, m).unwrap();
    }
}
