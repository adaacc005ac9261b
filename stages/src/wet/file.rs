//! The `.wet` file (docs/wet.md section 7): the graph skeleton in varints and every label
//! stream in its stored form, raw (tier 1) or bidirectional (tier 2). Reading validates
//! every index and length and names the byte offset of what is wrong. The file ends with a
//! trailer (count + CRC-32C, section 7.1), checked before the body is read.

use super::bidir::BiStream;
use super::build::{Edge, Node, Stmt, ValueGroup, WetCounts, WetGraph};
use crate::bytes::{put_trailer, put_varint, split_trailer, ByteReader};
use super::stream::{Cursor, RawStream};

const MAGIC: &[u8; 8] = b"STWET\x001\x00";
/// The tag of the trailer (docs/wet.md 7.1).
pub const TRAILER_TAG: [u8; 4] = *b"WEND";
/// Magic, stream kind and flags: what a file has before the trailer at the least.
const HEADER_LEN: usize = 10;

/// A stream form the file can hold.
pub trait StoredStream: Cursor + Sized {
    /// The kind byte of the file.
    const KIND: u8;
    /// An empty stream (the labels of a local-implicit edge).
    fn empty() -> Self;
    fn write_to(&self, out: &mut Vec<u8>);
    /// Parse one stream from the start of `bytes`; returns it and the bytes used.
    fn read_from(bytes: &[u8]) -> Result<(Self, usize), String>;
}

impl StoredStream for RawStream {
    const KIND: u8 = 0;
    fn empty() -> Self {
        RawStream::default()
    }
    fn write_to(&self, out: &mut Vec<u8>) {
        put_varint(out, self.len() as u64);
        for &v in self.values() {
            put_varint(out, v);
        }
    }
    fn read_from(bytes: &[u8]) -> Result<(Self, usize), String> {
        let mut r = ByteReader::new(bytes);
        let n = r.count("stream length")?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(r.varint("stream value")?);
        }
        Ok((RawStream::from(v), r.pos))
    }
}

impl StoredStream for BiStream {
    const KIND: u8 = 1;
    fn empty() -> Self {
        BiStream::compress_best(&[], 32)
    }
    fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bytes());
    }
    fn read_from(bytes: &[u8]) -> Result<(Self, usize), String> {
        BiStream::from_bytes(bytes).map_err(|e| e.to_string())
    }
}

/// What is wrong with a `.wet` file, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("WET file, byte {offset}: {what}")]
pub struct WetFileError {
    pub offset: usize,
    pub what: String,
}

/// Reads one persisted stream at the reader's position.
fn stream<S: StoredStream>(r: &mut ByteReader, what: &str) -> Result<S, String> {
    let (s, used) = S::read_from(&r.bytes[r.pos..]).map_err(|e| format!("{what}: {e}"))?;
    r.pos += used;
    Ok(s)
}

impl<S: StoredStream> WetGraph<S> {
    /// The file bytes. Every stream cursor is written at its end position.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(MAGIC);
        o.push(S::KIND);
        o.push(self.edges.iter().any(|e| e.port == super::build::CONTROL) as u8);
        let c = &self.counts;
        for v in [c.instructions, c.block_executions, c.path_executions, c.values, c.addresses, c.dependence_pairs, c.implicit_pairs] {
            put_varint(&mut o, v);
        }
        put_varint(&mut o, self.first_node.map_or(0, |n| n as u64 + 1));
        put_varint(&mut o, self.last_node.map_or(0, |n| n as u64 + 1));
        put_varint(&mut o, self.nodes.len() as u64);
        for n in &self.nodes {
            put_varint(&mut o, n.stmts.len() as u64);
            put_varint(&mut o, n.succ.len() as u64);
            for &s in &n.succ {
                put_varint(&mut o, s as u64);
            }
            n.ts.write_to(&mut o);
        }
        put_varint(&mut o, self.stmts.len() as u64);
        for s in &self.stmts {
            put_varint(&mut o, s.iw as u64);
            put_varint(&mut o, s.def_ports.len() as u64);
            o.extend_from_slice(&s.def_ports);
            put_varint(&mut o, s.loaded as u64);
            o.push(s.exec.is_some() as u8 | (s.access_counts.is_some() as u8) << 1 | (s.group.is_some() as u8) << 2);
            put_varint(&mut o, s.accesses_each as u64);
            if let Some(g) = s.group {
                put_varint(&mut o, g as u64);
            }
            if let Some(e) = &s.exec {
                e.write_to(&mut o);
            }
            for v in &s.values {
                v.write_to(&mut o);
            }
            if let Some(c) = &s.access_counts {
                c.write_to(&mut o);
            }
            s.addrs.write_to(&mut o);
        }
        put_varint(&mut o, self.edges.len() as u64);
        for e in &self.edges {
            put_varint(&mut o, e.user as u64);
            o.push(e.port);
            put_varint(&mut o, e.def as u64);
            match e.shared {
                Some(owner) => {
                    o.push(2);
                    put_varint(&mut o, owner as u64);
                }
                None => o.push(e.local_implicit as u8),
            }
            put_varint(&mut o, e.pairs);
            if !e.local_implicit && e.shared.is_none() {
                e.use_inst.write_to(&mut o);
                e.def_inst.write_to(&mut o);
            }
        }
        put_varint(&mut o, self.groups.len() as u64);
        for g in &self.groups {
            put_varint(&mut o, g.node as u64);
            put_varint(&mut o, g.unique as u64);
            put_varint(&mut o, g.columns.len() as u64);
            for &(s, p) in &g.columns {
                put_varint(&mut o, s as u64);
                o.push(p);
            }
            g.pattern.write_to(&mut o);
            for u in &g.uvals {
                u.write_to(&mut o);
            }
        }
        put_trailer(&mut o, TRAILER_TAG, self.counts.instructions);
        o
    }

    /// Parse a file written by [`WetGraph::to_bytes`] with the same stream form: the magic,
    /// then the trailer (so a cut or damaged file is an error before any field is used), then
    /// the body, then the trailer's count.
    pub fn from_bytes(bytes: &[u8]) -> Result<WetGraph<S>, WetFileError> {
        file_kind(bytes)?;
        let (body, count) = split_trailer(bytes, TRAILER_TAG, HEADER_LEN).map_err(|(offset, what)| WetFileError { offset, what })?;
        let mut r = ByteReader::new(body);
        let g = parse(&mut r).map_err(|what| WetFileError { offset: r.pos, what })?;
        if count != g.counts.instructions {
            return Err(WetFileError {
                offset: bytes.len() - 12,
                what: format!("the trailer counts {count} instructions, the file holds {}", g.counts.instructions),
            });
        }
        Ok(g)
    }
}

/// The stream kind of a file (0 raw, 1 bidirectional), after checking the magic.
pub fn file_kind(bytes: &[u8]) -> Result<u8, WetFileError> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err(WetFileError { offset: 0, what: "not a streamtrace WET file (bad magic)".into() });
    }
    Ok(bytes[8])
}

fn parse<S: StoredStream>(r: &mut ByteReader) -> Result<WetGraph<S>, String> {
    let kind = file_kind(r.bytes).map_err(|e| e.what)?;
    if kind != S::KIND {
        return Err(format!("stream kind {kind}, expected {}", S::KIND));
    }
    if r.bytes[9] > 1 {
        r.pos = 9;
        return Err(format!("flags {:#04x}: only bit 0 is defined", r.bytes[9]));
    }
    r.pos = HEADER_LEN;
    let mut c = [0u64; 7];
    for v in &mut c {
        *v = r.varint("counts")?;
    }
    let counts = WetCounts {
        instructions: c[0],
        block_executions: c[1],
        path_executions: c[2],
        values: c[3],
        addresses: c[4],
        dependence_pairs: c[5],
        implicit_pairs: c[6],
    };
    let first = r.varint("first node")?;
    let last = r.varint("last node")?;
    let n_nodes = r.count("node count")?;
    let mut nodes: Vec<Node<S>> = Vec::with_capacity(n_nodes);
    let mut succs = Vec::with_capacity(n_nodes);
    let mut n_stmts_total = 0usize;
    for _ in 0..n_nodes {
        let ns = r.count("statement count of a node")?;
        let nsucc = r.count("successor count")?;
        let mut succ = Vec::with_capacity(nsucc);
        for _ in 0..nsucc {
            succ.push(r.index("successor", n_nodes)?);
        }
        let ts = stream::<S>(r, "node timestamps")?;
        let first_stmt = n_stmts_total as u32;
        n_stmts_total += ns;
        nodes.push(Node { stmts: (first_stmt..n_stmts_total as u32).collect(), succ: Vec::new(), pred: Vec::new(), ts });
        succs.push(succ);
    }
    for (i, succ) in succs.into_iter().enumerate() {
        for s in succ {
            if nodes[i].succ.contains(&s) {
                return Err(format!("node {i} lists successor {s} twice"));
            }
            nodes[i].succ.push(s);
            nodes[s as usize].pred.push(i as u32);
        }
    }
    let check_node = |v: u64, what: &str| -> Result<Option<u32>, String> {
        match v {
            0 => Ok(None),
            v if v - 1 < n_nodes as u64 => Ok(Some((v - 1) as u32)),
            v => Err(format!("{what} {} out of range", v - 1)),
        }
    };
    let first_node = check_node(first, "first node")?;
    let last_node = check_node(last, "last node")?;
    let n_stmts = r.count("statement count")?;
    if n_stmts != n_stmts_total {
        return Err(format!("{n_stmts} statements, but the nodes hold {n_stmts_total}"));
    }
    let mut stmts: Vec<Stmt<S>> = Vec::with_capacity(n_stmts);
    for (ni, n) in nodes.iter().enumerate() {
        for (offset, _) in n.stmts.iter().enumerate() {
            let iw = r.varint("instruction address")?;
            let iw = u32::try_from(iw).map_err(|_| format!("instruction address {iw:#x} beyond 32 bits"))?;
            let nd = r.count("def port count")?;
            let mut def_ports = Vec::with_capacity(nd);
            for _ in 0..nd {
                let p = r.u8("def port")?;
                if p > super::capture::FLAGS {
                    return Err(format!("def port {p} is not a register or the flags"));
                }
                def_ports.push(p);
            }
            let loaded = r.varint("loaded mask")?;
            let loaded = u16::try_from(loaded).map_err(|_| format!("loaded mask {loaded:#x} beyond 16 bits"))?;
            let flags = r.u8("statement flags")?;
            if flags > 7 {
                return Err(format!("statement flags {flags:#x}"));
            }
            let accesses_each = r.varint("accesses per instance")?;
            let accesses_each = u32::try_from(accesses_each).map_err(|_| "accesses per instance beyond 32 bits".to_string())?;
            let group = if flags & 4 != 0 { Some(r.varint("group id")? as u32) } else { None };
            let exec = if flags & 1 != 0 { Some(stream::<S>(r, "execution flags")?) } else { None };
            let mut values = Vec::new();
            if group.is_none() {
                for _ in 0..nd {
                    values.push(stream::<S>(r, "values")?);
                }
            }
            let access_counts = if flags & 2 != 0 { Some(stream::<S>(r, "access counts")?) } else { None };
            let addrs = stream::<S>(r, "addresses")?;
            stmts.push(Stmt {
                iw,
                node: ni as u32,
                offset: offset as u32,
                def_ports,
                loaded,
                exec,
                values,
                accesses_each,
                access_counts,
                addrs,
                edges: Vec::new(),
                group,
            });
        }
    }
    let n_edges = r.count("edge count")?;
    let mut edges: Vec<Edge<S>> = Vec::with_capacity(n_edges);
    for i in 0..n_edges {
        let user = r.index("edge user", n_stmts)?;
        let port = r.u8("edge port")?;
        if port > super::build::CONTROL {
            return Err(format!("edge port {port}"));
        }
        let def = r.index("edge def", n_stmts)?;
        let (implicit, shared) = match r.u8("edge label kind")? {
            0 => (false, None),
            1 => (true, None),
            2 => {
                let owner = r.index("label owner edge", i)?;
                if edges[owner as usize].shared.is_some() || edges[owner as usize].local_implicit {
                    return Err(format!("edge {i} shares the labels of edge {owner}, which holds none"));
                }
                (false, Some(owner))
            }
            b => return Err(format!("edge label kind {b}")),
        };
        let pairs = r.varint("edge pair count")?;
        let (use_inst, def_inst) = if implicit || shared.is_some() {
            (S::empty(), S::empty())
        } else {
            (stream::<S>(r, "edge use instances")?, stream::<S>(r, "edge def instances")?)
        };
        if !implicit && shared.is_none() && (use_inst.len() as u64 != pairs || def_inst.len() as u64 != pairs) {
            return Err(format!("edge {i}: {pairs} pairs but streams of {} and {}", use_inst.len(), def_inst.len()));
        }
        stmts[user as usize].edges.push(i as u32);
        edges.push(Edge { user, port, def, use_inst, def_inst, local_implicit: implicit, shared, pairs });
    }
    let n_groups = r.count("group count")?;
    let mut groups: Vec<ValueGroup<S>> = Vec::with_capacity(n_groups);
    for gi in 0..n_groups {
        let node = r.index("group node", n_nodes)?;
        let unique = r.varint("unique tuples")?;
        let unique = u32::try_from(unique).map_err(|_| "unique tuples beyond 32 bits".to_string())?;
        let nc = r.count("group columns")?;
        let mut columns = Vec::with_capacity(nc);
        for _ in 0..nc {
            let s = r.index("group column statement", n_stmts)?;
            let p = r.u8("group column port")?;
            let st = &stmts[s as usize];
            if st.group != Some(gi as u32) || p as usize >= st.def_ports.len() || st.node != node {
                return Err(format!("group {gi}: column ({s}, {p}) does not belong to it"));
            }
            columns.push((s, p));
        }
        let pattern = stream::<S>(r, "group pattern")?;
        let mut uvals = Vec::with_capacity(nc);
        for _ in 0..nc {
            uvals.push(stream::<S>(r, "group unique values")?);
        }
        groups.push(ValueGroup { node, columns, unique, pattern, uvals });
    }
    for (i, s) in stmts.iter().enumerate() {
        if let Some(g) = s.group {
            if g as usize >= groups.len() {
                return Err(format!("statement {i}: group {g} out of range"));
            }
        }
    }
    if r.pos != r.bytes.len() {
        return Err(format!("{} bytes between the last group and the trailer", r.bytes.len() - r.pos));
    }
    Ok(WetGraph { nodes, stmts, edges, groups, first_node, last_node, counts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wet::build::WetCounts;

    /// A small graph by hand: two nodes, one statement each, one edge, raw streams.
    fn small() -> WetGraph<RawStream> {
        let stmt = |node: u32, iw: u32, vals: Vec<u64>| Stmt {
            iw,
            node,
            offset: 0,
            def_ports: vec![0],
            loaded: 0,
            exec: None,
            values: vec![RawStream::from(vals)],
            accesses_each: 0,
            access_counts: None,
            addrs: RawStream::default(),
            edges: Vec::new(),
            group: None,
        };
        let mut g = WetGraph {
            nodes: vec![
                Node { stmts: vec![0], succ: vec![1], pred: vec![], ts: RawStream::from(vec![1, 3]) },
                Node { stmts: vec![1], succ: vec![], pred: vec![0], ts: RawStream::from(vec![2, 4]) },
            ],
            stmts: vec![stmt(0, 0x100, vec![7, 9]), stmt(1, 0x104, vec![8, 10])],
            edges: vec![Edge {
                user: 1,
                port: 0,
                def: 0,
                use_inst: RawStream::from(vec![0, 1]),
                def_inst: RawStream::from(vec![0, 1]),
                local_implicit: false,
                shared: None,
                pairs: 2,
            }],
            groups: vec![],
            first_node: Some(0),
            last_node: Some(1),
            counts: WetCounts { instructions: 4, path_executions: 4, values: 4, dependence_pairs: 2, ..Default::default() },
        };
        g.stmts[1].edges.push(0);
        g
    }

    #[test]
    fn round_trip_with_trailer() {
        let b = small().to_bytes();
        assert_eq!(&b[b.len() - 16..b.len() - 12], b"WEND");
        let g = WetGraph::<RawStream>::from_bytes(&b).unwrap();
        assert_eq!(g.to_bytes(), b);
    }

    /// Fuzzer finding (wet_file, 2026-11-25): a file whose CRC is right but whose access
    /// count (2^48 - 1) disagrees with its address stream made `addresses` and the other
    /// per-instance queries allocate 16 TiB. They now take at most what the stream holds.
    #[test]
    fn an_access_count_beyond_the_address_stream_is_bounded() {
        let mut bytes = b"STWET\x001\x00\x00".to_vec();
        bytes.extend_from_slice(&[
            0x00, 0x01, 0x00, 0x02, 0x00, 0x29, 0x24, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00,
            0x02, 0x00, 0x00, 0xdb, 0xff, 0x00, 0x00, 0x7b, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x04, 0xff, 0xff, 0xff,
            0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ]);
        crate::bytes::put_trailer(&mut bytes, *b"WEND", 1);
        let mut g = WetGraph::<RawStream>::from_bytes(&bytes).expect("the fuzzer's file parses");
        let pcs: Vec<u32> = g.stmts.iter().map(|s| s.iw).collect();
        assert!(!pcs.is_empty());
        for pc in pcs {
            for i in g.addresses(pc).iter().chain(&g.values(pc)).chain(&g.load_values(pc)) {
                assert!(i.values.len() <= bytes.len(), "{} values from a {}-byte file", i.values.len(), bytes.len());
            }
        }
    }

    /// Every cut and every single-bit flip is an error with an offset inside the file, and
    /// so are bytes after the trailer; a wrong count under a correct CRC is named.
    #[test]
    fn every_cut_and_bit_flip_is_an_error() {
        let b = small().to_bytes();
        for n in 0..b.len() {
            let e = WetGraph::<RawStream>::from_bytes(&b[..n]).err().unwrap_or_else(|| panic!("a prefix of {n} bytes loaded"));
            assert!(e.offset <= n, "{e}");
        }
        for i in 0..b.len() * 8 {
            let mut d = b.clone();
            d[i / 8] ^= 1 << (i % 8);
            let e = WetGraph::<RawStream>::from_bytes(&d).err().unwrap_or_else(|| panic!("bit {i} flipped loaded"));
            assert!(e.offset <= d.len(), "{e}");
        }
        let mut more = b.clone();
        more.push(0);
        assert!(WetGraph::<RawStream>::from_bytes(&more).unwrap_err().what.contains("no WEND trailer"));
        let mut g = small();
        g.counts.instructions = 5;
        let mut d = g.to_bytes();
        let n = d.len();
        d.truncate(n - 16);
        put_trailer(&mut d, TRAILER_TAG, 4);
        let e = WetGraph::<RawStream>::from_bytes(&d).unwrap_err();
        assert_eq!(e.offset, n - 12, "{e}");
        assert!(e.what.contains("counts 4 instructions, the file holds 5"), "{e}");
    }
}
