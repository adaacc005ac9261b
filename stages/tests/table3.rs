//! End-to-end check on Johnson's Table 3 (algorithms.md §2.3 and §3.4): din text in,
//! PDATS (46 B) and PDATS II (28 B) out, and back to the identical din text (275 B).

use streamtrace_stages::din::{DinReader, DinWriter};
use streamtrace_stages::{pdats, pdats2, Ref};

const TABLE3_DIN: &str = "2 430d70\n2 430d74\n2 415130\n0 1000acac\n2 415134\n2 415138\n2 41513c\n\
2 415140\n2 430c20\n2 430c24\n1 7fff00ac\n2 430c28\n1 7fff00a8\n2 430c2c\n1 7fff00a4\n2 430c30\n\
1 7fff009c\n2 430c34\n1 7fff00a0\n2 430c38\n1 7fff0098\n2 430c3c\n2 430c40\n2 430c44\n2 430c48\n\
2 430c4c\n2 430c50\n2 430c54\n2 430c58\n";

#[test]
fn din_to_pdats_and_pdats2_and_back() {
    assert_eq!(TABLE3_DIN.len(), 275, "§3.4: 275 B as din text");
    let refs: Vec<Ref> = DinReader::new(TABLE3_DIN.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(refs.len(), 29);

    // Records between the 16-byte header and the 16-byte trailer (docs/pdats.md).
    let p1 = pdats::encode(&refs, &Default::default()).unwrap();
    assert_eq!(p1.len() - 16 - 16, 46);
    let p2 = pdats2::encode(&refs, &Default::default()).unwrap();
    assert_eq!(p2.len() - 16 - 16, 28);

    for back in [
        pdats::decode(&p1).unwrap().1,
        pdats2::decode(&p2).unwrap().1,
    ] {
        let mut w = DinWriter::new(Vec::new());
        for r in &back {
            w.write(r).unwrap();
        }
        assert_eq!(
            String::from_utf8(w.into_inner().unwrap()).unwrap(),
            TABLE3_DIN
        );
    }
}

#[test]
fn streaming_decoders_over_bufreader() {
    let refs: Vec<Ref> = DinReader::new(TABLE3_DIN.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let p2 = pdats2::encode(&refs, &Default::default()).unwrap();
    let d = pdats2::Pdats2Decoder::new(std::io::BufReader::new(&p2[..])).unwrap();
    assert_eq!(d.collect::<Result<Vec<_>, _>>().unwrap(), refs);
}
