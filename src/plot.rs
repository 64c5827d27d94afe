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
        Series { label: label.into(), points, mark: Mark::Line }
    }
    /// A series drawn as a line with markers.
    pub fn line_points(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::LinePoints }
    }
    /// A series drawn as markers.
    pub fn points(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::Points }
    }
    /// A dashed reference line.
    pub fn dashed(label: &str, points: Vec<(f64, f64)>) -> Self {
        Series { label: label.into(), points, mark: Mark::Dashed }
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
}

impl Chart {
    /// A chart with linear axes and no series yet.
    pub fn new(title: &str, x_label: &str, y_label: &str) -> Self {
        Chart { title: title.into(), x_label: x_label.into(), y_label: y_label.into(), log_x: false, log_y: false, series: Vec::new() }
    }
    /// Sets logarithmic axes.
    pub fn log(mut self, log_x: bool, log_y: bool) -> Self {
        self.log_x = log_x;
        self.log_y = log_y;
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
            return Err(Error::Other(format!("chart '{}' has no finite points to plot", self.title)));
        }
        let pad = |a: f64, b: f64, log: bool| -> (f64, f64) {
            if log {
                (a / 1.3, b * 1.3)
            } else {
                let d = if b > a { 0.05 * (b - a) } else { 0.5 * a.abs().max(1e-12) };
                (a - d, b + d)
            }
        };
        let (x0, x1) = pad(x0, x1, self.log_x);
        let (y0, y1) = pad(y0, y1, self.log_y);
        let err = |e: String| Error::Other(format!("plotting '{}' to {}: {e}", self.title, path.display()));
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
        chart
            .configure_mesh()
            .x_desc(&self.x_label)
            .y_desc(&self.y_label)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(|e| e.to_string())?;
        for (k, s) in self.series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .cloned()
                .filter(|&(x, y)| x.is_finite() && y.is_finite() && (!self.log_x || x > 0.0) && (!self.log_y || y > 0.0))
                .collect();
            let style = ShapeStyle::from(&color).stroke_width(2);
            let anno = match s.mark {
                Mark::Line | Mark::LinePoints => chart.draw_series(LineSeries::new(pts.clone(), style)).map_err(|e| e.to_string())?,
                Mark::Dashed => chart
                    .draw_series(DashedLineSeries::new(pts.clone(), 8, 5, style))
                    .map_err(|e| e.to_string())?,
                Mark::Points => chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 3, style.filled())))
                    .map_err(|e| e.to_string())?,
            };
            anno.label(s.label.clone())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], ShapeStyle::from(&color).stroke_width(2)));
            if s.mark == Mark::LinePoints {
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, style.filled()))).map_err(|e| e.to_string())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_labels_and_log_axes() {
        let dir = std::env::temp_dir().join(format!("mbd_plot_{}", std::process::id()));
        let path = dir.join("t.svg");
        Chart::new("cost", "n (bodies)", "time (s)")
            .log(true, true)
            .with(Series::line_points("RNEA", (1..10).map(|n| (n as f64, n as f64 * 1e-6)).collect()))
            .with(Series::dashed("n^3", (1..10).map(|n| (n as f64, (n as f64).powi(3) * 1e-7)).collect()))
            .save_svg(&path)
            .unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("<svg") && svg.contains("time (s)") && svg.contains("RNEA"));
        let empty = Chart::new("empty", "x", "y").save_svg(&dir.join("e.svg"));
        assert!(empty.is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
