//! V1 and V2 of docs/citcat.md 7 (V3 is checked by the replay itself, which fails when an
//! event is left over or the end key is missed).

use super::format::{is_cpu_record, Cat, CatRecord, TraceEntry};

/// The first difference between two sequences.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// Index of the differing entry (for a CAT: among the CPU-originated records).
    pub index: usize,
    /// Index of the record in the whole first CAT (CAT comparisons only).
    pub record: Option<usize>,
    pub expected: String,
    pub got: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "entry {}", self.index)?;
        if let Some(r) = self.record {
            write!(f, " (record {r} of the first CAT)")?;
        }
        write!(f, ": expected {}, got {}", self.expected, self.got)
    }
}

fn first_difference<T: PartialEq + std::fmt::Display>(
    a: impl Iterator<Item = T>,
    b: impl Iterator<Item = T>,
    eq: impl Fn(&T, &T) -> bool,
) -> Option<(usize, String, String)> {
    let mut a = a.fuse();
    let mut b = b.fuse();
    let mut i = 0;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (Some(x), Some(y)) if eq(&x, &y) => {}
            (x, y) => {
                let show = |v: Option<T>| v.map_or_else(|| "the end".to_string(), |v| v.to_string());
                return Some((i, show(x), show(y)));
            }
        }
        i += 1;
    }
}

/// V1: the instruction traces are equal entry for entry.
pub fn compare_traces(expected: &[TraceEntry], got: &[TraceEntry]) -> Option<Mismatch> {
    first_difference(expected.iter(), got.iter(), |a, b| a == b).map(|(index, expected, got)| Mismatch { index, record: None, expected, got })
}

/// V2: the CPU-originated records (kinds 1-5 and 10) are equal in kind, size, flags,
/// address and data, record by record; cycles are not compared.
pub fn compare_cats(expected: &Cat, got: &Cat) -> Option<Mismatch> {
    if (expected.line_bytes, expected.write_back, expected.write_allocate) != (got.line_bytes, got.write_back, got.write_allocate) {
        return Some(Mismatch {
            index: 0,
            record: None,
            expected: format!("header line {} wb {} wa {}", expected.line_bytes, expected.write_back, expected.write_allocate),
            got: format!("header line {} wb {} wa {}", got.line_bytes, got.write_back, got.write_allocate),
        });
    }
    fn cpu(c: &Cat) -> Vec<(usize, &CatRecord)> {
        c.records.iter().enumerate().filter(|(_, r)| is_cpu_record(r.kind)).collect()
    }
    let (a, b) = (cpu(expected), cpu(got));
    first_difference(a.iter().map(|(_, r)| *r), b.iter().map(|(_, r)| *r), |x, y| x.same_as(y))
        .map(|(index, e, g)| Mismatch { index, record: a.get(index).map(|(i, _)| *i), expected: e, got: g })
}
