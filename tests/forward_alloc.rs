//! The constrained pipeline keeps its storage (chapter "The constrained pipeline", section
//! "What a call allocates"): on the settled `box_stack`, `box_stack_10`, `weld` and the corpus
//! models humanoid, quadruped, humanoid_CMU, stacker, manipulator, finger and ball_in_cup (its
//! spatial tendon) of `tests/fixtures/forward`, a second call at the same state of the whole
//! `Forward::forward_with` (every solver, both cones: collision, tendons, actuators, rows,
//! solver, and the sensors of `tests/fixtures/sensors.json`'s models), of the constraint rows alone (`make_constraint_into`), of the collision stage alone
//! (`Collider::collide_into`) and of PGS alone (`solve_pgs_into`) allocates nothing. A global
//! allocator counts the allocations of this test binary (one test, so no other thread
//! allocates meanwhile).

use mbd::mjcf;
use mbd::model::{Cone, Solver};
use mbd::mujoco::collision::{collide_all, Collider, MjContact};
use mbd::mujoco::constraint::{make_constraint_into, Efc, Invweight, RowScratch};
use mbd::mujoco::forward::Forward;
use mbd::mujoco::solver::pgs::{solve_pgs_into, PgsScratch, PgsVariant};
use mbd::mujoco::solver::{cost, JacStorage, SolverResult};
use std::path::Path;

#[path = "common/counting.rs"]
mod counting;
use counting::count;

#[test]
fn a_second_call_allocates_nothing() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for scene in [
        "box_stack",
        "box_stack_10",
        "humanoid",
        "quadruped",
        "weld",
        "humanoid_CMU",
        "stacker",
        "manipulator",
        "finger",
        "ball_in_cup",
        "fish",
        "swimmer",
        "limits_friction",
    ] {
        let fx: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(format!("tests/fixtures/forward/{scene}.json"))).unwrap(),
        )
        .unwrap();
        let floats = |k: &str| -> Vec<f64> { fx[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect() };
        let (q, v) = (floats("qpos"), floats("qvel"));
        let base = mjcf::load(root.join(fx["model"].as_str().unwrap())).unwrap().model;
        for cone in [Cone::Pyramidal, Cone::Elliptic] {
            let mut model = base.clone();
            model.opt.cone = cone;
            model.opt.solver = Solver::Pgs;
            let zeros = vec![0.0; model.nv];
            // the whole pipeline, each solver with and without the noslip pass; PGS last, its
            // result is compared below
            for (solver, noslip) in [Solver::Newton, Solver::Cg, Solver::Pgs]
                .into_iter()
                .flat_map(|s| [(s, 5), (s, 0)])
            {
                let mut m = model.clone();
                m.opt.solver = solver;
                m.opt.noslip_iterations = noslip;
                let mut fw = Forward::new(&m).unwrap();
                fw.ctrl
                    .iter_mut()
                    .enumerate()
                    .for_each(|(k, c)| *c = 0.1 * (k as f64).sin());
                fw.forward(&q, &v, &zeros).unwrap();
                let first = fw.d.clone();
                let whole = count(|| fw.forward_with(&q, &v, &zeros).unwrap());
                assert_eq!(
                    fw.d.qacc, first.qacc,
                    "{scene} {cone:?} {solver:?} noslip {noslip}: the same qacc"
                );
                assert_eq!(
                    fw.d.efc_force, first.efc_force,
                    "{scene} {cone:?} {solver:?} noslip {noslip}: the same forces"
                );
                assert_eq!(
                    whole, 0,
                    "{scene} {cone:?} {solver:?} noslip {noslip}: Forward::forward_with allocated {whole} times"
                );
            }
            let mut fw = Forward::new(&model).unwrap();
            fw.forward(&q, &v, &zeros).unwrap();
            // the collision stage, twice into the same list
            let mut collider = Collider::new(&model).unwrap();
            let mut contacts = vec![];
            collider.collide_into(&model, &fw.d.data, &mut contacts).unwrap();
            assert_eq!(contacts, collide_all(&model, &fw.d.data).unwrap());
            // the same contacts as the pipeline's, whose rows' addresses are filled in
            let unaddressed = fw.d.contacts().iter().map(|c| MjContact {
                efc_address: None,
                ..c.clone()
            });
            assert!(
                contacts.iter().cloned().eq(unaddressed),
                "{scene} {cone:?}: the pipeline's contacts"
            );
            let collide = count(|| collider.collide_into(&model, &fw.d.data, &mut contacts).unwrap());
            assert_eq!(
                collide, 0,
                "{scene} {cone:?}: Collider::collide_into allocated {collide} times"
            );
            // the rows, twice into the same storage
            let inv = Invweight::new(&model).unwrap();
            let (mut efc, mut scratch) = (Efc::empty(model.nv), RowScratch::new(&model));
            let data = &fw.d.data;
            let contacts = collide_all(&model, data).unwrap();
            make_constraint_into(&model, data, &inv, &q, &v, contacts.clone(), &mut efc, &mut scratch).unwrap();
            let first = efc.clone();
            let again = contacts.clone();
            let rows = count(|| {
                make_constraint_into(&model, data, &inv, &q, &v, again, &mut efc, &mut scratch).unwrap();
            });
            assert_eq!(efc, first, "{scene} {cone:?}: the second call makes the same rows");
            assert_eq!(rows, 0, "{scene} {cone:?}: make_constraint_into allocated {rows} times");
            // PGS, twice into the same storage
            let d = &fw.d;
            let smooth = d.smooth(&model);
            let cones = cost::cones(&efc).unwrap();
            let storage = JacStorage::mujoco(model.nv);
            let (mut s, mut out) = (PgsScratch::without_cost(), SolverResult::default());
            let opts = &fw.options;
            let solve = |s: &mut PgsScratch, out: &mut SolverResult| {
                let v = PgsVariant::Accelerated;
                solve_pgs_into(&smooth, &efc, &cones, opts, v, storage, s, out).unwrap();
            };
            solve(&mut s, &mut out);
            let first = out.clone();
            let pgs = count(|| solve(&mut s, &mut out));
            assert_eq!(out, first, "{scene} {cone:?}: the second solve gives the same result");
            assert_eq!(out.efc_force, d.efc_force, "{scene} {cone:?}: the pipeline's forces");
            assert_eq!(pgs, 0, "{scene} {cone:?}: solve_pgs_into allocated {pgs} times");
        }
    }
    // every sensor type mbd reads, on a state of tests/fixtures/sensors.json with contacts and
    // wrenches on the bodies: the sensors, mj_rnePostConstraint (spatial tendons, welds,
    // connects), mj_subtreeVel and the rangefinders' rays allocate nothing either
    let fx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("tests/fixtures/sensors.json")).unwrap()).unwrap();
    let cases = fx["cases"].as_array().unwrap();
    let floats = |c: &serde_json::Value, k: &str| -> Vec<f64> {
        c[k].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()
    };
    for name in ["sensors", "quadruped", "dmc_humanoid"] {
        let c = cases
            .iter()
            .rev()
            .find(|c| c["name"] == name && !c["contacts"].as_array().unwrap().is_empty())
            .unwrap();
        let model = mbd::mujoco::load(root.join(c["model"].as_str().unwrap()))
            .unwrap()
            .model;
        assert!(!model.sensors.is_empty());
        let (q, v) = (floats(c, "qpos"), floats(c, "qvel"));
        let zeros = vec![0.0; model.nv];
        let mut fw = Forward::new(&model).unwrap();
        fw.ctrl.copy_from_slice(&floats(c, "ctrl"));
        fw.xfrc_applied = floats(c, "xfrc_applied")
            .chunks_exact(6)
            .map(|w| std::array::from_fn(|k| w[k]))
            .collect();
        fw.forward(&q, &v, &zeros).unwrap();
        let first = fw.d.sensordata.clone();
        let whole = count(|| fw.forward_with(&q, &v, &zeros).unwrap());
        assert_eq!(fw.d.sensordata, first, "{name}: the same sensordata");
        assert_eq!(
            whole, 0,
            "{name}: Forward::forward_with with sensors allocated {whole} times"
        );
    }
}
