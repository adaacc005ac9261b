//! Sweep plots in SVG and PNG (plotters): the paper's Fig. 5 (hit rate and bits/instruction
//! against SDC size for 1, 2, 4, 8 ways), Fig. 6 (average, minimum and maximum
//! bits/instruction per scheme) and Fig. 7 right (bits/instruction against storage bits).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::prelude::*;
use streamtrace_model::Scheme;

use super::report::{size_series, table8_columns, thousands, SweepResults};
use super::SweepRow;

/// Text needs a TrueType font; DejaVu Sans is the Debian default (fonts-dejavu-core).
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

fn ensure_font() -> Result<(), String> {
    static FONT: OnceLock<Result<(), String>> = OnceLock::new();
    FONT.get_or_init(|| {
        let candidates: Vec<PathBuf> = std::env::var_os("STREAMTRACE_FONT")
            .map(PathBuf::from)
            .into_iter()
            .chain(FONT_PATHS.iter().map(PathBuf::from))
            .collect();
        let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
            "plots need a TrueType font: install fonts-dejavu-core (scripts/setup.sh does) or set STREAMTRACE_FONT"
                .to_string()
        })?;
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        // plotters keeps fonts for the life of the process.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .map_err(|_| format!("{}: not a usable TrueType font", path.display()))
    })
    .clone()
}

const COLORS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
];

/// Ten distinguishable colours for plots with many series.
const PARETO_COLORS: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x17, 0xbe, 0xcf),
];

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draw one figure as `DIR/NAME.svg` and `DIR/NAME.png` with the same drawing code (a macro
/// because the drawing functions are generic over the backend); evaluates to both paths.
macro_rules! svg_and_png {
    ($dir:expr, $name:expr, $size:expr, |$area:ident| $draw:expr) => {{
        let svg_path = $dir.join(format!("{}.svg", $name));
        {
            let $area = SVGBackend::new(&svg_path, $size).into_drawing_area();
            $draw.map_err(|e| format!("{}: {e}", svg_path.display()))?;
            $area.present().map_err(|e| format!("{}: {e}", svg_path.display()))?;
        }
        let png_path = $dir.join(format!("{}.png", $name));
        {
            let $area = BitMapBackend::new(&png_path, $size).into_drawing_area();
            $draw.map_err(|e| format!("{}: {e}", png_path.display()))?;
            $area.present().map_err(|e| format!("{}: {e}", png_path.display()))?;
        }
        [svg_path, png_path]
    }};
}

/// Write every plot the results support into `dir` as `NAME.svg` and `NAME.png`; returns
/// the files written. Each carries a footnote with the timing mode, the instruction cap and
/// the version that made the rows ([`footnote`]).
pub fn write_plots(results: &SweepResults, dir: &Path) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let first = results.rows.first().map(|r| r.buffers.clone()).unwrap_or_default();
    let rows: Vec<&SweepRow> = results.rows.iter().filter(|r| r.buffers == first).collect();
    let note = footnote(results);
    let mut written = Vec::new();
    let plots: [(&str, (u32, u32), bool); 3] = [
        ("fig5-sdc-size", (1100, 450), (1..=8).any(|w| !size_series(&rows, Scheme::BSdc, w).is_empty())),
        ("fig6-schemes", (800, 450), !rows.is_empty()),
        (
            "fig7-storage",
            (800, 450),
            [Scheme::BSdc, Scheme::ESdc, Scheme::RSdc].iter().any(|s| !size_series(&rows, *s, 4).is_empty()),
        ),
    ];
    for (which, (name, size, applicable)) in plots.into_iter().enumerate() {
        if !applicable {
            continue;
        }
        written.extend(svg_and_png!(dir, name, size, |area| draw(which, &rows, &note, &area)));
    }
    Ok(written)
}

/// The line under every sweep plot: where cycles came from, the instruction cap (and how
/// many programs it cut), the buffers of the plotted rows, and the version and date of the
/// rows (from the metadata, when the results have it).
pub fn footnote(results: &SweepResults) -> String {
    let mut timing: Vec<&str> = Vec::new();
    for r in &results.rows {
        if !timing.contains(&r.timing.as_str()) {
            timing.push(&r.timing);
        }
    }
    let mut parts = vec![format!("timing {}", if timing.is_empty() { "-".to_string() } else { timing.join("+") })];
    let mut cut: Vec<&str> = results.rows.iter().filter(|r| r.truncated).map(|r| r.program.as_str()).collect();
    cut.sort_unstable();
    cut.dedup();
    let cut = if cut.is_empty() { String::new() } else { format!(" ({} programs cut)", cut.len()) };
    match &results.meta {
        Some(m) if m.max_insns == u64::MAX => parts.push(format!("no instruction cap{cut}")),
        Some(m) => parts.push(format!("cap {} instructions{cut}", thousands(m.max_insns))),
        None if !cut.is_empty() => parts.push(format!("capped{cut}")),
        None => {}
    }
    if let Some(b) = results.rows.first().map(|r| r.buffers.as_str()).filter(|b| b.contains('=')) {
        parts.push(b.split(",ratio").next().unwrap_or(b).to_string());
    }
    if let Some(m) = &results.meta {
        let commit = m.commit.as_deref().map_or(String::new(), |c| format!(" {c}"));
        parts.push(format!("streamtrace {}{commit}, {}{}", m.version, m.date.get(..10).unwrap_or(&m.date), if m.partial { ", PARTIAL" } else { "" }));
    }
    parts.join(" | ")
}


/// A line plot of named `(x, y)` series into `dir` as `NAME.svg` and `NAME.png` (used by
/// reports outside the sweep, e.g. CITCAT's CAT bytes over time); returns the files.
pub fn write_line_plot(
    dir: &Path,
    name: &str,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let size = (900, 450);
    Ok(svg_and_png!(dir, name, size, |area| lines(&area, title, x_desc, y_desc, series)).to_vec())
}

/// A scatter plot with a log2 x axis: one series of connected `(x, y)` points per label
/// (e.g. bits/instruction against storage bits for each scheme's sizes, the Pareto view);
/// writes `NAME.svg` and `NAME.png` into `dir`.
pub fn write_log_x_plot(
    dir: &Path,
    name: &str,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let size = (900, 500);
    let log: Vec<(String, Vec<(f64, f64)>)> =
        series.iter().map(|(l, p)| (l.clone(), p.iter().map(|&(x, y)| (x.max(1.0).log2(), y)).collect())).collect();
    Ok(svg_and_png!(dir, name, size, |area| log_x(&area, title, x_desc, y_desc, &log)).to_vec())
}

fn log_x<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let pts = || series.iter().flat_map(|(_, p)| p.iter());
    let xmin = pts().map(|p| p.0).fold(f64::INFINITY, f64::min).min(1e9).floor() - 0.3;
    let xmax = pts().map(|p| p.0).fold(0.0, f64::max).ceil() + 0.3;
    // Both axes logarithmic: the schemes span two orders of magnitude in bits too.
    let ymax = pts().map(|p| p.1).fold(0.0, f64::max) * 1.5 + 1e-9;
    let ymin = pts().map(|p| p.1).filter(|&y| y > 0.0).fold(f64::INFINITY, f64::min).min(ymax) / 1.5;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(xmin..xmax, (ymin..ymax).log_scale())?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(((xmax - xmin) as usize + 1) * 2)
        .x_label_formatter(&|x| power_of_two_label(*x))
        .draw()?;
    for (i, (label, p)) in series.iter().enumerate() {
        let color = PARETO_COLORS[i % PARETO_COLORS.len()];
        let mut sorted = p.clone();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(sorted.iter().copied(), color.stroke_width(1)))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(sorted.iter().map(|&(x, y)| Circle::new((x, y), 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

fn lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let pts = || series.iter().flat_map(|(_, p)| p.iter());
    let xmax = pts().map(|p| p.0).fold(0.0, f64::max).max(1e-9);
    let ymax = pts().map(|p| p.1).fold(0.0, f64::max) * 1.1 + 1e-9;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
    for (i, (label, p)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}

fn draw<DB: DrawingBackend>(which: usize, rows: &[&SweepRow], note: &str, area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let height = area.dim_in_pixel().1;
    let (plot, foot) = area.split_vertically(height.saturating_sub(20));
    foot.draw(&Text::new(note.to_string(), (8, 2), ("sans-serif", 12).into_font().color(&RGBColor(0x55, 0x55, 0x55))))?;
    match which {
        0 => fig5(rows, &plot),
        1 => fig6(rows, &plot),
        _ => fig7(rows, &plot),
    }
}

/// Weighted average of a metric over programs for one configuration.
fn avg(rows: &[&SweepRow], config: &str, f: impl Fn(&SweepRow) -> f64) -> f64 {
    let sel: Vec<&&SweepRow> = rows.iter().filter(|r| r.config == config).collect();
    let ic: u64 = sel.iter().map(|r| r.instructions).sum();
    if ic == 0 {
        return 0.0;
    }
    sel.iter().map(|r| f(r) * r.instructions as f64).sum::<f64>() / ic as f64
}

/// Label of a log2 axis tick: the power of two at whole exponents (`1K` from 1024 on), else none.
fn power_of_two_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    let v = x.round().exp2() as u64;
    if v >= 1024 {
        format!("{}K", v / 1024)
    } else {
        v.to_string()
    }
}

/// How an axis maps values: linearly, or by log10 (values spanning decades), or by log2
/// (sizes, labelled at powers of two). Charts are drawn on the mapped coordinate, so every
/// figure uses one chart type, and the ticks are chosen here so that each one is labelled.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    Linear,
    Log10,
    Log2,
}

/// A value axis: its scale and its range in mapped coordinates.
#[derive(Clone, Copy, Debug)]
struct Axis {
    scale: Scale,
    lo: f64,
    hi: f64,
}

impl Axis {
    /// An axis for positive `values`: log10 when they span more than a decade (bars of
    /// 0.02 and of 3 bits/instruction must both be readable), else linear from 0. `head`
    /// is extra room above the largest value, as a fraction of the range.
    fn for_values(values: &[f64], head: f64) -> Axis {
        let max = values.iter().cloned().fold(0.0, f64::max).max(1e-9);
        let min = values.iter().cloned().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min).min(max);
        if max / min > 10.0 {
            let (lo, hi) = (min.log10() - 0.15, max.log10() + 0.1);
            Axis { scale: Scale::Log10, lo, hi: hi + (hi - lo) * head }
        } else {
            Axis { scale: Scale::Linear, lo: 0.0, hi: max * (1.05 + head) }
        }
    }

    /// A log2 axis over sizes, widened to whole powers of two on both sides so that at
    /// least two ticks are labelled even for a single size.
    fn sizes(values: &[f64]) -> Axis {
        let min = values.iter().cloned().fold(f64::INFINITY, f64::min).max(1.0);
        let max = values.iter().cloned().fold(0.0, f64::max).max(min);
        let (mut lo, mut hi) = (min.log2().floor(), max.log2().ceil());
        if hi - lo < 2.0 {
            lo -= 1.0;
            hi += 1.0;
        }
        Axis { scale: Scale::Log2, lo: lo - 0.25, hi: hi + 0.25 }
    }

    fn pos(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log10 => v.max(1e-12).log10().max(self.lo),
            Scale::Log2 => v.max(1e-12).log2(),
        }
    }

    /// Tick positions (mapped): whole powers of two; 1, 2, 5 times powers of ten; or a
    /// round step giving about six ticks.
    fn ticks(&self) -> Vec<f64> {
        match self.scale {
            Scale::Log2 => (self.lo.ceil() as i32..=self.hi.floor() as i32).map(f64::from).collect(),
            Scale::Log10 => {
                let mut t = Vec::new();
                for d in (self.lo.floor() as i32)..=(self.hi.ceil() as i32) {
                    for m in [1.0f64, 2.0, 5.0] {
                        let x = f64::from(d) + m.log10();
                        if x >= self.lo && x <= self.hi {
                            t.push(x);
                        }
                    }
                }
                t
            }
            Scale::Linear => {
                let raw = (self.hi - self.lo) / 6.0;
                let mag = 10f64.powf(raw.log10().floor());
                let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(raw);
                let first = (self.lo / step).ceil() as i64;
                let last = (self.hi / step).floor() as i64;
                (first..=last).map(|i| i as f64 * step).collect()
            }
        }
    }

    fn label(&self, x: f64) -> String {
        match self.scale {
            Scale::Log2 => power_of_two_label(x),
            Scale::Log10 => number_label(10f64.powf(x)),
            Scale::Linear => number_label(x),
        }
    }

    /// The chart coordinate of this axis (ticks only where [`Axis::ticks`] puts them).
    fn range(&self) -> Axis {
        *self
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f64::from(limit.1 - limit.0) * f).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Light (minor) mesh lines at the same places: no unlabelled clutter.
        let mut t = self.ticks();
        t.truncate(hint.max_num_points().max(2));
        t
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A tick value without float noise: at most three significant digits, no trailing zeros.
fn number_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// At most this many points per series get their value written beside them (a sweep of
/// one size shows a single point, which needs its number).
const LABELLED_POINTS: usize = 2;

fn fig5<DB: DrawingBackend>(rows: &[&SweepRow], area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let (left, right) = area.split_horizontally(area.dim_in_pixel().0 / 2);
    let series: Vec<(u32, Vec<(u32, String)>)> =
        [1u32, 2, 4, 8].iter().map(|&w| (w, size_series(rows, Scheme::BSdc, w))).filter(|(_, s)| !s.is_empty()).collect();
    let sizes: Vec<f64> = series.iter().flat_map(|(_, s)| s.iter().map(|(e, _)| *e as f64)).collect();
    let x = Axis::sizes(&sizes);
    // Hit rates rise with size and bits fall: each legend goes where its lines are not.
    let panels: [(&DrawingArea<DB, Shift>, &str, bool, SeriesLabelPosition); 2] = [
        (&left, "SDC hit rate (bSDC-LSP)", true, SeriesLabelPosition::LowerRight),
        (&right, "bits/instruction (bSDC-LSP)", false, SeriesLabelPosition::UpperRight),
    ];
    for (panel, title, hit_rate, legend) in panels {
        let metric = |c: &str| if hit_rate { avg(rows, c, |r| r.hr_sdc) } else { avg(rows, c, |r| r.bits_per_instruction) };
        let values: Vec<f64> = series.iter().flat_map(|(_, s)| s.iter().map(|(_, c)| metric(c))).collect();
        let y = if hit_rate {
            let lo = values.iter().cloned().fold(1.0, f64::min).min(0.95) - 0.02;
            Axis { scale: Scale::Linear, lo, hi: 1.0 + (1.0 - lo) * 0.02 }
        } else {
            // Room above the lines for the legend.
            Axis::for_values(&values, 0.3)
        };
        let mut chart = ChartBuilder::on(panel)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(x.range(), y.range())?;
        chart
            .configure_mesh()
            .x_desc("SDC entries")
            .y_desc(if hit_rate { "hrSDC" } else { "bits/ins" })
            .x_labels(x.ticks().len())
            .y_labels(y.ticks().len())
            .x_label_formatter(&|v| x.label(*v))
            .y_label_formatter(&|v| y.label(*v))
            .draw()?;
        for (i, (ways, s)) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(f64, f64, f64)> = s.iter().map(|(e, c)| (x.pos(*e as f64), metric(c), y.pos(metric(c)))).collect();
            chart
                .draw_series(LineSeries::new(pts.iter().map(|p| (p.0, p.2)), color.stroke_width(2)))?
                .label(format!("{ways}-way"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| Circle::new((p.0, p.2), 3, color.filled())))?;
            if pts.len() <= LABELLED_POINTS {
                // Above and to the right of the point, clear of its marker.
                chart.draw_series(pts.iter().map(|p| EmptyElement::at((p.0, p.2)) + Text::new(number_label(p.1), (6, -18), ("sans-serif", 12))))?;
            }
        }
        chart.configure_series_labels().position(legend).background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    }
    Ok(())
}

fn fig6<DB: DrawingBackend>(rows: &[&SweepRow], area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    // The Table 8 columns, in the paper's order and with its names; any other sweep gets
    // one bar per configuration.
    let mut columns: Vec<(String, String)> = table8_columns(rows)
        .into_iter()
        .map(|(label, c)| (label.split(" [").next().unwrap_or(&label).to_string(), c))
        .collect();
    if columns.len() < 2 {
        columns.clear();
        for r in rows {
            if !columns.iter().any(|(_, c)| c == &r.config) {
                columns.push((r.config.clone(), r.config.clone()));
            }
        }
    }
    let stats: Vec<(String, f64, f64, f64)> = columns
        .iter()
        .map(|(label, c)| {
            let sel: Vec<f64> = rows.iter().filter(|r| &r.config == c).map(|r| r.bits_per_instruction).collect();
            let mn = sel.iter().cloned().fold(f64::INFINITY, f64::min);
            let mx = sel.iter().cloned().fold(0.0, f64::max);
            (label.clone(), avg(rows, c, |r| r.bits_per_instruction), mn, mx)
        })
        .collect();
    let values: Vec<f64> = stats.iter().flat_map(|s| [s.1, s.2, s.3]).collect();
    // Headroom for the value written above each maximum.
    let y = Axis::for_values(&values, 0.08);
    let n = stats.len();
    let title = if y.scale == Scale::Log10 {
        "Trace port bandwidth per scheme (average, min, max; log scale)"
    } else {
        "Trace port bandwidth per scheme (average, min, max)"
    };
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(55)
        // A segmented 0..k range has k + 1 segments.
        .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), y.range())?;
    let labels: Vec<String> = stats.iter().map(|s| s.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc("bits/ins")
        .x_labels(n)
        .y_labels(y.ticks().len())
        .y_label_formatter(&|v| y.label(*v))
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_label_style(("sans-serif", 12))
        .draw()?;
    chart.draw_series(stats.iter().enumerate().map(|(i, s)| {
        let mut bar = Rectangle::new([(SegmentValue::Exact(i), y.lo), (SegmentValue::Exact(i + 1), y.pos(s.1))], COLORS[0].mix(0.7).filled());
        bar.set_margin(0, 0, 6, 6);
        bar
    }))?;
    chart.draw_series(stats.iter().enumerate().map(|(i, s)| {
        ErrorBar::new_vertical(SegmentValue::CenterOf(i), y.pos(s.2), y.pos(s.1), y.pos(s.3), BLACK.stroke_width(1), 10)
    }))?;
    // The average, as the paper's Table 8 gives it, above the maximum's whisker so that it
    // never covers a marker.
    let style = ("sans-serif", 12).into_font().into_text_style(area).pos(Pos::new(HPos::Center, VPos::Bottom));
    chart.draw_series(stats.iter().enumerate().map(|(i, s)| {
        EmptyElement::at((SegmentValue::CenterOf(i), y.pos(s.3))) + Text::new(format!("{:.3}", s.1), (0, -4), style.clone())
    }))?;
    Ok(())
}

fn fig7<DB: DrawingBackend>(rows: &[&SweepRow], area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    // Per scheme: (storage bits, bits/instruction, size label) of each size.
    type Points = Vec<(f64, f64, String)>;
    let series: Vec<(&str, Points)> = [(Scheme::BSdc, "bSDC-LSP"), (Scheme::ESdc, "eSDC-LSP"), (Scheme::RSdc, "rSDC-LSP")]
        .iter()
        .map(|(s, label)| {
            let pts = size_series(rows, *s, 4)
                .iter()
                .filter_map(|(entries, c)| {
                    let storage = rows.iter().filter(|r| &r.config == c).map(|r| r.storage_bits).max()? as f64;
                    Some((storage, avg(rows, c, |r| r.bits_per_instruction), format!("[{}x4,{entries}]", entries / 4)))
                })
                .collect();
            (*label, pts)
        })
        .filter(|(_, p): &(&str, Points)| !p.is_empty())
        .collect();
    let xs: Vec<f64> = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).collect();
    let ys: Vec<f64> = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)).collect();
    let x = Axis::sizes(&xs);
    let y = Axis::for_values(&ys, 0.25);
    // Sweep rows name their buffers; `report schemes` rows count the paper's (SDB 2, 80 bits).
    let buffers = match rows.first().map(|r| r.buffers.as_str()) {
        Some(b) if b.contains('=') => b.split(",port").next().unwrap_or("").replace(',', ", "),
        _ => "sdb=2, obuf=80".to_string(),
    };
    let mut chart = ChartBuilder::on(area)
        .caption("bits/instruction against storage bits", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x.range(), y.range())?;
    chart
        .configure_mesh()
        .x_desc(format!("storage bits ({buffers})"))
        .y_desc("bits/ins")
        .x_labels(x.ticks().len())
        .y_labels(y.ticks().len())
        .x_label_formatter(&|v| x.label(*v))
        .y_label_formatter(&|v| y.label(*v))
        .draw()?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mapped: Vec<(f64, f64)> = pts.iter().map(|p| (x.pos(p.0), y.pos(p.1))).collect();
        chart
            .draw_series(LineSeries::new(mapped.clone(), color.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(mapped.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        if pts.len() <= LABELLED_POINTS {
            chart.draw_series(
                pts.iter().zip(&mapped).map(|(p, m)| EmptyElement::at(*m) + Text::new(format!("{} {}", p.2, number_label(p.1)), (6, -18), ("sans-serif", 12))),
            )?;
        }
    }
    chart.configure_series_labels().position(SeriesLabelPosition::UpperRight).background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::report::SweepMeta;

    #[test]
    fn values_spanning_decades_get_a_log_axis_with_labelled_ticks() {
        let a = Axis::for_values(&[0.023, 0.2, 3.3, 8.2], 0.0);
        assert_eq!(a.scale, Scale::Log10);
        let labels: Vec<String> = a.ticks().iter().map(|t| a.label(*t)).collect();
        assert_eq!(labels, ["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10"]);
        assert!(a.pos(0.023) > a.lo && a.pos(8.2) < a.hi);
        let lin = Axis::for_values(&[0.13, 0.4], 0.0);
        assert_eq!(lin.scale, Scale::Linear);
        let labels: Vec<String> = lin.ticks().iter().map(|t| lin.label(*t)).collect();
        assert_eq!(labels, ["0", "0.1", "0.2", "0.3", "0.4"]);
    }

    #[test]
    fn a_single_size_still_gets_power_of_two_ticks_around_it() {
        let a = Axis::sizes(&[128.0]);
        let labels: Vec<String> = a.ticks().iter().map(|t| a.label(*t)).collect();
        assert_eq!(labels, ["64", "128", "256"]);
        let b = Axis::sizes(&[1667.0, 4042.0, 13167.0]);
        let labels: Vec<String> = b.ticks().iter().map(|t| b.label(*t)).collect();
        assert_eq!(labels, ["1K", "2K", "4K", "8K", "16K"]);
    }

    #[test]
    fn the_footnote_names_timing_cap_buffers_and_version() {
        let row = |program: &str, truncated| SweepRow {
            program: program.into(),
            config: "fbase".into(),
            buffers: "sdb=2,obuf=80,port=1,ratio=1,svc_hit=1,svc_miss=2,policy=stall".into(),
            timing: "xscale".into(),
            truncated,
            ..Default::default()
        };
        let mut res = SweepResults { meta: None, rows: vec![row("a", true), row("b", false), row("a", true)] };
        assert_eq!(footnote(&res), "timing xscale | capped (1 programs cut) | sdb=2,obuf=80,port=1");
        res.meta = Some(SweepMeta {
            version: "0.1.0".into(),
            commit: Some("abc".into()),
            date: "2026-11-24T21:00:00Z".into(),
            max_insns: 150_000,
            ..Default::default()
        });
        assert_eq!(
            footnote(&res),
            "timing xscale | cap 150,000 instructions (1 programs cut) | sdb=2,obuf=80,port=1 | streamtrace 0.1.0 abc, 2026-11-24"
        );
    }
}
