//! Actuator forces (MuJoCo's `mj_fwdActuation` without activation dynamics): for each actuator,
//! length `gear * L` and velocity `gear * Ldot` of its joint or tendon, force
//! `gain * input + bias` with `input = ctrl` (or `act` when it has dynamics), clamped to
//! `forcerange`, and `qfrc_actuator = sum moment^T force`.

use super::tendon::TendonState;
use crate::error::{check_vector, Error, Result};
use crate::model::{BiasType, DynType, GainType, Model, Transmission};

/// `qfrc_actuator` at controls `ctrl` (nu) and activations `act` (one per actuator with
/// dynamics, in actuator order). Controls are clamped to `ctrlrange` (MuJoCo's default
/// `clampctrl`), activations to `actrange`. Muscle gains and biases are an
/// [`Error::Unsupported`]. `ten` are the tendon lengths and moments at `q`
/// ([`tendon_kinematics`](super::tendon_kinematics)).
pub fn actuator_forces(
    model: &Model,
    ten: &TendonState,
    q: &[f64],
    qd: &[f64],
    ctrl: &[f64],
    act: &[f64],
) -> Result<Vec<f64>> {
    model.check_state(q, qd)?;
    let nu = model.actuators.len();
    check_vector("ctrl", ctrl, nu)?;
    let na = model.actuators.iter().filter(|a| a.dyntype != DynType::None).count();
    check_vector("act", act, na)?;
    let mut qfrc = vec![0.0; model.nv];
    let mut ia = 0;
    for (k, a) in model.actuators.iter().enumerate() {
        let g = a.gear[0];
        let (length, velocity) = match a.trn {
            Transmission::Joint(j) => (g * q[model.q_adr[j]], g * qd[model.v_adr[j]]),
            Transmission::Tendon(t) => {
                let row = ten.moment.row(t);
                (
                    g * ten.length[t],
                    g * (0..model.nv).map(|c| row[c] * qd[c]).sum::<f64>(),
                )
            }
        };
        let input = if a.dyntype == DynType::None {
            let c = ctrl[k];
            if a.ctrllimited {
                c.clamp(a.ctrlrange[0], a.ctrlrange[1])
            } else {
                c
            }
        } else {
            let x = act[ia];
            ia += 1;
            if a.actlimited {
                x.clamp(a.actrange[0], a.actrange[1])
            } else {
                x
            }
        };
        let unsupported = || Error::Unsupported {
            what: format!("actuator {k} ('{}')", a.name),
            why: "muscle gains and biases are not implemented".into(),
        };
        let gain = match a.gaintype {
            GainType::Fixed => a.gainprm[0],
            GainType::Affine => a.gainprm[0] + a.gainprm[1] * length + a.gainprm[2] * velocity,
            GainType::Muscle => return Err(unsupported()),
        };
        let bias = match a.biastype {
            BiasType::None => 0.0,
            BiasType::Affine => a.biasprm[0] + a.biasprm[1] * length + a.biasprm[2] * velocity,
            BiasType::Muscle => return Err(unsupported()),
        };
        let mut force = gain * input + bias;
        if a.forcelimited {
            force = force.clamp(a.forcerange[0], a.forcerange[1]);
        }
        match a.trn {
            Transmission::Joint(j) => qfrc[model.v_adr[j]] += g * force,
            Transmission::Tendon(t) => {
                for c in 0..model.nv {
                    qfrc[c] += g * ten.moment[(t, c)] * force;
                }
            }
        }
    }
    Ok(qfrc)
}
