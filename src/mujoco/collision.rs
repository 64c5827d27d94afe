//! The broad-phase filter of MuJoCo's `mj_collision`: which pairs of geoms may touch at all.
//!
//! MuJoCo considers a pair of geoms when (1) their bitmasks agree, `(contype_a & conaffinity_b)
//! || (contype_b & conaffinity_a)`, (2) they are on different bodies, and (3) neither body is
//! the other's parent (unless a parent is the world, whose children do collide with it). The
//! narrow phase (distances, contact frames) is not built yet; today the filter tells the
//! simulator which models would need contacts.

use crate::model::Model;
use crate::spatial::{Mat3, Vec3};

/// One contact as MuJoCo stores it in `mjData.contact` (`mjContact`): the geometry of
/// [`crate::collision::Contact`] plus the parameters mixed from the two geoms (or taken from an
/// explicit `<pair>`), which the constraint rows read.
#[derive(Clone, Debug, PartialEq)]
pub struct MjContact {
    /// The two geoms (indices into `model.geoms`); the normal points from `geom[0]` to `geom[1]`.
    pub geom: [usize; 2],
    /// Point midway between the surfaces (world).
    pub pos: Vec3,
    /// Rows: normal, tangent 1, tangent 2 (MuJoCo's `frame`, 9 numbers row by row).
    pub frame: Mat3,
    /// Signed distance (negative: penetration).
    pub dist: f64,
    /// Contact dimensionality: 1, 3, 4 or 6.
    pub dim: usize,
    /// Friction (tangent 1, tangent 2, spin, roll 1, roll 2), each at least `mjMINMU`.
    pub friction: [f64; 5],
    /// `solref` of the normal direction.
    pub solref: [f64; 2],
    /// `solreffriction` (zeros: use `solref`).
    pub solreffriction: [f64; 2],
    /// `solimp`.
    pub solimp: [f64; 5],
    /// Margin: rows are made when `dist < margin`.
    pub margin: f64,
    /// Gap: `includemargin = margin - gap`.
    pub gap: f64,
    /// `efc_address`: the contact's first constraint row, `None` when it has none.
    pub efc_address: Option<usize>,
}

impl MjContact {
    /// MuJoCo's `includemargin = margin - gap`: the distance below which the rows push.
    pub fn includemargin(&self) -> f64 {
        self.margin - self.gap
    }
}

/// MuJoCo's `body_parentid`: the parent MuJoCo body of every MuJoCo body (0 for the world and
/// its children). The first Featherstone body of MuJoCo body b's chain hangs from the last body
/// of b's parent.
pub fn body_parentid(model: &Model) -> Vec<usize> {
    let mut out = vec![0; model.mj_nbody()];
    for (b, parent) in out.iter_mut().enumerate().skip(1) {
        let mut first = model.mj_body_last[b];
        // bounded: each step moves to a smaller body index (lambda(i) < i)
        while first != 0 && model.lambda[first] != 0 && model.mj_body[model.lambda[first]] == b {
            first = model.lambda[first];
        }
        *parent = if first == 0 {
            0
        } else {
            model.mj_body[model.lambda[first]]
        };
    }
    out
}

// ANCHOR: filter
/// Whether MuJoCo's broad phase would consider geoms `a` and `b` (indices into `model.geoms`):
/// bitmasks compatible, different MuJoCo bodies, and no parent-child pair below the world.
/// `parents` is [`body_parentid`].
pub fn may_collide(model: &Model, parents: &[usize], a: usize, b: usize) -> bool {
    let (ga, gb) = (&model.geoms[a], &model.geoms[b]);
    let masks = (ga.contype & gb.conaffinity) != 0 || (gb.contype & ga.conaffinity) != 0;
    let (ba, bb) = (model.mj_body[ga.body], model.mj_body[gb.body]);
    let same_body = ba == bb;
    let parent_child = ba != 0 && bb != 0 && (parents[ba] == bb || parents[bb] == ba);
    masks && !same_body && !parent_child
}
// ANCHOR_END: filter

/// Every pair `(a, b)`, `a < b`, that passes [`may_collide`].
pub fn candidate_pairs(model: &Model) -> Vec<(usize, usize)> {
    let parents = body_parentid(model);
    let n = model.geoms.len();
    let mut out = vec![];
    for a in 0..n {
        for b in a + 1..n {
            if may_collide(model, &parents, a, b) {
                out.push((a, b));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{canned, Geom, GeomType};
    use crate::spatial::Vec3;

    fn geom(body: usize, contype: u32, conaffinity: u32) -> Geom {
        Geom {
            name: String::new(),
            body,
            gtype: GeomType::Sphere,
            size: [0.1, 0.0, 0.0],
            pos: Vec3::zeros(),
            quat: [1.0, 0.0, 0.0, 0.0],
            friction: [1.0, 0.005, 0.0001],
            condim: 3,
            contype,
            conaffinity,
            margin: 0.0,
            gap: 0.0,
            params: Default::default(),
            solmix: 1.0,
            priority: 0,
        }
    }

    #[test]
    fn the_three_rules_of_the_filter() {
        // chain of 3: bodies 1-2-3, world 0
        let mut m = canned::chain(3, false);
        m.geoms = vec![
            geom(0, 1, 1),
            geom(1, 1, 1),
            geom(2, 1, 1),
            geom(3, 1, 1),
            geom(3, 2, 2),
        ];
        let pairs = candidate_pairs(&m);
        // world-1 collide (the world's children are not filtered), 1-2 and 2-3 are parent-child,
        // 3-3 same body, geom 4 has an incompatible mask with everything but itself.
        assert_eq!(pairs, vec![(0, 1), (0, 2), (0, 3), (1, 3)]);
    }
}
