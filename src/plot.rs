//! One plotting style for every figure of the book: SVG written by `plotters`, text measured with
//! an embedded DejaVu Sans font so that figures render on a machine without system fonts.

use crate::error::{Error, Result};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: Once = Once::new();

/// Registers the embedded font under the family name "sans-serif" (once per process).
pub fn register_fonts() {
    FONT.call_once(|| {
        // The bytes are 'static and valid TrueType, so this cannot fail in practice; if it did,
        // text would be missing from figures and the book check would catch it.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    /// A polyline through the points.
    Line,
    /// Markers only.
    Points,
    /// A polyline with markers.
    LinePoints,
    /// A dashed polyline (for references such as "slope n^3").
    Dashed,
}

/// One data series of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
    /// Drawing style.
    pub mark: Mark,
}

impl Series {
    /// A series drawn as a line.
    pub fn line(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            mark: Mark::Line,
        }
    }
    /// A series drawn as a line with markers.
    pub fn line_points(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            mark: Mark::LinePoints,
        }
    }
    /// A series drawn as markers.
    pub fn points(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            mark: Mark::Points,
        }
    }
    /// A dashed reference line.
    pub fn dashed(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            mark: Mark::Dashed,
        }
    }
}

/// A 2-D chart: title, axis labels (with units), optional log scales and its series.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Title shown above the plot.
    pub title: String,
    /// x-axis label, with units.
    pub x_label: String,
    /// y-axis label, with units.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The data.
    pub series: Vec<Series>,
    /// Fixed x range `(lo, hi)` instead of the automatic one (e.g. to leave room for the legend).
    pub x_range: Option<(f64, f64)>,
    /// Fixed y range `(lo, hi)` instead of the automatic one (e.g. to leave room for the legend).
    pub y_range: Option<(f64, f64)>,
}

impl Chart {
    /// A chart with linear axes and no series yet.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: false,
            log_y: false,
            series: Vec::new(),
            x_range: None,
            y_range: None,
        }
    }
    /// Sets logarithmic axes.
    pub fn log(mut self, log_x: bool, log_y: bool) -> Self {
        self.log_x = log_x;
        self.log_y = log_y;
        self
    }
    /// Fixes the axis ranges (`None` keeps the automatic range of that axis).
    pub fn ranges(mut self, x: Option<(f64, f64)>, y: Option<(f64, f64)>) -> Self {
        self.x_range = x;
        self.y_range = y;
        self
    }
    /// Adds a series.
    pub fn with(mut self, s: Series) -> Self {
        self.series.push(s);
        self
    }
    /// Writes the chart as an 800 x 500 SVG file.
    pub fn save_svg(&self, path: &Path) -> Result<()> {
        register_fonts();
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for s in &self.series {
            for &(x, y) in &s.points {
                if !(x.is_finite() && y.is_finite()) || (self.log_x && x <= 0.0) || (self.log_y && y <= 0.0) {
                    continue;
                }
                x0 = x0.min(x);
                x1 = x1.max(x);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
        if !(x0.is_finite() && y0.is_finite()) {
            return Err(Error::Plot {
                title: self.title.clone(),
                why: "no finite points to plot".into(),
            });
        }
        let pad = |a: f64, b: f64, log: bool| -> (f64, f64) {
            if log {
                (a / 1.3, b * 1.3)
            } else {
                let d = if b > a {
                    0.05 * (b - a)
                } else {
                    0.5 * a.abs().max(1e-12)
                };
                (a - d, b + d)
            }
        };
        for (r, log, axis) in [(self.x_range, self.log_x, "x"), (self.y_range, self.log_y, "y")] {
            if let Some((lo, hi)) = r {
                if !(lo.is_finite() && hi.is_finite() && lo < hi && (!log || lo > 0.0)) {
                    return Err(Error::Plot {
                        title: self.title.clone(),
                        why: format!("bad {axis} range ({lo}, {hi})"),
                    });
                }
            }
        }
        let (x0, x1) = self.x_range.unwrap_or_else(|| pad(x0, x1, self.log_x));
        let (y0, y1) = self.y_range.unwrap_or_else(|| pad(y0, y1, self.log_y));
        let err = |e: String| Error::Plot {
            title: self.title.clone(),
            why: format!("writing {}: {e}", path.display()),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        match (self.log_x, self.log_y) {
            (false, false) => self.draw(path, x0..x1, y0..y1),
            (true, false) => self.draw(path, (x0..x1).log_scale(), y0..y1),
            (false, true) => self.draw(path, x0..x1, (y0..y1).log_scale()),
            (true, true) => self.draw(path, (x0..x1).log_scale(), (y0..y1).log_scale()),
        }
        .map_err(err)
    }

    fn draw<X, Y>(&self, path: &Path, xr: X, yr: Y) -> std::result::Result<(), String>
    where
        X: AsRangedCoord<Value = f64>,
        Y: AsRangedCoord<Value = f64>,
        X::CoordDescType: ValueFormatter<f64>,
        Y::CoordDescType: ValueFormatter<f64>,
    {
        let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(xr, yr)
            .map_err(|e| e.to_string())?;
        let log_label = |v: &f64| tick_label(*v);
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235));
        // plotters prints log-axis ticks with every digit of the f64 ("5.000000000000002e-14");
        // give them a short form instead.
        if self.log_x {
            mesh.x_label_formatter(&log_label);
        }
        if self.log_y {
            mesh.y_label_formatter(&log_label);
        }
        mesh.draw().map_err(|e| e.to_string())?;
        for (k, s) in self.series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .cloned()
                .filter(|&(x, y)| {
                    x.is_finite() && y.is_finite() && (!self.log_x || x > 0.0) && (!self.log_y || y > 0.0)
                })
                .collect();
            let style = ShapeStyle::from(&color).stroke_width(2);
            let anno = match s.mark {
                Mark::Line | Mark::LinePoints => chart
                    .draw_series(LineSeries::new(pts.clone(), style))
                    .map_err(|e| e.to_string())?,
                Mark::Dashed => chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))
                    .map_err(|e| e.to_string())?,
                Mark::Points => chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, style.filled())))
                    .map_err(|e| e.to_string())?,
            };
            // a series without a label stays out of the legend
            if !s.label.is_empty() {
                anno.label(s.label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], ShapeStyle::from(&color).stroke_width(2))
                });
            }
            if s.mark == Mark::LinePoints {
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, style.filled())))
                    .map_err(|e| e.to_string())?;
            }
        }
        if self.series.iter().any(|s| !s.label.is_empty()) {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font(("sans-serif", 14))
                .position(SeriesLabelPosition::UpperLeft)
                .draw()
                .map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    }
}

/// A short tick label: up to four significant digits, in exponent form ("5e-14", "1.5e8") outside
/// [1e-3, 1e5).
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (1e-3..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
        trim(format!("{v:.decimals$}"))
    } else {
        let s = format!("{v:.3e}");
        match s.split_once('e') {
            Some((mant, exp)) => format!("{}e{exp}", trim(mant.to_string())),
            None => s,
        }
    }
}

/// The book's colour cycle (colour-blind-safe Okabe-Ito palette).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
];

/// One matrix of a [`Spy`] figure: its size and the marked entries `(row, column, class)`
/// (0-based), where `class` indexes [`Spy::classes`] and picks the colour.
#[derive(Clone, Debug)]
pub struct SpyPanel {
    /// Title above this matrix.
    pub title: String,
    /// Number of rows.
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Marked entries `(row, column, class)`.
    pub cells: Vec<(usize, usize, usize)>,
}

/// A spy plot: the nonzero pattern of one or more matrices side by side (row 0 at the top, as
/// matrices are written), each entry a filled square coloured by its class, with one legend of
/// the classes below the panels. Used for sparsity patterns and fill-in.
#[derive(Clone, Debug)]
pub struct Spy {
    /// Title of the whole figure.
    pub title: String,
    /// x-axis label of every panel, with units (e.g. "column j (dof)").
    pub x_label: String,
    /// y-axis label of every panel, with units.
    pub y_label: String,
    /// Legend label of each class of entry (at most the palette's 7).
    pub classes: Vec<String>,
    /// The matrices.
    pub panels: Vec<SpyPanel>,
}

impl Spy {
    /// Writes the figure as an SVG file, 430 pixels wide per panel and 540 high.
    pub fn save_svg(&self, path: &Path) -> Result<()> {
        register_fonts();
        let err = |e: String| Error::Plot {
            title: self.title.clone(),
            why: format!("spy plot to {}: {e}", path.display()),
        };
        if self.panels.is_empty() || self.classes.is_empty() || self.classes.len() > PALETTE.len() {
            return Err(err(format!(
                "needs 1 to {} classes and at least one panel",
                PALETTE.len()
            )));
        }
        for p in &self.panels {
            if p.rows == 0 || p.cols == 0 {
                return Err(err(format!("panel '{}' is empty", p.title)));
            }
            if let Some(&(i, j, c)) = p
                .cells
                .iter()
                .find(|&&(i, j, c)| i >= p.rows || j >= p.cols || c >= self.classes.len())
            {
                return Err(err(format!(
                    "panel '{}': entry ({i}, {j}) of class {c} is out of range",
                    p.title
                )));
            }
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        self.draw(path).map_err(err)
    }

    fn draw(&self, path: &Path) -> std::result::Result<(), String> {
        let width = 430 * self.panels.len() as u32;
        let root = SVGBackend::new(path, (width, 540)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let root = root
            .titled(&self.title, ("sans-serif", 22))
            .map_err(|e| e.to_string())?;
        let (body, legend) = root.split_vertically(root.dim_in_pixel().1 - 44);
        let areas = body.split_evenly((1, self.panels.len()));
        for (area, p) in areas.iter().zip(&self.panels) {
            let (n, m) = (p.rows as f64, p.cols as f64);
            let mut chart = ChartBuilder::on(area)
                .caption(&p.title, ("sans-serif", 17))
                .margin(10)
                .x_label_area_size(44)
                .y_label_area_size(56)
                .build_cartesian_2d(-0.5..m - 0.5, n - 0.5..-0.5)
                .map_err(|e| e.to_string())?;
            // entry (i, j) is the unit square centred at (j, i), so integer ticks mark entries
            let label = |v: &f64| format!("{}", v.round() as i64);
            chart
                .configure_mesh()
                .disable_mesh()
                .x_desc(&self.x_label)
                .y_desc(&self.y_label)
                .x_labels(p.cols.min(9))
                .y_labels(p.rows.min(9))
                .x_label_formatter(&label)
                .y_label_formatter(&label)
                .label_style(("sans-serif", 13))
                .axis_desc_style(("sans-serif", 15))
                .draw()
                .map_err(|e| e.to_string())?;
            let gap = if p.rows.max(p.cols) > 40 { 0.0 } else { 0.08 };
            chart
                .draw_series(p.cells.iter().map(|&(i, j, c)| {
                    let (x, y) = (j as f64 - 0.5, i as f64 - 0.5);
                    Rectangle::new(
                        [(x + gap, y + gap), (x + 1.0 - gap, y + 1.0 - gap)],
                        PALETTE[c].filled(),
                    )
                }))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(-0.5, -0.5), (m - 0.5, n - 0.5)],
                    BLACK.stroke_width(1),
                )))
                .map_err(|e| e.to_string())?;
        }
        let mut x = 20;
        for (k, c) in self.classes.iter().enumerate() {
            legend
                .draw(&Rectangle::new([(x, 14), (x + 14, 28)], PALETTE[k].filled()))
                .map_err(|e| e.to_string())?;
            legend
                .draw(&Text::new(c.clone(), (x + 20, 13), ("sans-serif", 15)))
                .map_err(|e| e.to_string())?;
            x += 50 + 8 * c.chars().count() as i32;
        }
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_labels_and_log_axes() {
        let dir = std::env::temp_dir().join(format!("mbd_plot_{}", std::process::id()));
        let path = dir.join("t.svg");
        Chart::new("cost", "n (bodies)", "time (s)")
            .log(true, true)
            .with(Series::line_points(
                "RNEA",
                (1..10).map(|n| (n as f64, n as f64 * 1e-6)).collect(),
            ))
            .with(Series::dashed(
                "n^3",
                (1..10).map(|n| (n as f64, (n as f64).powi(3) * 1e-7)).collect(),
            ))
            .save_svg(&path)
            .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("<svg") && svg.contains("time (s)") && svg.contains("RNEA"));
        let empty = Chart::new("empty", "x", "y").save_svg(&dir.join("e.svg"));
        assert!(empty.is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn spy_plot_writes_panels_and_legend_and_rejects_bad_entries() {
        let dir = std::env::temp_dir().join(format!("mbd_spy_{}", std::process::id()));
        let panel = SpyPanel {
            title: "H".into(),
            rows: 3,
            cols: 3,
            cells: vec![(0, 0, 0), (2, 1, 1)],
        };
        let spy = Spy {
            title: "pattern".into(),
            x_label: "column j (dof)".into(),
            y_label: "row i (dof)".into(),
            classes: vec!["diagonal".into(), "fill-in".into()],
            panels: vec![
                panel.clone(),
                SpyPanel {
                    title: "L".into(),
                    ..panel.clone()
                },
            ],
        };
        let path = dir.join("spy.svg");
        spy.save_svg(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("fill-in") && svg.contains("column j (dof)") && svg.contains("pattern"));
        let mut bad = spy.clone();
        bad.panels[0].cells.push((3, 0, 0));
        assert!(bad.save_svg(&dir.join("bad.svg")).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(5.000000000000002e-14), "5e-14");
        assert_eq!(tick_label(1.5e8), "1.5e8");
        assert_eq!(tick_label(100000.0), "1e5");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(1000.0), "1000");
        assert_eq!(tick_label(0.0), "0");
    }
}
