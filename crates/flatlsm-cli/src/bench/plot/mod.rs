//! `--plot DIR`: PNG figures drawn with plotters' bitmap backend. Text uses DejaVu Sans Mono
//! embedded in the binary (ab_glyph), so no fontconfig/freetype is needed at build or run time.
//!
//! - `throughput.png`: instant throughput (ops/s per interval) over time, one line per run
//!   (like the FlatLSM paper's Fig. 20/21);
//! - `latency_cdf.png`: latency CDF per run, logarithmic latency axis;
//! - `column_compactions.png` (runs with column compactions): one segment per compaction from
//!   its start to its end at the height of the row data it merged (MatrixKV's Fig. 14);
//! - `by_value_size_<benchmark>.png` (value-size sweeps): per value size, each design's
//!   throughput normalized to the first design's, as grouped bars (SLM-DB's Figs. 6 and 7).

use plotters::prelude::*;
use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// DejaVu Sans Mono (Bitstream Vera license, free to redistribute; see DejaVu-LICENSE.txt).
static FONT: &[u8] = include_bytes!("DejaVuSansMono.ttf");
/// The family name figures ask for.
const FAMILY: &str = "sans-serif";

/// One line of a figure.
pub struct Series {
    /// Legend text, e.g. "FlatLSM fillrandom".
    pub label: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
}

fn register_font() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT)
            .map_err(|_| "the embedded plot font is invalid".to_string());
    });
    result
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn max_of(series: &[Series], f: impl Fn(&(f64, f64)) -> f64) -> f64 {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(&f))
        .fold(0.0, f64::max)
}

fn draw_err<E: std::fmt::Debug>(path: &Path) -> impl Fn(E) -> String + '_ {
    move |e| format!("drawing {}: {e:?}", path.display())
}

/// A figure's title and its axes: (description, maximum), both from 0.
struct Axes<'a> {
    title: &'a str,
    x: (&'a str, f64),
    y: (&'a str, f64),
}

type LinearChart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// A chart with linear axes and its mesh drawn on `root`.
fn linear_chart<'a, 'b>(
    root: &'a DrawingArea<BitMapBackend<'b>, plotters::coord::Shift>,
    axes: &Axes<'_>,
) -> Result<
    LinearChart<'a, 'b>,
    DrawingAreaErrorKind<<BitMapBackend<'b> as DrawingBackend>::ErrorType>,
> {
    let mut chart = ChartBuilder::on(root)
        .caption(axes.title, (FAMILY, 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..axes.x.1, 0.0..axes.y.1)?;
    chart
        .configure_mesh()
        .x_desc(axes.x.0)
        .y_desc(axes.y.0)
        .label_style((FAMILY, 14))
        .draw()?;
    Ok(chart)
}

/// Draws throughput over time into `path`.
pub fn throughput_over_time(path: &Path, title: &str, series: &[Series]) -> Result<(), String> {
    register_font()?;
    let err = draw_err(path);
    let root = BitMapBackend::new(path, (1200, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let x_max = max_of(series, |p| p.0).max(1.0);
    let y_max = max_of(series, |p| p.1).max(1.0) * 1.1;
    let axes = Axes {
        title,
        x: ("time (s)", x_max),
        y: ("throughput (ops/s)", y_max),
    };
    let mut chart = linear_chart(&root, &axes).map_err(&err)?;
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(&err)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        // Markers keep one-interval runs visible.
        chart
            .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(&err)?;
    }
    legend(&mut chart).map_err(&err)?;
    root.present().map_err(&err)
}

/// Draws latency CDFs (x: latency µs, log scale; y: fraction of operations) into `path`.
pub fn latency_cdf(path: &Path, title: &str, series: &[Series]) -> Result<(), String> {
    register_font()?;
    let err = draw_err(path);
    let root = BitMapBackend::new(path, (1200, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let x_max = max_of(series, |p| p.0).max(10.0) * 1.2;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(80)
        .build_cartesian_2d((0.1..x_max).log_scale(), 0.0..1.0)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("latency (µs, log scale)")
        .y_desc("fraction of operations")
        .label_style((FAMILY, 14))
        .draw()
        .map_err(&err)?;
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts = s.points.iter().map(|&(x, y)| (x.max(0.1), y));
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(&err)?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
    }
    legend(&mut chart).map_err(&err)?;
    root.present().map_err(&err)
}

/// One run's store compactions: (start s, end s, MB).
pub struct Spans {
    /// Legend text.
    pub label: String,
    /// The compactions.
    pub spans: Vec<(f64, f64, f64)>,
}

/// Draws each compaction as a horizontal segment (time on x, MB merged on y) into `path`.
pub fn compaction_spans(path: &Path, title: &str, runs: &[Spans]) -> Result<(), String> {
    register_font()?;
    let err = draw_err(path);
    let root = BitMapBackend::new(path, (1200, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let all = || runs.iter().flat_map(|r| r.spans.iter());
    let x_max = all().map(|s| s.1).fold(1.0, f64::max);
    let y_max = all().map(|s| s.2).fold(1.0, f64::max) * 1.1;
    let axes = Axes {
        title,
        x: ("time (s)", x_max),
        y: ("data merged (MB)", y_max),
    };
    let mut chart = linear_chart(&root, &axes).map_err(&err)?;
    for (i, r) in runs.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let segment = |&(a, b, mb): &(f64, f64, f64)| {
            PathElement::new([(a.max(0.0), mb), (b, mb)], color.stroke_width(3))
        };
        chart
            .draw_series(r.spans.iter().map(segment))
            .map_err(&err)?
            .label(r.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(3)));
    }
    legend(&mut chart).map_err(&err)?;
    root.present().map_err(&err)
}

/// One group of bars: its label (a value size) and each design's (name, value).
pub type BarGroup = (String, Vec<(String, f64)>);

/// Draws grouped bars (one group per point, one bar per design, colours by design) into
/// `path` (its directory made if missing), with the y axis from 0 to just above the tallest
/// bar.
pub fn grouped_bars(
    path: &Path,
    title: &str,
    y_desc: &str,
    groups: &[BarGroup],
) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    register_font()?;
    let err = draw_err(path);
    let root = BitMapBackend::new(path, (1000, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let width = groups.iter().map(|g| g.1.len()).max().unwrap_or(1).max(1) as f64;
    let y_max = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|b| b.1))
        .fold(0.0, f64::max)
        * 1.15;
    let labels: Vec<String> = groups.iter().map(|g| g.0.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 24))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..groups.len() as f64, 0.0..y_max.max(0.1))
        .map_err(&err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len().max(1) * 2 + 1)
        .x_label_formatter(&|x| group_label(&labels, *x))
        .y_desc(y_desc)
        .label_style((FAMILY, 14))
        .draw()
        .map_err(&err)?;
    let names: Vec<String> = groups
        .first()
        .map_or(Vec::new(), |g| g.1.iter().map(|b| b.0.clone()).collect());
    for (d, name) in names.iter().enumerate() {
        let color = COLORS[d % COLORS.len()];
        let bar = |(g, group): (usize, &BarGroup)| {
            let x0 = g as f64 + 0.1 + 0.8 * d as f64 / width;
            let v = group.1.get(d).map_or(0.0, |b| b.1);
            Rectangle::new([(x0, 0.0), (x0 + 0.8 / width, v)], color.filled())
        };
        chart
            .draw_series(groups.iter().enumerate().map(bar))
            .map_err(&err)?
            .label(name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    legend(&mut chart).map_err(&err)?;
    root.present().map_err(&err)
}

/// The label of the group whose centre is at `x` (labels sit at half positions).
fn group_label(labels: &[String], x: f64) -> String {
    let centre = x - 0.5;
    match centre >= 0.0 && centre.fract().abs() < 1e-6 {
        true => labels.get(centre as usize).cloned().unwrap_or_default(),
        false => String::new(),
    }
}

fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font((FAMILY, 14))
        .draw()
}

/// Writes `throughput.png` and `latency_cdf.png` into `dir`; returns their paths.
pub fn write_figures(
    dir: &Path,
    prefix: &str,
    timelines: &[Series],
    cdfs: &[Series],
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let tp = dir.join(format!("{prefix}throughput.png"));
    throughput_over_time(&tp, "Instant throughput", timelines)?;
    let cdf = dir.join(format!("{prefix}latency_cdf.png"));
    latency_cdf(&cdf, "Latency CDF", cdfs)?;
    Ok(vec![tp, cdf])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_png_files_with_several_runs() {
        let dir = tempfile::tempdir().unwrap();
        let line = |l: &str, k: f64| Series {
            label: l.into(),
            points: (0..10).map(|i| (i as f64, k * (i as f64 + 1.0))).collect(),
        };
        let cdf = |l: &str| Series {
            label: l.into(),
            points: (1..=100).map(|i| (i as f64, i as f64 / 100.0)).collect(),
        };
        let files = write_figures(
            dir.path(),
            "",
            &[line("a", 1.0), line("b", 2.0)],
            &[cdf("a"), cdf("b")],
        )
        .unwrap();
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", f.display());
        }
    }

    #[test]
    fn grouped_bars_are_a_png_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("figures").join("bars.png");
        let group = |size: &str, r: f64| {
            let bars = vec![("leveled".to_string(), 1.0), ("slmdb".to_string(), r)];
            (size.to_string(), bars)
        };
        let groups = [group("1024 B", 0.6), group("4096 B", 1.3)];
        grouped_bars(&path, "readrandom", "ops/s over leveled's", &groups).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert_eq!(group_label(&["a".into(), "b".into()], 1.5), "b");
        assert_eq!(group_label(&["a".into()], 1.0), "");
    }

    #[test]
    fn compaction_spans_are_a_png_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.png");
        let runs = [Spans {
            label: "matrixkv".into(),
            spans: vec![(0.5, 0.8, 40.0), (1.0, 1.6, 75.0)],
        }];
        compaction_spans(&path, "t", &runs).unwrap();
        assert_eq!(&std::fs::read(&path).unwrap()[..4], b"\x89PNG");
    }
}
