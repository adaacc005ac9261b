//! Source lines of code addresses from an ELF's DWARF line programs (`.debug_line`), for
//! the decoder's symbolized views: what `addr2line -e PROG ADDR` prints, as a sorted table
//! built once, so a lookup is a binary search.

use std::collections::HashMap;
use std::path::PathBuf;

use gimli::{EndianSlice, LittleEndian};

/// `file` of a row that ends a sequence (the addresses from it on have no line).
const END: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Row {
    addr: u32,
    file: u32,
    line: u32,
}

/// Address -> (source file, line) from every compilation unit's line program. Empty when
/// the ELF carries no `.debug_line` (the committed test programs are built without `-g`).
#[derive(Clone, Debug, Default)]
pub struct LineTable {
    rows: Vec<Row>,
    files: Vec<String>,
}

impl LineTable {
    /// The table of the DWARF sections `section` returns by name (`.debug_line`,
    /// `.debug_info`, ...; an absent one is empty). Errors are the DWARF reader's, with
    /// the byte offset it names.
    pub fn from_sections<'a>(mut section: impl FnMut(&str) -> Option<&'a [u8]>) -> Result<LineTable, String> {
        let load = |id: gimli::SectionId| -> Result<EndianSlice<'a, LittleEndian>, gimli::Error> {
            Ok(EndianSlice::new(section(id.name()).unwrap_or(&[]), LittleEndian))
        };
        let dwarf = gimli::Dwarf::load(load).map_err(|e| e.to_string())?;
        let mut table = LineTable::default();
        let mut file_ids: HashMap<String, u32> = HashMap::new();
        let mut units = dwarf.units();
        while let Some(header) = units.next().map_err(|e| format!("unit header: {e}"))? {
            let unit = dwarf.unit(header).map_err(|e| format!("unit: {e}"))?;
            let Some(program) = unit.line_program.clone() else { continue };
            // File index of the line program -> our file id, per unit.
            let mut unit_files: HashMap<u64, u32> = HashMap::new();
            let mut rows = program.rows();
            while let Some((header, row)) = rows.next_row().map_err(|e| format!("line program: {e}"))? {
                let Ok(addr) = u32::try_from(row.address()) else { continue };
                if row.end_sequence() {
                    table.rows.push(Row { addr, file: END, line: 0 });
                    continue;
                }
                let line = row.line().map_or(0, |l| l.get().min(u32::MAX as u64) as u32);
                let index = row.file_index();
                let file = match unit_files.get(&index) {
                    Some(&f) => f,
                    None => {
                        let path = file_path(&dwarf, &unit, header, index);
                        let next = table.files.len() as u32;
                        let f = *file_ids.entry(path.clone()).or_insert(next);
                        if f == next {
                            table.files.push(path);
                        }
                        unit_files.insert(index, f);
                        f
                    }
                };
                table.rows.push(Row { addr, file, line });
            }
        }
        // Stable: rows of one address keep their order (the last one is the address's row,
        // as for addr2line); a sequence's end sorts before another sequence's start there.
        table.rows.sort_by_key(|r| (r.addr, r.file != END));
        Ok(table)
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Source file and line of the instruction at `addr` (bit 0, the Thumb flag, ignored);
    /// None where no line program covers it or its line is 0 (compiler-generated code).
    pub fn lookup(&self, addr: u32) -> Option<(&str, u32)> {
        let a = addr & !1;
        let i = self.rows.partition_point(|r| r.addr <= a).checked_sub(1)?;
        let r = self.rows[i];
        (r.file != END && r.line != 0).then(|| (self.files[r.file as usize].as_str(), r.line))
    }
}

/// The path of a line program's file as addr2line prints it: the compilation directory,
/// then the file's directory, then its name (an absolute part replaces what precedes it).
fn file_path<R: gimli::Reader>(
    dwarf: &gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
    header: &gimli::LineProgramHeader<R>,
    index: u64,
) -> String {
    let Some(file) = header.file(index) else { return "??".into() };
    let text = |v: gimli::AttributeValue<R>| -> Option<String> {
        let s = dwarf.attr_string(unit, v).ok()?;
        Some(s.to_string_lossy().ok()?.into_owned())
    };
    let mut path = PathBuf::new();
    if let Some(dir) = &unit.comp_dir {
        if let Ok(d) = dir.to_string_lossy() {
            path.push(d.as_ref());
        }
    }
    if let Some(dir) = file.directory(header).and_then(text) {
        path.push(dir);
    }
    path.push(text(file.path_name()).unwrap_or_else(|| "??".into()));
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_dwarf_is_an_empty_table() {
        let t = LineTable::from_sections(|_| None).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.lookup(0x8000), None);
    }

    #[test]
    fn lookup_takes_the_last_row_at_or_below_and_stops_at_sequence_ends() {
        let t = LineTable {
            rows: vec![
                Row { addr: 0x100, file: 0, line: 10 },
                Row { addr: 0x104, file: 0, line: 11 },
                Row { addr: 0x104, file: 0, line: 12 },
                Row { addr: 0x110, file: END, line: 0 },
                Row { addr: 0x200, file: 1, line: 0 },
                Row { addr: 0x204, file: 1, line: 7 },
            ],
            files: vec!["/src/a.c".into(), "b.c".into()],
        };
        assert_eq!(t.lookup(0xfc), None);
        assert_eq!(t.lookup(0x100), Some(("/src/a.c", 10)));
        assert_eq!(t.lookup(0x105), Some(("/src/a.c", 12)), "Thumb bit ignored, last row of 0x104");
        assert_eq!(t.lookup(0x10e), Some(("/src/a.c", 12)));
        assert_eq!(t.lookup(0x110), None, "after the sequence's end");
        assert_eq!(t.lookup(0x200), None, "line 0");
        assert_eq!(t.lookup(0x300), Some(("b.c", 7)));
    }
}
