//! Height field against a convex geom, as MuJoCo's `mjc_ConvexHField` does it: the field is a
//! grid of triangles, and each triangle with the field's base below it is a triangular prism, a
//! convex shape. Only the prisms under the geom's bounding box (in the field's frame) are tried,
//! each with the general convex collider, one contact per prism, at most [`MAX_CONTACTS`].
//!
//! Cells of the sub-grid are walked row by row; within a row, the grid points
//! `(c, r + 1), (c, r)` for `c = c_min ..= c_max` are fed to a sliding window of three, and every
//! new point makes a triangle with the two before it (a triangle strip): two prisms per cell.

use super::convex::{convex_contact_with, ConvexShape, EpaScratch, Shape};
use super::{Contact, GeomPose};
use crate::model::mesh::HField;
use crate::spatial::Vec3;

/// MuJoCo's `mjMAXCONPAIR`: the most contacts one geom pair can make.
pub const MAX_CONTACTS: usize = 50;

// ANCHOR: hfield_convex
/// The contacts of height field `h` (world pose `ph`) with the convex shape `s`, appended to
/// `out` (the normal points from the field into the shape). Steps, in the field's frame:
/// a sphere test (`rbound + margin` about the shape's centre against the field's box), the
/// shape's bounding box from its support in `+-x, +-y, +-z`, the grid rows and columns it
/// covers (`floor`/`ceil` of its extent in grid steps), then every prism of those cells whose
/// top is not entirely below the shape, collided by [`convex_contact_with`] (EPA's polytope in
/// `ws`). Prism tops are raised by `margin`, as MuJoCo does.
pub fn hfield_convex_with(
    h: &HField,
    ph: &GeomPose,
    s: &ConvexShape,
    margin: f64,
    ws: &mut EpaScratch,
    out: &mut Vec<Contact>,
) {
    let [sx, sy, sz, base] = h.size;
    let local_pos = ph.rot.transpose() * (s.pose.pos - ph.pos);
    let radius = s.shape.rbound() + margin;
    if sx < local_pos.x - radius
        || -sx > local_pos.x + radius
        || sy < local_pos.y - radius
        || -sy > local_pos.y + radius
        || sz < local_pos.z - radius
        || -base > local_pos.z + radius
    {
        return;
    }
    // the shape in the field's frame, for its bounding box
    let local = ConvexShape {
        shape: s.shape,
        pose: GeomPose {
            pos: local_pos,
            rot: ph.rot.transpose() * s.pose.rot,
        },
    };
    let ext = |k: usize, sign: f64| {
        let mut d = Vec3::zeros();
        d[k] = sign;
        local.support(&d)[k]
    };
    let (xmax, xmin, ymax, ymin, zmax, zmin) = (
        ext(0, 1.0),
        ext(0, -1.0),
        ext(1, 1.0),
        ext(1, -1.0),
        ext(2, 1.0),
        ext(2, -1.0),
    );
    if xmin - margin > sx
        || xmax + margin < -sx
        || ymin - margin > sy
        || ymax + margin < -sy
        || zmin - margin > sz
        || zmax + margin < -base
    {
        return;
    }
    let (nrow, ncol) = (h.nrow as f64, h.ncol as f64);
    let cmin = (((xmin + sx) / (2.0 * sx) * (ncol - 1.0)).floor() as i64).max(0) as usize;
    let cmax = (((xmax + sx) / (2.0 * sx) * (ncol - 1.0)).ceil() as i64)
        .min(h.ncol as i64 - 1)
        .max(0) as usize;
    let rmin = (((ymin + sy) / (2.0 * sy) * (nrow - 1.0)).floor() as i64).max(0) as usize;
    let rmax = (((ymax + sy) / (2.0 * sy) * (nrow - 1.0)).ceil() as i64)
        .min(h.nrow as i64 - 1)
        .max(0) as usize;
    let start = out.len();
    for r in rmin..rmax {
        let point = |r: usize, c: usize| {
            let p = h.point(r, c);
            Vec3::new(p.x, p.y, p.z + margin)
        };
        // the sliding window of the last three grid points (x, y, top z), oldest first; the
        // first slot is filled by the first slide
        let mut window = [Vec3::zeros(), point(r + 1, cmin), point(r, cmin)];
        for c in cmin + 1..=cmax {
            for i in 0..2 {
                window = [window[1], window[2], point(r + 1 - i, c)];
                if window.iter().all(|v| v.z < zmin) {
                    continue;
                }
                let mut prism = [Vec3::zeros(); 6];
                for k in 0..3 {
                    prism[k] = Vec3::new(window[k].x, window[k].y, -base);
                    prism[k + 3] = window[k];
                }
                let shape = ConvexShape {
                    shape: Shape::Prism(prism),
                    pose: *ph,
                };
                if let Some(c) = convex_contact_with(&shape, s, 0.0, ws) {
                    out.push(c);
                    if out.len() - start >= MAX_CONTACTS {
                        return;
                    }
                }
            }
        }
    }
}
// ANCHOR_END: hfield_convex

/// [`hfield_convex_with`] with fresh storage for EPA (allocates when a prism overlaps the
/// shape).
pub fn hfield_convex(h: &HField, ph: &GeomPose, s: &ConvexShape, margin: f64, out: &mut Vec<Contact>) {
    hfield_convex_with(h, ph, s, margin, &mut EpaScratch::default(), out)
}
