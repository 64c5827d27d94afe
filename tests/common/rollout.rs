//! Rollouts against MuJoCo's: a model stepped from its reference state under a control law, its
//! `qpos` compared with a fixture's at every `every`-th step.

use mbd::model::{Integrator, Model};
use mbd::mujoco::integrator::{Simulator, State};

/// `max |a - b| / max(max |b|, 1)`.
pub fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |s, x| s.max(x.abs()));
    a.iter().zip(b).map(|(x, y)| (x - y).abs() / scale).fold(0.0, f64::max)
}

/// Steps `model` with the integrator named `integrator` from its reference state for `steps`
/// steps, each with `ctrl[j] = law(t, j)` at the step's start time `t`, and checks `qpos` after
/// every `every`-th step against `qpos[k]` to `tol` ([`rel`]).
pub fn check_rollout(
    model: &Model,
    integrator: &str,
    steps: usize,
    every: usize,
    qpos: &[Vec<f64>],
    law: impl Fn(f64, usize) -> f64,
    tol: f64,
) {
    let mut m = model.clone();
    m.opt.integrator = Integrator::parse(integrator).unwrap();
    let mut sim = Simulator::new(&m, State::reference(&m), m.opt.integrator).unwrap();
    let mut row = 0;
    for step in 1..=steps {
        let t = sim.state.time;
        for (j, c) in sim.state.ctrl.iter_mut().enumerate() {
            *c = law(t, j);
        }
        sim.step().unwrap();
        if step % every == 0 {
            let e = rel(&sim.state.qpos, &qpos[row]);
            assert!(e < tol, "{integrator}: qpos after step {step} off by {e:.2e}");
            row += 1;
        }
    }
    assert_eq!(row, qpos.len(), "{integrator}: every fixture row compared");
}
