//! Sweep plots in SVG and PNG (plotters): the paper's Fig. 5 (hit rate and bits/instruction
//! against SDC size for 1, 2, 4, 8 ways), Fig. 6 (average, minimum and maximum
//! bits/instruction per scheme) and Fig. 7 right (bits/instruction against storage bits).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use streamtrace_model::Scheme;

use super::report::{size_series, table8_columns, SweepResults};
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
/// the files written.
pub fn write_plots(results: &SweepResults, dir: &Path) -> Result<Vec<PathBuf>, String> {
    ensure_font()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let first = results.rows.first().map(|r| r.buffers.clone()).unwrap_or_default();
    let rows: Vec<&SweepRow> = results.rows.iter().filter(|r| r.buffers == first).collect();
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
        written.extend(svg_and_png!(dir, name, size, |area| draw(which, &rows, &area)));
    }
    Ok(written)
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

fn draw<DB: DrawingBackend>(which: usize, rows: &[&SweepRow], area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match which {
        0 => fig5(rows, area),
        1 => fig6(rows, area),
        _ => fig7(rows, area),
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

fn fig5<DB: DrawingBackend>(rows: &[&SweepRow], area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let (left, right) = area.split_horizontally(area.dim_in_pixel().0 / 2);
    let series: Vec<(u32, Vec<(u32, String)>)> =
        [1u32, 2, 4, 8].iter().map(|&w| (w, size_series(rows, Scheme::BSdc, w))).filter(|(_, s)| !s.is_empty()).collect();
    let sizes: Vec<u32> = series.iter().flat_map(|(_, s)| s.iter().map(|(e, _)| *e)).collect();
    let (xmin, xmax) = (*sizes.iter().min().unwrap_or(&32), *sizes.iter().max().unwrap_or(&1024));
    // The x axis is log2(entries), labelled with the entry counts at the powers of two (a
    // log-scale axis labels every decade's minor ticks, which overlap).
    let (xmin, xmax) = ((xmin as f64).log2() - 0.3, (xmax as f64).log2() + 0.3);
    let panels: [(&DrawingArea<DB, Shift>, &str, bool); 2] =
        [(&left, "SDC hit rate (bSDC-LSP)", true), (&right, "bits/instruction (bSDC-LSP)", false)];
    for (panel, title, hit_rate) in panels {
        let values: Vec<f64> = series
            .iter()
            .flat_map(|(_, s)| s.iter().map(|(_, c)| if hit_rate { avg(rows, c, |r| r.hr_sdc) } else { avg(rows, c, |r| r.bits_per_instruction) }))
            .collect();
        let ymax = values.iter().cloned().fold(0.0, f64::max);
        let (y0, y1) = if hit_rate {
            (values.iter().cloned().fold(1.0, f64::min).min(0.95) - 0.02, 1.0)
        } else {
            (0.0, ymax * 1.1 + 1e-3)
        };
        let mut chart = ChartBuilder::on(panel)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(xmin..xmax, y0..y1)?;
        chart
            .configure_mesh()
            .x_desc("SDC entries")
            .y_desc(if hit_rate { "hrSDC" } else { "bits/ins" })
            .x_labels(((xmax - xmin) * 2.0).ceil() as usize + 1)
            .x_label_formatter(&|x| power_of_two_label(*x))
            .draw()?;
        for (i, (ways, s)) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(f64, f64)> = s
                .iter()
                .map(|(e, c)| {
                    ((*e as f64).log2(), if hit_rate { avg(rows, c, |r| r.hr_sdc) } else { avg(rows, c, |r| r.bits_per_instruction) })
                })
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
                .label(format!("{ways}-way"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
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
    let ymax = stats.iter().map(|s| s.3).fold(0.0, f64::max) * 1.1 + 1e-3;
    let n = stats.len();
    let mut chart = ChartBuilder::on(area)
        .caption("Trace port bandwidth per scheme (average, min, max)", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(70)
        .y_label_area_size(55)
        // A segmented 0..k range has k + 1 segments.
        .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), 0.0..ymax)?;
    let labels: Vec<String> = stats.iter().map(|s| s.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_desc("bits/ins")
        .x_labels(n)
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .x_label_style(("sans-serif", 11))
        .draw()?;
    chart.draw_series(stats.iter().enumerate().map(|(i, s)| {
        Rectangle::new([(SegmentValue::Exact(i), 0.0), (SegmentValue::Exact(i + 1), s.1)], COLORS[0].mix(0.7).filled())
    }))?;
    chart.draw_series(stats.iter().enumerate().map(|(i, s)| {
        ErrorBar::new_vertical(SegmentValue::CenterOf(i), s.2, s.1, s.3, BLACK.stroke_width(1), 10)
    }))?;
    // The average above each bar, as the paper's Table 8 gives it.
    chart.draw_series(stats.iter().enumerate().map(|(i, s)| {
        Text::new(format!("{:.3}", s.1), (SegmentValue::CenterOf(i), s.1 + ymax * 0.03), ("sans-serif", 11))
    }))?;
    Ok(())
}

fn fig7<DB: DrawingBackend>(rows: &[&SweepRow], area: &DrawingArea<DB, Shift>) -> DrawResult
where
    DB::ErrorType: 'static,
{
    area.fill(&WHITE)?;
    let series: Vec<(&str, Vec<(f64, f64)>)> = [(Scheme::BSdc, "bSDC-LSP"), (Scheme::ESdc, "eSDC-LSP"), (Scheme::RSdc, "rSDC-LSP")]
        .iter()
        .map(|(s, label)| {
            let pts = size_series(rows, *s, 4)
                .iter()
                .filter_map(|(_, c)| {
                    let storage = rows.iter().find(|r| &r.config == c)?.storage_bits as f64;
                    Some((storage, avg(rows, c, |r| r.bits_per_instruction)))
                })
                .collect();
            (*label, pts)
        })
        .filter(|(_, p): &(&str, Vec<(f64, f64)>)| !p.is_empty())
        .collect();
    let xs: Vec<f64> = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)).collect();
    let ys: Vec<f64> = series.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)).collect();
    // log2 axis labelled at powers of two, as in fig5.
    let (x0, x1) = (xs.iter().cloned().fold(f64::INFINITY, f64::min).log2() - 0.3, xs.iter().cloned().fold(0.0, f64::max).log2() + 0.3);
    let y1 = ys.iter().cloned().fold(0.0, f64::max) * 1.1 + 1e-3;
    let mut chart = ChartBuilder::on(area)
        .caption("bits/instruction against storage bits", ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc("storage bits (SDB 2, 80-bit buffer)")
        .y_desc("bits/ins")
        .x_labels(((x1 - x0) * 2.0).ceil() as usize + 1)
        .x_label_formatter(&|x| power_of_two_label(*x))
        .draw()?;
    for (i, (label, pts)) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x.log2(), y)).collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(*label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}
