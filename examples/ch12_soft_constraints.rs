//! Chapter "Soft constraints": one frictionless contact row, a 1 kg sphere resting on a plane
//! with 0.5 mm of penetration, at rest. The library's row (MuJoCo's `mj_makeImpedance` and
//! `mj_referenceConstraint`, then `mj_forward`'s solver) is printed beside the chapter's closed
//! forms: the impedance `d(r)` of the default `solimp`, `K` and `B` from `solref`, `R = (1 - d) / d
//! A-hat` with `A-hat = 1 / m`, `aref = -B v - K d r` and the single row's force
//! `f = (a_ref - a_u) / (A + R)` with `A = 1 / m` and `a_u = -g`. (The chapter's figures are
//! drawn with those of "The constraint model" by `cargo run --release --example ch11_constraints`.)
//!
//! ```text
//! cargo run --release --example ch12_soft_constraints
//! ```

use mbd::mjcf;
use mbd::mujoco::forward::Forward;

const SCENE: &str = r#"
<mujoco model="resting sphere">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1" condim="1"/>
    <body name="ball">
      <freejoint/>
      <geom type="sphere" size="0.1" mass="1" condim="1"/>
    </body>
  </worldbody>
</mujoco>
"#;

fn main() -> mbd::Result<()> {
    // ANCHOR: resting_sphere
    let model = mjcf::load_str(SCENE)?.model;
    let (radius, mass, penetration) = (0.1, 1.0, 0.0005);
    let mut q = model.qpos0.as_slice().to_vec();
    q[2] = radius - penetration; // the free joint's z
    let v = vec![0.0; model.nv];
    let mut fw = Forward::new(&model)?;
    let d = fw.forward(&q, &v, &v)?;
    let efc = &d.efc;
    assert_eq!(efc.nefc(), 1, "one frictionless contact row");
    let [k, b, imp, _] = efc.kbip[0];

    // the chapter's closed forms, with MuJoCo's defaults
    let [d0, dmax, width, mid, power] = [0.9, 0.95, 0.001, 0.5, 2.0]; // solimp
    let (timeconst, dampratio) = (0.02, 1.0); // solref
    let x = penetration / width;
    let y = if x <= mid {
        x.powf(power) / mid.powf(power - 1.0)
    } else {
        1.0 - (1.0 - x).powf(power) / (1.0 - mid).powf(power - 1.0)
    };
    let imp_cf = d0 + y * (dmax - d0);
    let k_cf = 1.0 / (dmax * dmax * timeconst * timeconst * dampratio * dampratio);
    let b_cf = 2.0 / (dmax * timeconst);
    let a_hat = 1.0 / mass;
    let r_cf = (1.0 - imp_cf) / imp_cf * a_hat;
    let aref_cf = -b_cf * 0.0 - k_cf * imp_cf * (-penetration);
    let a_u = model.opt.gravity.z; // the unconstrained acceleration along the normal (+z)
    let force_cf = (aref_cf - a_u) / (1.0 / mass + r_cf);
    // ANCHOR_END: resting_sphere

    println!("sphere r = {radius} m, m = {mass} kg, penetration {penetration} m, at rest");
    println!(
        "{:>10} {:>16} {:>16} {:>10}",
        "quantity", "library", "closed form", "rel. diff"
    );
    let rows = [
        ("d", imp, imp_cf),
        ("K", k, k_cf),
        ("B", b, b_cf),
        ("A-hat", efc.diag_approx[0], a_hat),
        ("R", efc.r[0], r_cf),
        ("aref", efc.aref[0], aref_cf),
        ("force", d.efc_force[0], force_cf),
    ];
    for (name, lib, cf) in rows {
        let rel = (lib - cf).abs() / cf.abs().max(1e-300);
        println!("{name:>10} {lib:>16.10} {cf:>16.10} {rel:>10.1e}");
    }
    println!(
        "acceleration of the sphere along the normal: {:.6} m/s^2 = (1 - d) a_u + d aref = {:.6}",
        d.qacc[2],
        (1.0 - imp_cf) * a_u + imp_cf * aref_cf
    );
    Ok(())
}
