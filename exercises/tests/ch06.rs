//! Grader of the exercises of "Sparse factorization of the joint-space inertia"
//! (`src/ch06.rs`): `cargo test -p exercises --test ch06`.

use exercises::ch06;
use exercises::grade::{close_mat, ensure, repo_root, run, Check, Exercise, Rng};
use mbd::dynamics::crba;
use mbd::model::{canned, Model};
use mbd::sparse::{llt_fill_in, ltdl, split_ltdl, MjLayout, OpCount};
use nalgebra::{DMatrix, DVector};
use serde::Deserialize;

fn random_q(rng: &mut Rng, model: &Model) -> Vec<f64> {
    let mut q = model.qpos0.as_slice().to_vec();
    let v = rng.vec(model.nv, 1.0);
    model.integrate(&mut q, &v, 1.0).expect("valid");
    q
}

type Ltdl = fn(&DMatrix<f64>) -> (DMatrix<f64>, DVector<f64>);

fn dense_ltdl_with(rng: &mut Rng, answer: Ltdl) -> Check {
    for model in [
        canned::chain(8, true),
        canned::binary_tree(4),
        canned::floating_base_ball_arms(),
    ] {
        let h = crba(&model, &random_q(rng, &model)).expect("valid state");
        let (l, d) = answer(&h);
        ensure(
            l.shape() == h.shape() && d.len() == h.nrows(),
            format_args!("'{}': L must be n x n and D hold n numbers", model.name),
        )?;
        let rebuilt = l.transpose() * DMatrix::from_diagonal(&d) * &l;
        close_mat(
            &rebuilt,
            &h,
            1e-12 * h.amax(),
            format_args!("'{}': L^T D L = H", model.name),
        )?;
        let mut ld = h.clone();
        ltdl(&mut ld, &model.dof_parent, &mut OpCount::default()).expect("positive definite");
        let (l_ref, d_ref) = split_ltdl(&ld, &model.dof_parent);
        close_mat(
            &l,
            &l_ref,
            1e-10 * l_ref.amax(),
            format_args!("'{}': L against ltdl", model.name),
        )?;
        close_mat(
            &d,
            &d_ref,
            1e-10 * d_ref.amax(),
            format_args!("'{}': D against ltdl", model.name),
        )?;
    }
    Ok(())
}

fn dense_ltdl(rng: &mut Rng) -> Check {
    dense_ltdl_with(rng, ch06::exercise_1)
}

fn fill_in_with(_rng: &mut Rng, answer: fn(u32) -> usize) -> Check {
    for depth in 1..=8u32 {
        let model = canned::binary_tree(depth as usize);
        ensure(
            answer(depth) == llt_fill_in(&model.dof_parent),
            format_args!("depth {depth}: the count differs from symbolic elimination (llt_fill_in)"),
        )?;
    }
    // and against the nonzeros a numerical root-first Cholesky creates off the pattern
    let model = canned::binary_tree(4);
    let parent = &model.dof_parent;
    let n = model.nv;
    let mut h = DMatrix::zeros(n, n);
    for i in 0..n {
        let mut j = parent[i];
        while let Some(jj) = j {
            h[(i, jj)] = 0.3 + 0.01 * (i + 2 * jj) as f64;
            h[(jj, i)] = h[(i, jj)];
            j = parent[jj];
        }
    }
    for i in 0..n {
        h[(i, i)] = 1.0 + h.row(i).iter().map(|x| x.abs()).sum::<f64>();
    }
    let l = nalgebra::Cholesky::new(h.clone()).expect("diagonally dominant").l();
    let mut fill = 0;
    for i in 0..n {
        for j in 0..i {
            if h[(i, j)] == 0.0 && l[(i, j)] != 0.0 {
                fill += 1;
            }
        }
    }
    ensure(
        answer(4) == fill,
        "depth 4: the count differs from the fill of a numerical Cholesky",
    )
}

fn fill_in(rng: &mut Rng) -> Check {
    fill_in_with(rng, ch06::exercise_2)
}

fn legged_with(rng: &mut Rng, answer: fn(usize, usize) -> usize) -> Check {
    let mut robots = vec![(4usize, 6usize), (0, 0)];
    for _ in 0..4 {
        robots.push((rng.int(1, 6), rng.int(1, 7)));
    }
    for (legs, leg_dofs) in robots {
        let mut parent: Vec<Option<usize>> = (0..6).map(|i: usize| i.checked_sub(1)).collect();
        for _ in 0..legs {
            for k in 0..leg_dofs {
                parent.push(Some(if k == 0 { 5 } else { parent.len() - 1 }));
            }
        }
        let n = parent.len();
        let mut h = DMatrix::from_fn(n, n, |i, j| if i == j { 10.0 * n as f64 } else { 0.1 });
        let mut ops = OpCount::default();
        ltdl(&mut h, &parent, &mut ops).expect("positive definite");
        ensure(
            answer(legs, leg_dofs) == ops.madd,
            format_args!("{legs} legs of {leg_dofs} dofs: the count differs from ltdl's operation counter"),
        )?;
    }
    Ok(())
}

fn legged(rng: &mut Rng) -> Check {
    legged_with(rng, ch06::exercise_3)
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Structure {
    dof_parentid: Vec<i64>,
    dof_Madr: Vec<usize>,
    mapM2M: Vec<usize>,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct Sizes {
    nM: usize,
}

#[derive(Deserialize)]
struct Fixture {
    sizes: Sizes,
    structure: Structure,
}

type Layout = fn(&[i64]) -> (Vec<usize>, usize, Vec<usize>);

fn mujoco_layout_with(_rng: &mut Rng, answer: Layout) -> Check {
    for name in ["chain_7_spatial", "tree_5", "floating", "panda"] {
        let path = repo_root().join(format!("tests/fixtures/peers/{name}.json"));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("grader: {}: {e}", path.display()))?;
        let fx: Fixture = serde_json::from_str(&text).map_err(|e| format!("grader: {}: {e}", path.display()))?;
        let (madr, nm, map) = answer(&fx.structure.dof_parentid);
        ensure(
            madr == fx.structure.dof_Madr,
            format_args!("{name}: dof_Madr differs from MuJoCo's"),
        )?;
        ensure(nm == fx.sizes.nM, format_args!("{name}: nM differs from MuJoCo's"))?;
        ensure(
            map == fx.structure.mapM2M,
            format_args!("{name}: mapM2M differs from MuJoCo's"),
        )?;
    }
    for model in [canned::binary_tree(5), canned::floating_base_ball_arms()] {
        let ids: Vec<i64> = model.dof_parent.iter().map(|p| p.map_or(-1, |p| p as i64)).collect();
        let lay = MjLayout::new(&model.dof_parent).expect("valid tree");
        ensure(
            answer(&ids) == (lay.dof_madr, lay.nm, lay.map_m2m),
            format_args!("'{}': the layout differs from MjLayout", model.name),
        )?;
    }
    Ok(())
}

fn mujoco_layout(rng: &mut Rng) -> Check {
    mujoco_layout_with(rng, ch06::exercise_4)
}

#[allow(dead_code)]
fn main() {
    run(
        "ch06",
        "Sparse factorization of the joint-space inertia",
        11,
        &[
            Exercise {
                number: 1,
                title: "L^T D L from the element formulas",
                hint: "go from the last row to the first; d_i first, then l_ij for j < i, each sum over every k > i",
                check: dense_ltdl,
            },
            Exercise {
                number: 2,
                title: "Total fill-in",
                hint: "after the root is eliminated the rest is full; subtract the entries H's pattern already holds",
                check: fill_in,
            },
            Exercise {
                number: 3,
                title: "A legged robot",
                hint: "a dof at depth d (counting itself) costs d (d - 1) / 2 multiply-adds",
                check: legged,
            },
            Exercise {
                number: 4,
                title: "MuJoCo's addresses",
                hint: "row i holds depth(i) + 1 entries; dof_Madr is the running sum; a CSR row is the legacy row backwards",
                check: mujoco_layout,
            },
        ],
    )
}

/// Deliberately wrong answers, each a common slip: the checks must fail them, naming what is
/// wrong (run by `cargo test -p exercises --test wrong_answers`).
#[cfg(test)]
#[allow(unused_imports, dead_code)] // compiled, not run, in the grader itself
mod wrong_answers {
    use super::*;
    use exercises::grade::fails_naming;

    #[test]
    fn the_factor_transposed_fails() {
        assert!(fails_naming(0..3, "L^T D L", |rng| dense_ltdl_with(rng, |a| {
            let n = a.nrows();
            let mut l = DMatrix::identity(n, n);
            let mut d = DVector::zeros(n);
            for i in (0..n).rev() {
                d[i] = a[(i, i)] - (i + 1..n).map(|k| l[(k, i)] * l[(k, i)] * d[k]).sum::<f64>();
                for j in 0..i {
                    let s = a[(i, j)] - (i + 1..n).map(|k| l[(k, i)] * d[k] * l[(k, j)]).sum::<f64>();
                    l[(i, j)] = s / d[i];
                }
            }
            (l.transpose(), d) // L is the lower factor, not its transpose
        })));
    }

    #[test]
    fn the_whole_triangle_counted_as_fill_fails() {
        assert!(fails_naming(0..3, "the count differs", |rng| fill_in_with(
            rng,
            |depth| {
                let n = (1usize << depth) - 1;
                n * (n - 1) / 2 // forgot that H's own pattern is not fill
            }
        )));
    }

    #[test]
    fn counting_the_diagonal_too_fails() {
        assert!(fails_naming(0..3, "the count differs", |rng| legged_with(
            rng,
            |legs, leg_dofs| {
                let cost = |d: usize| d * (d + 1) / 2; // should be d (d - 1) / 2
                (1..=6).map(cost).sum::<usize>() + legs * (7..=6 + leg_dofs).map(cost).sum::<usize>()
            }
        )));
    }

    #[test]
    fn the_csr_row_read_forwards_fails() {
        assert!(fails_naming(0..3, "mapM2M", |rng| mujoco_layout_with(rng, |parent| {
            let ids: Vec<Option<usize>> = parent.iter().map(|&p| usize::try_from(p).ok()).collect();
            let lay = MjLayout::new(&ids).expect("valid tree");
            let mut map = lay.map_m2m.clone();
            // the legacy row runs from the diagonal up the ancestors; CSR wants it backwards,
            // and this answer forgets to turn it round
            for (i, &start) in lay.dof_madr.iter().enumerate() {
                let end = lay.dof_madr.get(i + 1).copied().unwrap_or(lay.nm);
                map[start..end].reverse();
            }
            (lay.dof_madr.clone(), lay.nm, map)
        })));
    }
}
