//! V1 and V2 of docs/citcat.md 7 (V3 is checked by the replay itself, which fails when an
//! event is left over or the end key is missed).

use super::format::{is_cpu_record, kind_name, Cat, CatRecord, TraceEntry};

/// The first difference between two sequences.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    /// Index of the differing entry (for a CAT: among the CPU-originated records).
    pub index: usize,
    /// Index of the record in the whole first CAT (CAT comparisons only).
    pub record: Option<usize>,
    pub expected: String,
    pub got: String,
    /// CAT records: the compared fields that differ (the lines above may print alike when
    /// only data beyond their first bytes differs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing: Option<String>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "entry {}", self.index)?;
        if let Some(r) = self.record {
            write!(f, " (record {r} of the first CAT)")?;
        }
        write!(f, ": expected {}, got {}", self.expected, self.got)?;
        if let Some(d) = &self.differing {
            write!(f, "; differing: {d}")?;
        }
        Ok(())
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
    first_difference(expected.iter(), got.iter(), |a, b| a == b).map(|(index, expected, got)| Mismatch { index, record: None, expected, got, differing: None })
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
            differing: None,
        });
    }
    fn cpu(c: &Cat) -> Vec<(usize, &CatRecord)> {
        c.records.iter().enumerate().filter(|(_, r)| is_cpu_record(r.kind)).collect()
    }
    let (a, b) = (cpu(expected), cpu(got));
    first_difference(a.iter().map(|(_, r)| *r), b.iter().map(|(_, r)| *r), |x, y| x.same_as(y))
        .map(|(index, e, g)| Mismatch {
            index,
            record: a.get(index).map(|(i, _)| *i),
            expected: e,
            got: g,
            differing: a.get(index).zip(b.get(index)).map(|((_, x), (_, y))| differing_fields(x, y)),
        })
}

/// The V2 fields of two records that differ, each with both values.
fn differing_fields(x: &CatRecord, y: &CatRecord) -> String {
    let mut d = Vec::new();
    if x.kind != y.kind {
        d.push(format!("kind {} vs {}", kind_name(x.kind), kind_name(y.kind)));
    }
    if x.flags != y.flags {
        d.push(format!("flags {:#06x} vs {:#06x}", x.flags, y.flags));
    }
    if x.addr != y.addr {
        d.push(format!("addr {:#010x} vs {:#010x}", x.addr, y.addr));
    }
    if x.data.len() != y.data.len() {
        d.push(format!("size {} vs {}", x.data.len(), y.data.len()));
    }
    if let Some(i) = x.data.iter().zip(&y.data).position(|(p, q)| p != q) {
        d.push(format!("data byte {i} {:#04x} vs {:#04x}", x.data[i], y.data[i]));
    }
    d.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two line fills that differ only in a data byte past the 8 the record line shows.
    #[test]
    fn v2_names_the_differing_fields() {
        let rec = |data: Vec<u8>| CatRecord { kind: 1, flags: 0, addr: 0x8000, cycle: 5, data };
        let cat = |data: Vec<u8>| Cat { line_bytes: 32, write_back: true, write_allocate: true, records: vec![rec(data)] };
        let a = vec![0u8; 32];
        let mut b = a.clone();
        b[20] = 7;
        let m = compare_cats(&cat(a.clone()), &cat(b)).unwrap();
        assert_eq!(m.expected, m.got, "the record lines print alike");
        assert_eq!(m.differing.as_deref(), Some("data byte 20 0x00 vs 0x07"));
        assert!(m.to_string().ends_with("; differing: data byte 20 0x00 vs 0x07"), "{m}");
        let m = compare_cats(&cat(a.clone()), &cat(a[..16].to_vec())).unwrap();
        assert_eq!(m.differing.as_deref(), Some("size 32 vs 16"));
        assert!(compare_cats(&cat(a.clone()), &cat(a)).is_none());
    }
}
