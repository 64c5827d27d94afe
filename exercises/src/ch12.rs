//! Exercises of the chapter "Soft constraints" (`book/src/soft_constraints.md`). Grade them with
//! `cargo test -p exercises --test ch12`.

// The parameters of a function still holding `todo!()` are unused until you write its body.
#![allow(unused_variables)]

/// Exercise 1, the impedance by hand: `d(r)` of `solimp = (d0, dwidth, width, midpoint, power)`
/// for a row at position `pos` with margin `margin` (violation `x = |pos - margin| / width`): the
/// two polynomial pieces of MuJoCo's `getimpedance` meeting at the midpoint, `d0` at `x = 0`,
/// `dwidth` for `x >= 1`, and the constant `(d0 + dwidth) / 2` when `d0 = dwidth` or the width
/// is below `1e-15`. Do not call `mbd::mujoco::constraint::impedance`.
pub fn exercise_1(solimp: &[f64; 5], pos: f64, margin: f64) -> f64 {
    todo!()
}

/// Exercise 2, solref to K and B: the stiffness and damping `(K, B)` of a row with `solref`
/// (standard `(timeconst, dampratio)` when `solref[0] > 0`, direct `(-stiffness, -damping)`
/// otherwise) and `dmax = solimp[1]`, as MuJoCo's `efc_KBIP` has them.
pub fn exercise_2(solref: [f64; 2], dmax: f64) -> (f64, f64) {
    todo!()
}

/// Exercise 3, the inverse weight of a free body: `body_invweight0 = [translational,
/// rotational]` of a free body of mass `m` whose centre of mass is at its origin and whose
/// principal moments of inertia are `moments`.
pub fn exercise_3(m: f64, moments: [f64; 3]) -> [f64; 2] {
    todo!()
}
