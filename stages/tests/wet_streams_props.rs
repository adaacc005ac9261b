//! Property tests of the tier-2 bidirectional streams (algorithms.md §6.7 W4): every method
//! returns the original values in both directions and under random walks, restores its
//! state exactly, persists and parses back identically, and never panics on corrupt bytes.

use proptest::prelude::*;
use streamtrace_stages::wet::bidir::{BiStream, Method, CANDIDATES};

/// Streams of the shapes WET labels have: random words, a small alphabet (values), strided
/// runs (addresses, timestamps), and repeating patterns.
fn stream() -> impl Strategy<Value = (Vec<u64>, u8)> {
    let width = prop_oneof![Just(8u8), Just(16u8), Just(32u8), Just(64u8)];
    let shape = prop_oneof![
        prop::collection::vec(any::<u64>(), 0..400),
        prop::collection::vec(0u64..5, 0..2000),
        (any::<u64>(), 1u64..64, 0usize..2000, 1usize..40).prop_map(|(base, stride, n, run)| {
            (0..n).map(|i| base.wrapping_add(stride * (i % run) as u64)).collect()
        }),
        (prop::collection::vec(any::<u32>(), 1..12), 0usize..1500)
            .prop_map(|(pat, n)| (0..n).map(|i| pat[i % pat.len()] as u64).collect()),
    ];
    (shape, width).prop_map(|(v, w)| {
        let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        (v.into_iter().map(|x| x & mask).collect(), w)
    })
}

#[derive(Clone, Debug)]
enum Move {
    Back,
    Fwd,
    Seek(usize),
}

fn moves() -> impl Strategy<Value = Vec<Move>> {
    prop::collection::vec(
        prop_oneof![4 => Just(Move::Back), 4 => Just(Move::Fwd), 1 => (0usize..2100).prop_map(Move::Seek)],
        0..300,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn walks_return_the_values_and_restore_the_state((values, width) in stream(), walk in moves()) {
        for method in CANDIDATES {
            let mut s = BiStream::compress(&values, width, method);
            let at_rest = s.to_bytes();
            prop_assert_eq!(s.stored_bits(), 8 * at_rest.len() as u64);
            let mut back: Vec<u64> = std::iter::from_fn(|| s.back()).collect();
            back.reverse();
            prop_assert_eq!(&back, &values, "{:?}: backwards", method);
            prop_assert_eq!(s.position(), 0);
            prop_assert_eq!(s.peek_prev(), None);
            for m in &walk {
                let p = s.position();
                match m {
                    Move::Back => {
                        let want = p.checked_sub(1).map(|i| values[i]);
                        prop_assert_eq!(s.peek_prev(), want);
                        prop_assert_eq!(s.back(), want, "{:?}: back at {}", method, p);
                    }
                    Move::Fwd => {
                        let want = values.get(p).copied();
                        prop_assert_eq!(s.peek_next(), want);
                        prop_assert_eq!(s.fwd(), want, "{:?}: fwd at {}", method, p);
                    }
                    Move::Seek(q) => {
                        s.seek(*q);
                        prop_assert_eq!(s.position(), (*q).min(values.len()));
                    }
                }
            }
            // Persisting from anywhere gives the at-rest bytes; walking to the end restores them.
            prop_assert_eq!(&s.to_bytes(), &at_rest, "{:?}: to_bytes away from the end", method);
            s.seek(values.len());
            prop_assert_eq!(&s.to_bytes(), &at_rest);
            let (mut parsed, used) = BiStream::from_bytes(&at_rest).unwrap();
            prop_assert_eq!(used, at_rest.len());
            prop_assert_eq!(&parsed.to_bytes(), &at_rest);
            let mut again: Vec<u64> = std::iter::from_fn(|| parsed.back()).collect();
            again.reverse();
            prop_assert_eq!(&again, &values, "{:?}: parsed stream backwards", method);
        }
    }

    #[test]
    fn the_best_method_is_no_larger_than_any((values, width) in stream()) {
        let best = BiStream::compress_best(&values, width);
        for method in CANDIDATES {
            prop_assert!(best.stored_bits() <= BiStream::compress(&values, width, method).stored_bits());
        }
        prop_assert!(best.stored_bits() <= BiStream::compress(&values, width, Method::Raw).stored_bits());
        if values.len() < 16 {
            prop_assert_eq!(best.method(), Method::Raw);
        }
    }

    #[test]
    fn corrupt_bytes_never_panic((values, width) in stream(), flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4)) {
        let bytes = BiStream::compress_best(&values, width).to_bytes();
        for cut in 0..bytes.len().min(64) {
            prop_assert!(BiStream::from_bytes(&bytes[..cut]).is_err(), "a prefix of {} bytes parsed", cut);
        }
        let mut bad = bytes.clone();
        for (i, x) in flips {
            let i = i % bad.len();
            bad[i] ^= x | 1;
        }
        if let Ok((mut s, used)) = BiStream::from_bytes(&bad) {
            prop_assert!(used <= bad.len());
            // Whatever it holds, walking it must not panic.
            while s.back().is_some() {}
            while s.fwd().is_some() {}
        }
    }
}

#[test]
fn methods_fit_their_shapes() {
    let n = 5000u64;
    let ramp: Vec<u64> = (0..n).map(|i| 0x8000 + 4 * i).collect();
    let cycle: Vec<u64> = (0..n).map(|i| [3, 9, 27, 81][i as usize % 4]).collect();
    let best_ramp = BiStream::compress_best(&ramp, 32);
    assert!(matches!(best_ramp.method(), Method::Dfcm(_) | Method::LastNStride(_)), "{:?}", best_ramp.method());
    assert!(best_ramp.stored_bits() < n * 2, "{}", best_ramp.stored_bits());
    let best_cycle = BiStream::compress_best(&cycle, 32);
    assert!(best_cycle.stored_bits() < n * 2, "{:?} {}", best_cycle.method(), best_cycle.stored_bits());
    // Random words do not grow: plain values are a candidate.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u64> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x & 0xFFFF_FFFF
        })
        .collect();
    let best_random = BiStream::compress_best(&random, 32);
    assert_eq!(best_random.method(), Method::Raw);
    assert!(best_random.stored_bits() <= n * 32 + 64, "{}", best_random.stored_bits());
}
