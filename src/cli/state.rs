//! State files of the `mbd` command: JSON in MuJoCo's conventions,
//! `{"time": t, "qpos": [...], "qvel": [...], "act": [...], "ctrl": [...], "qfrc_applied": [...],
//! "qacc_warmstart": [...], "mocap_pos": [[x, y, z], ...], "mocap_quat": [[w, x, y, z], ...],
//! "xfrc_applied": [[fx, fy, fz, tx, ty, tz], ...], "eq_active": [true, false, ...]}`, each key
//! optional (0, `qpos0` and zeros otherwise, the mocap bodies at their default poses, the
//! equality constraints as the model's `active`; files written before `act`, `ctrl`, `time`,
//! `qacc_warmstart`, the mocap poses, `xfrc_applied` and `eq_active` existed read as before;
//! `qacc_warmstart` is the constraint solver's warm start, MuJoCo's, zeros as after
//! `mj_resetData`; `mocap_pos` and `mocap_quat` have one row per mocap body, `xfrc_applied` one
//! world force and torque at the centre of mass per body, the world's first, or the same numbers
//! in one flat list): quaternions (w, x, y, z), free-joint `qvel` = [world linear velocity of the
//! body origin, body-frame angular velocity].

use crate::error::{Error, Result};
use crate::model::Model;
pub use crate::mujoco::integrator::State;
use std::path::Path;

/// Reads a state file (see the module documentation) for `model` and checks it.
pub fn read_state(path: impl AsRef<Path>, model: &Model) -> Result<State> {
    let path = path.as_ref();
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::State(format!("cannot read {}: {e}", path.display())))?;
    parse_state(&text, model).map_err(|e| match e {
        Error::State(m) => Error::State(format!("{}: {m}", path.display())),
        other => other,
    })
}

/// Parses the JSON text of a state file for `model` and checks it. JSON has no NaN or infinity,
/// so a `null` entry (what many writers emit for them) is reported as such.
pub fn parse_state(text: &str, model: &Model) -> Result<State> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        let hint = if text.contains("NaN") || text.contains("Infinity") {
            " (JSON cannot carry NaN or infinity)"
        } else {
            ""
        };
        Error::State(format!("not valid JSON: {e}{hint}"))
    })?;
    let obj = value.as_object().ok_or_else(|| {
        Error::State("expected an object {\"qpos\": [...], \"qvel\": [...], \"qfrc_applied\": [...]}".into())
    })?;
    let mut state = State::reference(model);
    let (nu, na) = (model.actuators.len(), crate::dynamics::actuator_na(model));
    for (key, v) in obj {
        if key == "time" {
            state.time = v
                .as_f64()
                .filter(|t| t.is_finite())
                .ok_or_else(|| Error::State("time must be a finite number".into()))?;
            continue;
        }
        if key == "mocap_pos" {
            state.mocap_pos = rows(key, v, model.nmocap(), "mocap bodies")?;
            continue;
        }
        if key == "mocap_quat" {
            state.mocap_quat = rows(key, v, model.nmocap(), "mocap bodies")?;
            continue;
        }
        if key == "eq_active" {
            state.eq_active = flags(key, v, model.equality.len())?;
            continue;
        }
        if key == "xfrc_applied" {
            state.xfrc_applied = rows(key, v, model.mj_nbody(), "bodies, the world included")?;
            continue;
        }
        let (target, expected, size) = match key.as_str() {
            "qpos" => (&mut state.qpos, model.nq, "nq"),
            "qvel" => (&mut state.qvel, model.nv, "nv"),
            "act" => (&mut state.act, na, "na, the actuators with activation dynamics"),
            "ctrl" => (&mut state.ctrl, nu, "nu, the actuators"),
            "qfrc_applied" => (&mut state.qfrc_applied, model.nv, "nv"),
            "qacc_warmstart" => (&mut state.qacc_warmstart, model.nv, "nv"),
            other => {
                return Err(Error::State(format!(
                    "unknown key \"{other}\" (expected time, qpos, qvel, act, ctrl, qfrc_applied, qacc_warmstart, mocap_pos, mocap_quat, xfrc_applied, eq_active)"
                )));
            }
        };
        *target = number_list(key, v)?;
        if target.len() != expected {
            return Err(Error::State(format!(
                "{key} has {} entries, the model needs {expected} ({size})",
                target.len()
            )));
        }
    }
    state.check(model)?;
    Ok(state)
}

/// The JSON text of a state file for `state` (every key of the module documentation, in that
/// order; `qacc_warmstart` too, so that a run continued from the file warm-starts its first
/// solve as the uninterrupted run would). [`parse_state`] reads it back exactly (Rust's
/// shortest round-trip formatting of every number).
pub fn state_json(state: &State) -> String {
    serde_json::json!({
        "time": state.time,
        "qpos": state.qpos,
        "qvel": state.qvel,
        "act": state.act,
        "ctrl": state.ctrl,
        "qfrc_applied": state.qfrc_applied,
        "qacc_warmstart": state.qacc_warmstart,
        "mocap_pos": state.mocap_pos,
        "mocap_quat": state.mocap_quat,
        "xfrc_applied": state.xfrc_applied,
        "eq_active": state.eq_active,
    })
    .to_string()
}

/// `n` flags, each `true`/`false` or `1`/`0` (MuJoCo's `eq_active` is a byte).
fn flags(key: &str, v: &serde_json::Value, n: usize) -> Result<Vec<bool>> {
    let arr = v
        .as_array()
        .ok_or_else(|| Error::State(format!("{key} must be a list of true/false")))?;
    let out = arr
        .iter()
        .enumerate()
        .map(|(i, x)| match (x.as_bool(), x.as_f64()) {
            (Some(b), _) => Ok(b),
            (None, Some(f)) if f == 0.0 || f == 1.0 => Ok(f == 1.0),
            _ => Err(Error::State(format!("{key}[{i}] must be true, false, 1 or 0"))),
        })
        .collect::<Result<Vec<bool>>>()?;
    if out.len() != n {
        return Err(Error::State(format!(
            "{key} has {} entries, the model has {n} equality constraints",
            out.len()
        )));
    }
    Ok(out)
}

/// `n` rows of `N` numbers: a list of `n` lists of `N` numbers, or one flat list of `n N`.
fn rows<const N: usize>(key: &str, v: &serde_json::Value, n: usize, what: &str) -> Result<Vec<[f64; N]>> {
    let nested = v.as_array().is_some_and(|a| a.iter().any(|x| x.is_array()));
    let flat = if nested {
        let mut out = vec![];
        for (i, row) in v.as_array().into_iter().flatten().enumerate() {
            let r = number_list(&format!("{key}[{i}]"), row)?;
            if r.len() != N {
                return Err(Error::State(format!(
                    "{key}[{i}] has {} entries, expected {N}",
                    r.len()
                )));
            }
            out.extend(r);
        }
        out
    } else {
        number_list(key, v)?
    };
    if flat.len() != n * N {
        return Err(Error::State(format!(
            "{key} has {} numbers, the model needs {} ({n} {what} x {N})",
            flat.len(),
            n * N
        )));
    }
    Ok(flat.chunks_exact(N).map(|c| std::array::from_fn(|k| c[k])).collect())
}

fn number_list(key: &str, v: &serde_json::Value) -> Result<Vec<f64>> {
    let arr = v
        .as_array()
        .ok_or_else(|| Error::State(format!("{key} must be a list of numbers")))?;
    arr.iter()
        .enumerate()
        .map(|(i, x)| match x {
            serde_json::Value::Number(n) => n
                .as_f64()
                .filter(|f| f.is_finite())
                .ok_or_else(|| Error::State(format!("{key}[{i}] = {n} is not a finite number"))),
            serde_json::Value::Null => Err(Error::State(format!(
                "{key}[{i}] is null (JSON cannot carry NaN or infinity; give finite numbers)"
            ))),
            other => Err(Error::State(format!("{key}[{i}] = {other} is not a number"))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::canned;

    #[test]
    fn state_files_are_checked() {
        let model = canned::chain(2, false);
        assert!(parse_state(r#"{"qpos": [0.1, 0.2]}"#, &model).is_ok());
        for (text, needle) in [
            (r#"{"qpos": [0.1]}"#, "qpos has 1 entries"),
            (r#"{"qpos": [0.1, null]}"#, "qpos[1] is null"),
            (r#"{"qvel": [0.1, NaN]}"#, "not valid JSON"),
            (r#"{"qvel": [0.1, "x"]}"#, "is not a number"),
            (r#"{"qpso": [0.1, 0.2]}"#, "unknown key"),
            (r#"[1, 2]"#, "expected an object"),
            (r#"{"qfrc_applied": [1, 1e999]}"#, "JSON"),
        ] {
            let e = parse_state(text, &model).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        let ball = canned::floating_base_ball_arms();
        let mut q = ball.qpos0.as_slice().to_vec();
        q[3..7].copy_from_slice(&[0.0; 4]);
        let text = serde_json::json!({ "qpos": q }).to_string();
        assert!(matches!(parse_state(&text, &ball), Err(Error::BadQuaternion { .. })));
        // controls: a model with one actuator and one activation
        let xml = r#"<mujoco><worldbody><body><joint name="x" type="slide"/><geom size="0.1" mass="1"/></body></worldbody>
            <actuator><motor joint="x"/><general joint="x" dyntype="filter" dynprm="0.1"/></actuator></mujoco>"#;
        let m = crate::mjcf::load_str(xml).unwrap().model;
        let s = parse_state(r#"{"ctrl": [0.5, -1], "act": [0.25], "time": 2}"#, &m).unwrap();
        assert_eq!((s.ctrl, s.act, s.time), (vec![0.5, -1.0], vec![0.25], 2.0));
        let e = parse_state(r#"{"act": [0.25, 1]}"#, &m).unwrap_err().to_string();
        assert!(e.contains("act has 2 entries") && e.contains("na"), "{e}");
    }

    #[test]
    fn state_files_round_trip_with_the_warm_start() {
        // every field, the warm start included, comes back bit for bit; a file without
        // qacc_warmstart reads as zeros (mj_resetData's), one with the wrong length is refused
        let model = canned::chain(3, false);
        let mut s = State::reference(&model);
        s.time = 0.1 + 0.2;
        s.qpos = vec![0.1, -1.0 / 3.0, 2.0f64.sqrt()];
        s.qvel = vec![1e-300, -7.25, 0.0];
        s.qfrc_applied = vec![0.5, 0.0, -0.125];
        s.qacc_warmstart = vec![-9.81, 1.0 / 7.0, 3e-17];
        let text = state_json(&s);
        assert!(text.contains("qacc_warmstart"), "{text}");
        assert_eq!(parse_state(&text, &model).unwrap(), s);
        let old = parse_state(r#"{"qpos": [0.1, 0.2, 0.3]}"#, &model).unwrap();
        assert_eq!(old.qacc_warmstart, vec![0.0; 3]);
        let e = parse_state(r#"{"qacc_warmstart": [1, 2]}"#, &model)
            .unwrap_err()
            .to_string();
        assert!(e.contains("qacc_warmstart has 2 entries"), "{e}");
    }
    #[test]
    fn state_files_carry_wrenches_and_active_equalities() {
        // xfrc_applied (one wrench per body, the world first) and eq_active round-trip; wrong
        // counts and bad flags are one-line errors
        let xml = r#"<mujoco><worldbody><body name="a"><freejoint/><geom size="0.1"/></body>
            <body name="b" pos="1 0 0"><freejoint/><geom size="0.1"/></body></worldbody>
            <equality><weld body1="a" body2="b" active="false"/><connect body1="a" anchor="0 0 0"/></equality></mujoco>"#;
        let m = crate::mjcf::load_str(xml).unwrap().model;
        let mut s = State::reference(&m);
        assert_eq!(s.eq_active, vec![false, true]);
        s.xfrc_applied[1] = [1.0, -2.0, 0.5, 0.0, 0.25, -1.0 / 3.0];
        s.eq_active = vec![true, false];
        let text = state_json(&s);
        assert_eq!(parse_state(&text, &m).unwrap(), s);
        let flat = parse_state(
            r#"{"xfrc_applied": [0,0,0,0,0,0, 1,2,3,4,5,6, 0,0,0,0,0,0], "eq_active": [1, 0]}"#,
            &m,
        )
        .unwrap();
        assert_eq!(flat.xfrc_applied[1], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(flat.eq_active, vec![true, false]);
        for (text, needle) in [
            (
                r#"{"xfrc_applied": [[1, 2, 3, 4, 5, 6]]}"#,
                "3 bodies, the world included",
            ),
            (r#"{"eq_active": [true]}"#, "eq_active has 1 entries, the model has 2"),
            (
                r#"{"eq_active": [true, 2]}"#,
                "eq_active[1] must be true, false, 1 or 0",
            ),
        ] {
            let e = parse_state(text, &m).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }
}
