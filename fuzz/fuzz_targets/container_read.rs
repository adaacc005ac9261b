//! Fuzz target `container_read`: arbitrary bytes through the trace file reader
//! (`ContainerReader`, docs/trace-format.md section 12), pushed in chunks, must never panic,
//! and must read the same way whatever the chunking; the rest of the input, wrapped by the
//! writer, must read back unchanged.
//!
//! Input: byte 0 picks the chunk size (1..=256) and byte 1 the writer's block size
//! (64..=65,536); the rest is both the file read as it is and the stream written and read
//! back. Checks: items and error equal for the chosen chunking and the whole buffer at once;
//! a trailer only after blocks whose lengths add up to its bit length, and then no error
//! but trailing bytes; the round trip.

#![no_main]

use libfuzzer_sys::fuzz_target;
use streamtrace_model::container::{
    to_container, ContainerError, ContainerHeader, ContainerItem, ContainerReader, ProgramIdentity, MAX_BLOCK_SIZE,
    MIN_BLOCK_SIZE,
};

fn read(file: &[u8], chunk: usize) -> (Vec<ContainerItem>, Option<ContainerError>) {
    let mut r = ContainerReader::new();
    let mut items = Vec::new();
    let pull = |r: &mut ContainerReader, items: &mut Vec<ContainerItem>| loop {
        match r.next_item() {
            Ok(Some(it)) => items.push(it),
            Ok(None) => return None,
            Err(e) => return Some(e),
        }
    };
    for part in file.chunks(chunk) {
        r.push(part);
        if let Some(e) = pull(&mut r, &mut items) {
            return (items, Some(e));
        }
    }
    r.finish();
    let e = pull(&mut r, &mut items);
    (items, e)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let chunk = 1 + data[0] as usize;
    let block = (MIN_BLOCK_SIZE << (data[1] % 11)).min(MAX_BLOCK_SIZE);
    let body = &data[2..];

    // As a file: chunking does not matter.
    let (items, err) = read(body, chunk);
    assert_eq!((&items, &err), (&read(body, body.len().max(1)).0, &read(body, body.len().max(1)).1));
    let mut stream_bytes = 0u64;
    for it in &items {
        match it {
            ContainerItem::Header(_) => assert_eq!(stream_bytes, 0),
            ContainerItem::Data { stream_offset, bytes } => {
                assert_eq!(*stream_offset, stream_bytes);
                stream_bytes += bytes.len() as u64;
            }
            ContainerItem::Damaged { stream_offset, len, file_offset } => {
                assert_eq!(*stream_offset, stream_bytes);
                assert!(*file_offset < body.len() as u64);
                stream_bytes += *len as u64;
            }
            ContainerItem::Trailer(t) => {
                assert_eq!(t.bit_len, stream_bytes * 8);
                // After the trailer only bytes behind it can be wrong.
                assert!(matches!(err, None | Some(ContainerError::TrailingBytes { .. })), "{err:?}");
            }
        }
    }
    if let Some(ContainerError::Truncated { offset, .. } | ContainerError::Invalid { offset, .. }) = err {
        assert!(offset <= body.len() as u64);
    }

    // As a stream: written and read back.
    let header = ContainerHeader { block_size: block, config: "rsdc-32x4-128".into(), identity: ProgramIdentity::SegmentHash(7) };
    let file = to_container(&header, body, body.len() as u64);
    let (items, err) = read(&file, chunk);
    assert!(err.is_none(), "{err:?}");
    let mut back = Vec::new();
    for it in &items[1..items.len() - 1] {
        match it {
            ContainerItem::Data { bytes, .. } => back.extend_from_slice(bytes),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(back, body);
    assert_eq!(items[0], ContainerItem::Header(header));
});
