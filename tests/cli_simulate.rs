//! `mbd simulate` with MuJoCo's four integrators, actuator controls (`--ctrl`, `--ctrl-file`),
//! keyframes, `--duration`, `--plot` and the progress bar's quiet cases: the rows equal the
//! library's simulator, and bad input ends with one `mbd:` line.

mod common;

use common::cli::*;
use mbd::model::Integrator;
use mbd::mujoco::integrator::{Simulator, State};
use std::fs;
use std::path::PathBuf;

fn idp() -> PathBuf {
    model("public/gymnasium/inverted_double_pendulum.xml")
}

/// Every integrator through the command equals the library's `Simulator` with the same
/// controls, bit for bit (both print shortest round-trip numbers), and the columns are named by
/// joint and actuator.
#[test]
fn simulate_with_each_integrator_and_constant_controls_matches_the_library() {
    let dir = scratch("integrators");
    let model = mbd::mjcf::load(idp()).unwrap().model;
    for (flag, integ) in [
        ("euler", Integrator::Euler),
        ("implicit", Integrator::Implicit),
        ("implicitfast", Integrator::ImplicitFast),
        ("rk4", Integrator::Rk4),
    ] {
        let out = dir.join(format!("{flag}.csv"));
        simulate(&idp(), &["--steps", "20", "--integrator", flag, "--ctrl", "0.05"], &out);
        let (header, rows) = read_csv(&out);
        assert_eq!(&header[..4], ["time", "slider.qpos", "hinge.qpos", "hinge2.qpos"]);
        // the pendulum's cart has a limited slider: the constraint columns come too
        assert!(header.ends_with(&[
            "energy_potential".into(),
            "energy_kinetic".into(),
            "ncon".into(),
            "nefc".into(),
            "solver_iterations".into(),
            "slide.ctrl".into(),
            "slide.force".into()
        ]));
        assert_eq!(rows.len(), 21);
        let mut state = State::reference(&model);
        state.ctrl = vec![0.05];
        let mut sim = Simulator::new(&model, state, integ).unwrap();
        for _ in 0..20 {
            sim.step().unwrap();
        }
        let last = rows.last().unwrap();
        assert_eq!(&last[1..4], &sim.state.qpos[..], "{flag}");
        assert_eq!(last[header.iter().position(|h| h == "slide.ctrl").unwrap()], 0.05);
    }
}

/// A control file is held from each row's time on; `--duration` counts steps from the
/// model's timestep; `--plot` writes an SVG with the chosen signals.
#[test]
fn control_file_duration_and_plot() {
    let dir = scratch("ctrl_file");
    let ctrl = dir.join("ctrl.csv");
    fs::write(&ctrl, "time,slide\n0,0.1\n0.05,-0.2\n").unwrap();
    let (out, svg) = (dir.join("run.csv"), dir.join("run.svg"));
    let args = [
        "--duration",
        "0.1",
        "--ctrl-file",
        s(&ctrl),
        "--plot",
        s(&svg),
        "--plot-vars",
        "qpos:hinge,energy,ctrl:slide",
    ];
    let o = simulate(&idp(), &args, &out);
    let (header, rows) = read_csv(&out);
    assert_eq!(rows.len(), 11, "0.1 s at 10 ms");
    let c = header.iter().position(|h| h == "slide.ctrl").unwrap();
    for r in &rows {
        let expected = if r[0] < 0.05 - 1e-9 { 0.1 } else { -0.2 };
        assert_eq!(r[c], expected, "t = {}", r[0]);
    }
    let svg = fs::read_to_string(&svg).unwrap();
    for label in ["hinge.qpos", "energy (J)", "slide.ctrl"] {
        assert!(svg.contains(label), "the figure lacks {label}");
    }
    // not a terminal: no progress bar, stderr empty
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_controls_and_plot_requests_are_one_line_errors() {
    let dir = scratch("errors");
    let m = idp();
    let m = m.to_str().unwrap();
    let out = dir.join("x.csv");
    let out = out.to_str().unwrap();
    let fails = |extra: &[&str], code: i32, needle: &str| {
        fails_with(&sim(m, &[&["--steps", "3"], extra].concat(), out), code, needle);
    };
    fails(&["--ctrl", "1,2"], 1, "1 actuators");
    fails(&["--ctrl", "x"], 2, "not a number");
    fails(&["--ctrl", "1", "--ctrl-file", "c.csv"], 2, "not both");
    fails(&["--duration", "1"], 2, "not both");
    let bad = dir.join("bad.csv");
    fs::write(&bad, "time,slide\n0,0.1\n0,0.2\n").unwrap();
    fails(&["--ctrl-file", s(&bad)], 1, "does not increase");
    fs::write(&bad, "time,a,b\n0,0.1,0\n").unwrap();
    fails(&["--ctrl-file", s(&bad)], 1, "1 control columns");
    let svg = dir.join("p.svg");
    fails(&["--plot", s(&svg), "--plot-vars", "qpos:elbow"], 1, "no such signal");
    fails(&["--plot-vars", "energy"], 2, "goes with --plot");
    fails(&["--plot", "p.png"], 2, "must end in .svg");
    fails(&["--key", "nope"], 1, "nope");
}

/// A model with contacts gets the columns `ncon`, `nefc` and `solver_iterations` after the
/// energies: the contacts, constraint rows and Newton iterations of the constrained forward
/// pass at each recorded state, equal to the library's at the same states; a model without
/// constraints has none of them.
#[test]
fn contact_models_report_ncon_nefc_and_solver_iterations() {
    let dir = scratch("ncon");
    let path = model("sphere_plane.xml");
    let out = dir.join("run.csv");
    simulate(&path, &["--steps", "300", "--every", "20"], &out);
    let (header, rows) = read_csv(&out);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let (ncon, nefc, iters) = (col("ncon"), col("nefc"), col("solver_iterations"));
    assert_eq!(ncon, col("energy_kinetic") + 1, "after the energies");
    let model = mbd::mjcf::load(&path).unwrap().model;
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator).unwrap();
    let mut seen_contact = false;
    for (r, row) in rows.iter().enumerate() {
        while sim.steps < 20 * r {
            sim.step().unwrap();
        }
        sim.forward().unwrap();
        let d = sim.forward_data().unwrap();
        assert_eq!(row[ncon], d.contacts().len() as f64, "row {r}");
        assert_eq!(row[nefc], d.efc.nefc() as f64, "row {r}");
        assert_eq!(row[iters], d.solver_niter as f64, "row {r}");
        seen_contact |= row[ncon] > 0.0;
        if row[ncon] > 0.0 {
            // a pyramidal sphere-plane contact: 4 rows, solved in at least one iteration
            assert_eq!(row[nefc], 4.0 * row[ncon], "row {r}");
            assert!(row[iters] >= 1.0, "row {r}");
        }
    }
    assert!(seen_contact, "the sphere must land within 0.6 s");
    simulate(&common::cli::model("chain_2.xml"), &["--steps", "2"], &out);
    let (header, _) = read_csv(&out);
    assert!(!header.iter().any(|h| h == "ncon"), "{header:?}");
}

/// `--save-state` writes the final state with the solver's warm start, and `--state` continues
/// from it: 60 steps, then 60 more from the saved file, end at the state of 120 steps in one
/// run of the library's simulator, bit for bit (the box stack: contacts in every step). The
/// same file without `qacc_warmstart` starts the continuation's first solve from zero and ends
/// elsewhere.
#[test]
fn a_saved_state_continues_the_run_with_its_warm_start() {
    let dir = scratch("save_state");
    let path = model("box_stack.xml");
    let (mid, end, out) = (dir.join("mid.json"), dir.join("end.json"), dir.join("run.csv"));
    let s = |p: &PathBuf| p.to_str().unwrap().to_string();
    simulate(&path, &["--steps", "60", "--save-state", &s(&mid), "--quiet"], &out);
    // 60 more steps from the state file `mid`, the final state saved to `end`
    let continue_run = || {
        simulate(
            &path,
            &[
                "--steps",
                "60",
                "--state",
                &s(&mid),
                "--save-state",
                &s(&end),
                "--quiet",
            ],
            &out,
        )
    };
    continue_run();
    let model = mbd::mjcf::load(&path).unwrap().model;
    let read = |p: &PathBuf| mbd::cli::state::read_state(p, &model).unwrap();
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator).unwrap();
    for _ in 0..120 {
        sim.step().unwrap();
    }
    let saved = read(&end);
    assert_eq!(saved, sim.state);
    assert!(saved.qacc_warmstart.iter().any(|&a| a != 0.0));
    // without the warm start the continuation is another one
    let mut text: serde_json::Value = serde_json::from_str(&fs::read_to_string(&mid).unwrap()).unwrap();
    text.as_object_mut().unwrap().remove("qacc_warmstart");
    fs::write(&mid, text.to_string()).unwrap();
    continue_run();
    assert_ne!(read(&end).qpos, sim.state.qpos);
    // the state file may not be the output, and must be a .json file
    let e = mbd(&sim_args(&path, &["--steps", "1", "--save-state", &s(&out)], &out));
    assert!(
        !e.status.success() && stderr(&e).contains("same file"),
        "{}",
        stderr(&e)
    );
    let txt = s(&dir.join("end.txt"));
    let e = mbd(&sim_args(&path, &["--steps", "1", "--save-state", &txt], &out));
    assert!(!e.status.success() && stderr(&e).contains(".json"), "{}", stderr(&e));
}

fn sim_args<'a>(model: &'a std::path::Path, extra: &[&'a str], out: &'a std::path::Path) -> Vec<&'a str> {
    sim(model.to_str().unwrap(), extra, out.to_str().unwrap())
}

/// A model with sensors gets one column per number of `sensordata`, after the actuators', with
/// the values of the library's sensors at each recorded state.
#[test]
fn sensors_are_columns() {
    let dir = scratch("sensors");
    let path = model("sensors.xml");
    let out = dir.join("run.csv");
    simulate(&path, &["--steps", "40", "--every", "10"], &out);
    let (header, rows) = read_csv(&out);
    let model = mbd::mujoco::load(&path).unwrap().model;
    let labels = mbd::mujoco::sensor::sensor_labels(&model);
    assert_eq!(labels.len(), 124, "sensors.xml writes 124 numbers");
    let first = header.len() - labels.len();
    assert_eq!(&header[first..], &labels[..]);
    assert_eq!(
        header[first - 1],
        "slide_vel.force",
        "after the last actuator's columns"
    );
    let mut sim = Simulator::new(&model, State::reference(&model), model.opt.integrator).unwrap();
    for (r, row) in rows.iter().enumerate() {
        while sim.steps < 10 * r {
            sim.step().unwrap();
        }
        sim.forward().unwrap();
        for (k, (a, b)) in row[first..].iter().zip(sim.sensordata()).enumerate() {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "row {r}, {}: {a} vs {b}",
                labels[k]
            );
        }
    }
}
