//! Drawing helpers for the book's schematic figures (trees, frames, vectors, free-body
//! diagrams), in the style of [`crate::plot`]: SVG written by `plotters`, text in the embedded
//! DejaVu Sans, colours from [`PALETTE`].
//!
//! A [`Sketch`] maps a rectangle of the plane (metres, x to the right, y up) onto a panel of the
//! picture with one scale for both axes, so angles and lengths are drawn true. Vectors that are
//! not lengths (velocities, forces) are drawn with a scale the caller chooses and states.

use crate::error::{Error, Result};
use crate::plot::{register_fonts, PALETTE};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// Grey for things drawn for context (bodies that do not take part, construction lines).
pub const GREY: RGBColor = RGBColor(150, 150, 150);
/// Dark grey for bodies.
pub const INK: RGBColor = RGBColor(60, 60, 60);

/// Where a label sits relative to its point.
#[derive(Clone, Copy, Debug)]
pub enum Side {
    /// Centred on the point.
    Centre,
    /// Above.
    Above,
    /// Below.
    Below,
    /// To the left (text ends at the point).
    Left,
    /// To the right (text starts at the point).
    Right,
}

/// One drawing panel: a plotters drawing area plus the map from plane coordinates to pixels.
pub struct Sketch<'a> {
    area: DrawingArea<SVGBackend<'a>, Shift>,
    x0: f64,
    y1: f64,
    scale: f64,
    ox: f64,
    oy: f64,
}

fn draw_err<E: std::fmt::Debug>(e: E) -> Error {
    Error::Io {
        path: "(figure)".into(),
        why: format!("drawing failed: {e:?}"),
    }
}

/// Creates `path` (`width` x `height` pixels, white) with a title line and returns the area
/// under the title (split it with `split_evenly` for side-by-side panels).
pub fn canvas<'a>(path: &'a Path, width: u32, height: u32, title: &str) -> Result<DrawingArea<SVGBackend<'a>, Shift>> {
    register_fonts();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            path: dir.display().to_string(),
            why: e.to_string(),
        })?;
    }
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let root = root.titled(title, ("sans-serif", 22)).map_err(draw_err)?;
    Ok(root)
}

/// Finishes the picture.
pub fn finish(root: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<()> {
    root.present().map_err(draw_err)
}

impl<'a> Sketch<'a> {
    /// A panel showing the plane rectangle `[x0, x1] x [y0, y1]` as large as fits in `area` with
    /// `margin` pixels on every side, centred, with equal scales.
    pub fn new(area: DrawingArea<SVGBackend<'a>, Shift>, x: (f64, f64), y: (f64, f64), margin: f64) -> Self {
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (w as f64 - 2.0 * margin, h as f64 - 2.0 * margin);
        let scale = (w / (x.1 - x.0)).min(h / (y.1 - y.0));
        let ox = margin + 0.5 * (w - scale * (x.1 - x.0));
        let oy = margin + 0.5 * (h - scale * (y.1 - y.0));
        Sketch {
            area,
            x0: x.0,
            y1: y.1,
            scale,
            ox,
            oy,
        }
    }

    /// Pixels per plane unit.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The pixel position of plane point `p`.
    pub fn px(&self, p: (f64, f64)) -> (i32, i32) {
        (
            (self.ox + (p.0 - self.x0) * self.scale).round() as i32,
            (self.oy + (self.y1 - p.1) * self.scale).round() as i32,
        )
    }

    /// A polyline through plane points.
    pub fn line(&self, pts: &[(f64, f64)], color: RGBColor, width: u32) -> Result<()> {
        let px: Vec<(i32, i32)> = pts.iter().map(|&p| self.px(p)).collect();
        self.area
            .draw(&PathElement::new(px, color.stroke_width(width)))
            .map_err(draw_err)
    }

    /// A polyline through pixel positions (for legends and annotations placed by pixel).
    pub fn line_px(&self, pts: &[(i32, i32)], color: RGBColor, width: u32) -> Result<()> {
        self.area
            .draw(&PathElement::new(pts.to_vec(), color.stroke_width(width)))
            .map_err(draw_err)
    }

    /// A dashed segment.
    pub fn dashed(&self, a: (f64, f64), b: (f64, f64), color: RGBColor) -> Result<()> {
        let px = vec![self.px(a), self.px(b)];
        self.area
            .draw(&DashedPathElement::new(px, 6, 4, color.stroke_width(1)))
            .map_err(draw_err)
    }

    /// A filled polygon (plane points), drawn translucent.
    pub fn fill(&self, pts: &[(f64, f64)], color: RGBColor, alpha: f64) -> Result<()> {
        let px: Vec<(i32, i32)> = pts.iter().map(|&p| self.px(p)).collect();
        self.area
            .draw(&Polygon::new(px, color.mix(alpha).filled()))
            .map_err(draw_err)
    }

    /// An arrow from plane point `a` to plane point `b` (the head grows with `width`).
    pub fn arrow(&self, a: (f64, f64), b: (f64, f64), color: RGBColor, width: u32) -> Result<()> {
        self.arrow_px(self.px(a), self.px(b), color, width)
    }

    /// An arrow between pixel positions.
    pub fn arrow_px(&self, a: (i32, i32), b: (i32, i32), color: RGBColor, width: u32) -> Result<()> {
        let (dx, dy) = ((b.0 - a.0) as f64, (b.1 - a.1) as f64);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1.0 {
            return Ok(());
        }
        let (ux, uy) = (dx / len, dy / len);
        let head = (8.0 + 2.0 * width as f64).min(0.6 * len);
        let base = (b.0 as f64 - head * ux, b.1 as f64 - head * uy);
        let half = 0.45 * head;
        let left = ((base.0 - half * uy).round() as i32, (base.1 + half * ux).round() as i32);
        let right = ((base.0 + half * uy).round() as i32, (base.1 - half * ux).round() as i32);
        let shaft_end = (base.0.round() as i32, base.1.round() as i32);
        self.area
            .draw(&PathElement::new(vec![a, shaft_end], color.stroke_width(width)))
            .map_err(draw_err)?;
        self.area
            .draw(&Polygon::new(vec![b, left, right], color.filled()))
            .map_err(draw_err)
    }

    /// A filled dot of `r` pixels.
    pub fn dot(&self, p: (f64, f64), r: i32, color: RGBColor) -> Result<()> {
        self.area
            .draw(&Circle::new(self.px(p), r, color.filled()))
            .map_err(draw_err)
    }

    /// A joint: an open circle of `r` pixels (white inside).
    pub fn joint(&self, p: (f64, f64), r: i32, color: RGBColor) -> Result<()> {
        self.area
            .draw(&Circle::new(self.px(p), r, WHITE.filled()))
            .map_err(draw_err)?;
        self.area
            .draw(&Circle::new(self.px(p), r, color.stroke_width(2)))
            .map_err(draw_err)
    }

    /// The centre-of-mass symbol: a circle with two opposite quarters filled.
    pub fn com(&self, p: (f64, f64), r: i32, color: RGBColor) -> Result<()> {
        let c = self.px(p);
        for q in [0.0, std::f64::consts::PI] {
            let mut pts = vec![c];
            for k in 0..=8 {
                let t = q + 0.5 * std::f64::consts::PI * k as f64 / 8.0;
                pts.push((
                    c.0 + (r as f64 * t.cos()).round() as i32,
                    c.1 - (r as f64 * t.sin()).round() as i32,
                ));
            }
            self.area.draw(&Polygon::new(pts, color.filled())).map_err(draw_err)?;
        }
        self.area
            .draw(&Circle::new(c, r, color.stroke_width(2)))
            .map_err(draw_err)
    }

    /// A vector pointing into the page (a circle with a cross), `r` pixels.
    pub fn into_page(&self, p: (f64, f64), r: i32, color: RGBColor) -> Result<()> {
        let c = self.px(p);
        self.area.draw(&Circle::new(c, r, WHITE.filled())).map_err(draw_err)?;
        self.area
            .draw(&Circle::new(c, r, color.stroke_width(2)))
            .map_err(draw_err)?;
        let d = (r as f64 * 0.7).round() as i32;
        for (a, b) in [((-d, -d), (d, d)), ((-d, d), (d, -d))] {
            self.area
                .draw(&PathElement::new(
                    vec![(c.0 + a.0, c.1 + a.1), (c.0 + b.0, c.1 + b.1)],
                    color.stroke_width(2),
                ))
                .map_err(draw_err)?;
        }
        Ok(())
    }

    /// A vector pointing out of the page (a circle with a dot), `r` pixels.
    pub fn out_of_page(&self, p: (f64, f64), r: i32, color: RGBColor) -> Result<()> {
        let c = self.px(p);
        self.area.draw(&Circle::new(c, r, WHITE.filled())).map_err(draw_err)?;
        self.area
            .draw(&Circle::new(c, r, color.stroke_width(2)))
            .map_err(draw_err)?;
        self.area
            .draw(&Circle::new(c, (r / 3).max(2), color.filled()))
            .map_err(draw_err)
    }

    /// A circular arrow of radius `r` pixels around `p` (a moment or a rotation), counter-clockwise
    /// on the page when `ccw`.
    pub fn turn(&self, p: (f64, f64), r: f64, ccw: bool, color: RGBColor) -> Result<()> {
        let c = self.px(p);
        let n = 24;
        let (t0, t1) = (0.3 * std::f64::consts::PI, 1.7 * std::f64::consts::PI);
        let pt = |t: f64| -> (i32, i32) { (c.0 + (r * t.cos()).round() as i32, c.1 - (r * t.sin()).round() as i32) };
        let pts: Vec<(i32, i32)> = (0..=n).map(|k| pt(t0 + (t1 - t0) * k as f64 / n as f64)).collect();
        self.area
            .draw(&PathElement::new(pts, color.stroke_width(2)))
            .map_err(draw_err)?;
        let (end, before) = if ccw { (t1, t1 - 0.35) } else { (t0, t0 + 0.35) };
        self.arrow_px(pt(before), pt(end), color, 2)
    }

    /// Text at plane point `p`, on the given side of it (8 pixels away unless centred).
    pub fn label(&self, p: (f64, f64), text: &str, side: Side, size: u32, color: RGBColor) -> Result<()> {
        let c = self.px(p);
        self.label_px(c, text, side, size, color)
    }

    /// Text at a pixel position.
    pub fn label_px(&self, c: (i32, i32), text: &str, side: Side, size: u32, color: RGBColor) -> Result<()> {
        let gap = 8;
        let (pos, at) = match side {
            Side::Centre => (Pos::new(HPos::Center, VPos::Center), c),
            Side::Above => (Pos::new(HPos::Center, VPos::Bottom), (c.0, c.1 - gap)),
            Side::Below => (Pos::new(HPos::Center, VPos::Top), (c.0, c.1 + gap)),
            Side::Left => (Pos::new(HPos::Right, VPos::Center), (c.0 - gap, c.1)),
            Side::Right => (Pos::new(HPos::Left, VPos::Center), (c.0 + gap, c.1)),
        };
        let style = ("sans-serif", size).into_font().color(&color).pos(pos);
        self.area
            .draw(&Text::new(text.to_string(), at, style))
            .map_err(draw_err)
    }

    /// The panel's drawing area (for anything the helpers do not cover).
    pub fn area(&self) -> &DrawingArea<SVGBackend<'a>, Shift> {
        &self.area
    }
}

/// The colour of the `k`-th highlighted thing (the plots' cycle).
pub fn colour(k: usize) -> RGBColor {
    PALETTE[k % PALETTE.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plane_points_map_to_pixels_with_one_scale_and_y_up() {
        let dir = std::env::temp_dir().join(format!("mbd_draw_{}", std::process::id()));
        let path = dir.join("s.svg");
        {
            let root = canvas(&path, 400, 300, "test").unwrap();
            let s = Sketch::new(root.clone(), (0.0, 2.0), (0.0, 1.0), 10.0);
            // 380 x ~270 pixels available: width limits, 190 px per unit.
            assert!((s.scale() - 190.0).abs() < 1e-9);
            let (a, b) = (s.px((0.0, 0.0)), s.px((2.0, 1.0)));
            assert_eq!(b.0 - a.0, 380);
            assert_eq!(a.1 - b.1, 190, "y grows upwards");
            s.arrow((0.0, 0.0), (1.0, 0.5), colour(0), 2).unwrap();
            s.label((1.0, 0.5), "v", Side::Above, 14, INK).unwrap();
            finish(&root).unwrap();
        }
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.contains("<svg") && svg.lines().any(|l| l.trim() == "v") && svg.contains("test"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
