//! A minimal text table: left-aligned first column, right-aligned others, and the same rows
//! as CSV.

use std::io::{self, Write};

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Left-align every column (key/value listings) instead of only the first.
    all_left: bool,
}

impl Table {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            all_left: false,
        }
    }

    /// A two-column key/value listing, both columns left-aligned.
    pub fn key_value(key: &str, value: &str) -> Table {
        Table {
            all_left: true,
            ..Table::new([key, value])
        }
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if i < w.len() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
        }
        w
    }

    pub fn print(&self, out: &mut impl Write) -> io::Result<()> {
        let w = self.widths();
        let line = |out: &mut dyn Write, cells: &[String]| -> io::Result<()> {
            let mut s = String::new();
            for (i, c) in cells.iter().enumerate() {
                if i > 0 {
                    s.push_str("  ");
                }
                let pad = w[i].saturating_sub(c.chars().count());
                if i == 0 || self.all_left {
                    s.push_str(c);
                    s.extend(std::iter::repeat_n(' ', pad));
                } else {
                    s.extend(std::iter::repeat_n(' ', pad));
                    s.push_str(c);
                }
            }
            writeln!(out, "{}", s.trim_end())
        };
        line(out, &self.header)?;
        let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
        line(out, &rule)?;
        for r in &self.rows {
            line(out, r)?;
        }
        Ok(())
    }

    pub fn print_csv(&self, out: &mut impl Write) -> io::Result<()> {
        let esc = |c: &str| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.to_string()
            }
        };
        for r in std::iter::once(&self.header).chain(&self.rows) {
            let cells: Vec<String> = r.iter().map(|c| esc(c)).collect();
            writeln!(out, "{}", cells.join(","))?;
        }
        Ok(())
    }
}
