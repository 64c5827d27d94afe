//! The `mbd` command: `inspect` and `simulate` give the library's numbers (and MuJoCo's), and
//! every bad input ends with one line on stderr starting with `mbd:`, a non-zero exit code and no
//! panic.

mod common;

use common::cli::*;
use mbd::mjcf;
use std::fs;
use std::path::Path;
use std::process::Command;

#[test]
fn help_lists_the_commands() {
    let o = mbd(&["--help"]);
    assert!(o.status.success());
    let text = stdout(&o);
    for cmd in ["mbd book", "mbd inspect", "mbd simulate"] {
        assert!(text.contains(cmd), "--help does not mention {cmd}");
    }
    fails(&[], 2);
    fails(&["frobnicate"], 2);
}

#[test]
fn inspect_gives_the_library_mass_matrix() {
    let path = model("chain_7_spatial.xml");
    let out = json(&mbd(&["inspect", path.to_str().unwrap(), "--json", "--dense"]));
    let lib = mjcf::load(&path).unwrap().model;
    let sizes = &out["sizes"];
    assert_eq!(sizes["nq"], 7);
    assert_eq!(sizes["nv"], 7);
    assert_eq!(sizes["nbody"], 8);
    assert_eq!(out["body_parentid"], serde_json::json!([0, 0, 1, 2, 3, 4, 5, 6]));
    assert_eq!(out["dof_parentid"], serde_json::json!([-1, 0, 1, 2, 3, 4, 5]));
    let m = matrix_of(&out["M"]);
    let h = mbd::dynamics::crba(&lib, lib.qpos0.as_slice()).unwrap();
    assert_eq!(m.len(), 7);
    for r in 0..7 {
        for c in 0..7 {
            assert!(
                (m[r][c] - m[c][r]).abs() <= 1e-12 * m[r][r].abs().max(1.0),
                "M not symmetric at {r},{c}"
            );
            // MuJoCo's route (mj_crb) against Featherstone's CRBA: equal up to round-off.
            assert!(
                (m[r][c] - h[(r, c)]).abs() <= 1e-12 * h.amax(),
                "M[{r}][{c}] differs from the library's CRBA"
            );
        }
    }
    // Without --json: a summary, not JSON.
    let o = mbd(&["inspect", path.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("nq 7, nv 7"), "{}", stdout(&o));
}

#[test]
fn inspect_at_a_state_satisfies_the_equation_of_motion() {
    // qacc_smooth (from ABA) must satisfy RNEA(q, v, qacc_smooth) = qfrc_passive + qfrc_applied,
    // an independent route through the library.
    let dir = scratch("state_eom");
    let path = model("floating.xml");
    let lib = mjcf::load(&path).unwrap().model;
    let mut qpos = lib.qpos0.as_slice().to_vec();
    qpos[3..7].copy_from_slice(&[0.9, 0.1, -0.3, 0.2]); // not unit: the command must cope
    let qvel: Vec<f64> = (0..lib.nv).map(|k| 0.3 * ((k as f64) * 1.7).sin()).collect();
    let applied: Vec<f64> = (0..lib.nv).map(|k| 0.5 * ((k as f64) * 0.9).cos()).collect();
    let state = dir.join("state.json");
    fs::write(
        &state,
        serde_json::json!({"qpos": qpos, "qvel": qvel, "qfrc_applied": applied}).to_string(),
    )
    .unwrap();
    let out = json(&mbd(&[
        "inspect",
        path.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
        "--json",
    ]));
    let qacc = vec_of(&out["qacc_smooth"]);
    let passive = vec_of(&out["qfrc_passive"]);
    let tau = mbd::dynamics::rnea(&lib, &qpos, &qvel, &qacc, None).unwrap();
    for k in 0..lib.nv {
        let want = passive[k] + applied[k];
        assert!(
            (tau[k] - want).abs() < 1e-9 * (1.0 + want.abs()),
            "dof {k}: {} vs {want}",
            tau[k]
        );
    }
    let (xpos, xquat) = (matrix_of(&out["xpos"]), matrix_of(&out["xquat"]));
    assert_eq!(xpos.len(), out["sizes"]["nbody"].as_u64().unwrap() as usize);
    assert_eq!(xquat[0], vec![1.0, 0.0, 0.0, 0.0]);
    assert_eq!(xpos[1], qpos[0..3].to_vec()); // free body: xpos is the free joint's position
}

#[test]
fn bad_inputs_give_one_line_and_a_nonzero_exit() {
    let dir = scratch("bad_inputs");
    let chain = model("chain_2.xml");
    let chain = chain.to_str().unwrap();
    let floating = model("floating.xml");
    let floating = floating.to_str().unwrap();

    // Model files.
    let missing = dir.join("nothere.xml");
    let e = fails(&["inspect", missing.to_str().unwrap(), "--json"], 1);
    assert!(e.contains("nothere.xml"), "{e}");
    let broken = dir.join("broken.xml");
    fs::write(&broken, "<mujoco><worldbody><body name=\"a\"></worldbody>").unwrap();
    fails(&["inspect", broken.to_str().unwrap(), "--json"], 1);
    let not_mjcf = dir.join("not_mjcf.xml");
    fs::write(&not_mjcf, "this is not XML at all").unwrap();
    fails(&["inspect", not_mjcf.to_str().unwrap()], 1);

    // State files.
    let cases: &[(&str, &str, &str, &str)] = &[
        ("malformed", chain, "{\"qpos\": [0.1, ", "JSON"),
        ("nan_token", chain, "{\"qpos\": [0.1, NaN]}", "NaN"),
        ("null_entry", chain, "{\"qvel\": [0.1, null]}", "qvel[1] is null"),
        ("string_entry", chain, "{\"qvel\": [0.1, \"fast\"]}", "qvel[1]"),
        ("too_long", chain, "{\"qpos\": [0.1, 0.2, 0.3]}", "qpos has 3 entries"),
        (
            "too_short",
            chain,
            "{\"qfrc_applied\": [1.0]}",
            "qfrc_applied has 1 entries",
        ),
        ("overflow", chain, "{\"qpos\": [0.1, 1e999]}", "JSON"),
        ("unknown_key", chain, "{\"q\": [0.1, 0.2]}", "unknown key"),
        ("not_object", chain, "[0.1, 0.2]", "object"),
        (
            "zero_quaternion",
            floating,
            "{\"qpos\": [0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]}",
            "quaternion",
        ),
    ];
    for (name, model_path, text, needle) in cases {
        let state = dir.join(format!("{name}.json"));
        fs::write(&state, text).unwrap();
        let e = fails(
            &["inspect", model_path, "--state", state.to_str().unwrap(), "--json"],
            1,
        );
        assert!(e.contains(needle), "{name}: {e}");
        let out = dir.join(format!("{name}.csv"));
        fails(&sim(model_path, &["--steps", "3", "--state", s(&state)], s(&out)), 1);
        assert!(!out.exists(), "{name}: a file was written despite the error");
    }
    let unreadable = dir.join("no_state.json");
    let e = fails(&["inspect", chain, "--state", unreadable.to_str().unwrap()], 1);
    assert!(e.contains("no_state.json"), "{e}");

    // Command lines (exit code 2).
    let out = dir.join("out.csv");
    let out = out.to_str().unwrap();
    fails(&["inspect"], 2);
    fails(&["inspect", chain, "--frobnicate"], 2);
    fails(&["inspect", chain, "--state"], 2);
    fails(&sim(chain, &[], out), 2);
    fails(&sim(chain, &["--steps", "-3"], out), 2);
    fails(&["simulate", chain, "--steps", "3"], 2);
    fails(&sim(chain, &["--steps", "3"], "x.txt"), 2);
    fails(&sim(chain, &["--steps", "3", "--integrator", "leapfrog"], out), 2);
    if !cfg!(feature = "book") {
        let e = fails(&["book"], 2);
        assert!(e.contains("--features book"), "{e}");
    }
}

/// Models with contacts and equality constraints simulate: the box stack stays stacked (each
/// box rests on the one below, at its settled height within the soft contacts' penetration),
/// the four-bar moves and keeps its loop closed.
#[test]
fn simulate_runs_models_with_contacts_and_loops() {
    let dir = scratch("constraints");
    let out = dir.join("t.csv");
    simulate(&model("box_stack.xml"), &["--steps", "500", "--every", "500"], &out);
    // columns: time, then qpos (7 per free joint: x, y, z, quaternion)
    let (_, rows) = read_csv(&out);
    let z = |b: usize| rows.last().unwrap()[1 + 7 * b + 2];
    for b in 0..3 {
        let want = 0.1 + 0.2 * b as f64;
        assert!((z(b) - want).abs() < 2e-3, "box {b} at z = {}", z(b));
    }
    simulate(&model("fourbar.xml"), &["--steps", "200", "--every", "200"], &out);
    let (_, rows) = read_csv(&out);
    assert!(rows.last().unwrap()[1].abs() > 1e-2, "the four-bar does not move");
}

#[test]
fn rk4_conserves_the_energy_of_an_undamped_double_pendulum() {
    // chain_2: two hinges, no damping, no applied force. Released from rest at (1.0, -0.5) rad,
    // 500 steps of 2 ms = 1 s. RK4's local error is O(h^5): the total energy may drift by at
    // most 1e-6 J (about 1e-7 of the energy scale, |E| ~ 10 J); semi-implicit Euler, first
    // order, must do visibly worse (> 1e-4 J), which shows the check can fail.
    let dir = scratch("energy");
    let state = dir.join("state.json");
    fs::write(&state, r#"{"qpos": [1.0, -0.5]}"#).unwrap();
    let drift = |integrator: &str| {
        let out = dir.join(format!("{integrator}.csv"));
        let args = ["--steps", "500", "--integrator", integrator, "--state", s(&state)];
        simulate(&model("chain_2.xml"), &args, &out);
        let (header, rows) = read_csv(&out);
        assert_eq!(header.len(), 1 + 2 + 2 + 2);
        assert_eq!(header[0], "time");
        assert_eq!(rows.len(), 501);
        assert!((rows[500][0] - 1.0).abs() < 1e-12, "final time {}", rows[500][0]);
        assert_eq!(rows[0][1..3], [1.0, -0.5]);
        let total: Vec<f64> = rows.iter().map(|r| r[5] + r[6]).collect();
        assert!(total[0].abs() > 1.0);
        total.iter().map(|e| (e - total[0]).abs()).fold(0.0, f64::max)
    };
    let rk4 = drift("rk4");
    assert!(rk4 < 1e-6, "RK4 energy drift {rk4} J");
    let euler = drift("euler");
    assert!(euler > 1e-4, "Euler energy drift {euler} J is suspiciously small");
}

/// MuJoCo 4.0.0's state after 200 steps (0.4 s) of floating.xml from qpos0 with the qvel below,
/// made by `/tmp/peers/bin/python tools/peers/rollout.py tests/fixtures/models/floating.xml
/// --qvel <QVEL> --steps 200 --integrator I` (I = RK4, Euler; venv of `tools/peers/setup.sh`).
const QVEL0: [f64; 16] = [
    0.1, -0.2, 0.3, 1.0, -2.0, 0.5, 0.3, -0.4, 0.2, 0.5, 0.1, -0.3, 0.4, -0.6, 0.7, 0.2,
];
const MUJOCO_RK4: &str = r#"{"qpos": [0.14849759724018918, -0.26733575333939946, 0.3166161374916594, 0.9654527470318082, 0.22847072585810851, -0.11886824027901169, -0.03965428258806978, 0.9921025564639424, -0.004379172284100617, 0.08316220257191069, -0.09379439413528899, 0.19706205501113275, 0.9961414960781138, 0.08775491400608025, 0.001090737068425082, -7.177528007312956e-05, -0.43123672298392357, 0.09540810422156511, 0.28181292281585296], "qvel": [0.14176094853934082, -0.12293218932075221, -3.690381586534854, 1.0391568706502985, -2.723438477804905, -0.028289454804070024, -0.41872303634173724, 0.9894152376300733, -0.920626631176781, 0.6629930489403176, 0.6049129718751599, 0.20252160805511515, -0.64822249114568, -1.3014745361245403, -0.24119324779333898, 1.2625557409902644]}"#;
const MUJOCO_EULER: &str = r#"{"qpos": [0.14850963627180525, -0.2672885826948084, 0.3125539633305095, 0.9652817284240693, 0.22871495946441042, -0.11969792202515742, -0.03991315009736783, 0.9919218125687129, -0.004857289782923973, 0.08407208588274966, -0.09486521418142235, 0.19719091001049893, 0.9960821081602024, 0.08841494247683815, 0.0016629124496161734, -0.0006829876490484908, -0.4320169789615376, 0.09418332294462746, 0.2823503423082905], "qvel": [0.14174051671312707, -0.1228826937267249, -3.6907257686674098, 1.0413258441891404, -2.7275375536244897, -0.028731569019873213, -0.4217463101916105, 0.991007366491532, -0.9259443512399821, 0.663407413881751, 0.6118465039238283, 0.20498000938642916, -0.6519880345006175, -1.3038628035999131, -0.24417880561899855, 1.2621417612795423]}"#;

#[test]
fn simulate_matches_mujoco_on_a_floating_base_tree() {
    // Free joint, two ball joints, hinges and a slide: the RK4 case exercises the Munthe-Kaas
    // correction on rotations; without it the two differ by ~3e-2 in qpos here. Round-off
    // accumulated over 200 steps stays below 1e-9.
    let dir = scratch("mujoco");
    let state = dir.join("state.json");
    fs::write(&state, serde_json::json!({ "qvel": QVEL0 }).to_string()).unwrap();
    for (integrator, reference) in [("rk4", MUJOCO_RK4), ("euler", MUJOCO_EULER)] {
        let out = dir.join(format!("{integrator}.json"));
        let args = ["--steps", "200", "--integrator", integrator, "--state", s(&state)];
        simulate(&model("floating.xml"), &args, &out);
        let traj: serde_json::Value = serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
        let reference: serde_json::Value = serde_json::from_str(reference).unwrap();
        let columns: Vec<&str> = traj["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let last = vec_of(&traj["rows"][200]);
        for key in ["qpos", "qvel"] {
            let ours: Vec<f64> = columns
                .iter()
                .zip(&last)
                .filter(|(c, _)| c.contains(&format!(".{key}")))
                .map(|(_, x)| *x)
                .collect();
            let theirs = vec_of(&reference[key]);
            let err = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
            assert!(err < 1e-9, "{integrator} {key}: max |mbd - MuJoCo| = {err}");
        }
    }
}

/// Flattens nested JSON arrays of numbers.
fn flat(v: &serde_json::Value) -> Vec<f64> {
    match v {
        serde_json::Value::Array(a) => a.iter().flat_map(flat).collect(),
        x => vec![x.as_f64().expect("number")],
    }
}

/// `mbd inspect --json` reports MuJoCo's com-based quantities and sparse factor: they equal the
/// MuJoCo 4.0 fixtures (tests/fixtures/peers, made by make_peer_fixtures.py) to 1e-9 relative,
/// max|ours - ref| / max(1, max|ref|).
#[test]
fn inspect_reports_the_com_based_quantities_of_mujoco() {
    for name in ["floating", "panda", "tree_5"] {
        let fixture: serde_json::Value = serde_json::from_str(
            &fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/peers/{name}.json")),
            )
            .unwrap(),
        )
        .unwrap();
        let st = &fixture["states"][1];
        let dir = scratch(&format!("com_{name}"));
        let state = dir.join("state.json");
        let body = serde_json::json!({"qpos": st["qpos"], "qvel": st["qvel"], "qfrc_applied": st["qfrc_applied"]});
        fs::write(&state, body.to_string()).unwrap();
        let model_path = model(&format!("{name}.xml"));
        let out = json(&mbd(&[
            "inspect",
            model_path.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
            "--json",
            "--dense",
        ]));
        for (ours, theirs) in [
            ("subtree_com", "subtree_com"),
            ("cinert", "cinert"),
            ("crb", "crb"),
            ("cdof", "cdof"),
            ("cdof_dot", "cdof_dot"),
            ("cvel", "cvel"),
            ("qLDiagInv", "qLDiagInv"),
            ("qLD_L_dense", "qLD_L_dense"),
            ("qLD_D", "qLD_D"),
            ("M", "M_dense"),
        ] {
            let (a, b) = (flat(&out[ours]), flat(&st[theirs]));
            assert_eq!(a.len(), b.len(), "{name} {ours}: length");
            let scale = b.iter().fold(1.0f64, |m, x| m.max(x.abs()));
            let err = a.iter().zip(&b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale;
            assert!(err <= 1e-9, "{name} {ours}: relative error {err:.3e}");
        }
        // the legacy qM rebuilt through dof_Madr and dof_parentid is MuJoCo's dense M
        let madr: Vec<usize> = flat(&out["dof_Madr"]).iter().map(|&x| x as usize).collect();
        let parent: Vec<i64> = flat(&out["dof_parentid"]).iter().map(|&x| x as i64).collect();
        let qm = flat(&out["qM"]);
        let m_ref = matrix_of(&st["M_dense"]);
        for i in 0..madr.len() {
            assert!((qm[madr[i]] - m_ref[i][i]).abs() <= 1e-9 * m_ref[i][i].abs().max(1.0));
            let (mut j, mut k) = (parent[i], 1);
            while j >= 0 {
                assert!(
                    (qm[madr[i] + k] - m_ref[i][j as usize]).abs() <= 1e-9,
                    "{name}: qM({i}, {j})"
                );
                j = parent[j as usize];
                k += 1;
            }
        }
    }
}

/// Models with `connect`/`weld` equalities get the loop report of Featherstone 8.10: the planar
/// four-bar closed by one ball-like connect has 3 rows of rank 2 (overconstrained), mobility 1.
#[test]
fn inspect_reports_rank_and_mobility_of_equality_loops() {
    let out = json(&mbd(&["inspect", model("fourbar.xml").to_str().unwrap(), "--json"]));
    let l = &out["loops"];
    assert_eq!(
        (l["nc"].as_u64(), l["rank"].as_u64(), l["mobility"].as_u64()),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(l["overconstrained"].as_bool(), Some(true));
    let out = json(&mbd(&["inspect", model("weld.xml").to_str().unwrap(), "--json"]));
    assert_eq!(out["loops"]["rank"].as_u64(), Some(12));
    assert_eq!(out["loops"]["properly_constrained"].as_bool(), Some(true));
    let out = json(&mbd(&[
        "inspect",
        model("chain_7_spatial.xml").to_str().unwrap(),
        "--json",
    ]));
    assert!(out["loops"].is_null());
}

/// `--out -` streams CSV to standard output; `--every K` keeps every K-th step and the last; the
/// columns are named by joint.
#[test]
fn simulate_streams_to_stdout_and_thins_with_every() {
    let chain = model("chain_2.xml");
    let o = ok(mbd(&sim(s(&chain), &["--steps", "10", "--every", "4"], "-")));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    // header + steps 0, 4, 8 and the last (10)
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[0].starts_with("time,") && lines[0].contains(".qpos") && lines[0].ends_with("energy_kinetic"));
    let times: Vec<f64> = lines[1..]
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    let h = times[1] / 4.0;
    for (t, k) in times.iter().zip([0.0, 4.0, 8.0, 10.0]) {
        assert!((t - k * h).abs() < 1e-12, "{times:?}");
    }
    fails(&sim(s(&chain), &["--steps", "3", "--every", "0"], "-"), 2);
}

/// The output may not be an input; an older output is removed before a run that then fails, so
/// no stale file looks like a result.
#[test]
fn simulate_protects_inputs_and_leaves_no_stale_output() {
    let dir = scratch("protect");
    let chain = dir.join("chain_2.xml");
    fs::copy(model("chain_2.xml"), &chain).unwrap();
    let state = dir.join("state.json");
    fs::write(&state, r#"{"qpos": [0.1, 0.2]}"#).unwrap();
    let before = fs::read_to_string(&chain).unwrap();
    // the model renamed to .csv through a symlink-free copy of its path
    let e = fails(&sim(s(&chain), &["--steps", "3"], s(&chain)), 2);
    assert!(e.contains("csv") || e.contains("input"), "{e}");
    let model_as_csv = dir.join("model.csv");
    fs::copy(&chain, &model_as_csv).unwrap();
    let e = fails(&sim(s(&model_as_csv), &["--steps", "3"], s(&model_as_csv)), 1);
    assert!(e.contains("is an input"), "{e}");
    assert_eq!(fs::read_to_string(&chain).unwrap(), before);
    // a stale result is removed when the next run fails
    let out = dir.join("out.csv");
    fs::write(&out, "time\n0\n").unwrap();
    let bad_state = dir.join("bad.json");
    fs::write(&bad_state, r#"{"qpos": [0.1]}"#).unwrap();
    fails(&sim(s(&chain), &["--steps", "3", "--state", s(&bad_state)], s(&out)), 1);
    assert!(!out.exists(), "a stale output survived a failed run");
}

/// A diverging run stops with one line naming the step and time, and keeps the rows written.
#[test]
fn simulate_divergence_keeps_rows_and_names_the_step() {
    let dir = scratch("diverge");
    let state = dir.join("state.json");
    fs::write(&state, r#"{"qvel": [3e9, -3e9]}"#).unwrap();
    let out = dir.join("out.csv");
    let args = ["--steps", "100000", "--state", s(&state)];
    let e = fails(&sim(s(&model("chain_2.xml")), &args, s(&out)), 1);
    assert!(e.contains("diverged at step") && e.contains("t = "), "{e}");
    let text = fs::read_to_string(&out).unwrap();
    assert!(text.lines().count() >= 2, "no rows kept: {text}");
}

/// Writing into a closed pipe ends quietly; writing to a full device is a one-line failure.
#[test]
fn stdout_errors_are_handled() {
    use std::process::Stdio;
    let mut child = Command::new(MBD)
        .args([
            "simulate",
            model("chain_2.xml").to_str().unwrap(),
            "--steps",
            "200000",
            "--out",
            "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // read one line, then close the pipe
    {
        use std::io::{BufRead, BufReader};
        let mut r = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with("time"));
    }
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    if Path::new("/dev/full").exists() {
        let full = fs::File::create("/dev/full").unwrap();
        let o = Command::new(MBD).arg("--help").stdout(full).output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).starts_with("mbd: cannot write"), "{}", stderr(&o));
    }
}

/// A public model: `mbd inspect` prints its body and joint names; `--key` reads a keyframe.
#[test]
fn inspect_prints_names_of_a_public_model_and_reads_keyframes() {
    let hopper = model("public/gymnasium/hopper.xml");
    let o = mbd(&["inspect", hopper.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("world, torso, thigh, leg, foot"), "{out}");
    assert!(
        out.contains("rootx, rootz, rooty, thigh_joint, leg_joint, foot_joint"),
        "{out}"
    );

    let dir = scratch("keyframe");
    let file = dir.join("key.xml");
    fs::write(
        &file,
        "<mujoco><worldbody><body><joint name=\"j\"/><geom size=\"0.1\"/></body></worldbody>\
         <keyframe><key name=\"tilted\" qpos=\"0.25\" qvel=\"1\"/></keyframe></mujoco>",
    )
    .unwrap();
    let o = mbd(&["inspect", file.to_str().unwrap(), "--key", "tilted", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["qpos"][0].as_f64(), Some(0.25));
    assert_eq!(v["qvel"][0].as_f64(), Some(1.0));
    let err = fails(&["inspect", file.to_str().unwrap(), "--key", "nope"], 1);
    assert!(err.contains("keyframe") && err.contains("nope"), "{err}");
}

/// `--engine spook` steps the same MJCF model in maximal coordinates: each body's x, rho, nu,
/// omega are the columns, the joint constraints stay satisfied (SPOOK's `violation` signal
/// small), and bad SPOOK parameters are one-line errors.
#[test]
fn simulate_with_the_spook_engine() {
    let chain = model("chain_2.xml");
    let chain = s(&chain);
    let o = ok(mbd(&sim(chain, &["--steps", "100", "--engine", "spook"], "-")));
    let text = stdout(&o);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert!(header.iter().any(|c| c.ends_with(".rho[0]")) && header.iter().any(|c| c.ends_with(".omega[2]")));
    let vcol = header.iter().position(|c| *c == "violation").expect("violation column");
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 101);
    let worst = rows.iter().map(|r| r[vcol].abs()).fold(0.0, f64::max);
    assert!(worst < 1e-3, "SPOOK constraint violation {worst}");
    fails(&sim(chain, &["--steps", "3", "--epsilon", "1e-6"], "-"), 2);
    fails(
        &sim(chain, &["--steps", "3", "--engine", "spook", "--epsilon", "-1"], "-"),
        1,
    );
    fails(&sim(chain, &["--steps", "3", "--engine", "bullet"], "-"), 2);
}

/// `mbd inspect` with solver options: the constrained part of `mj_forward` (contacts, rows,
/// forces, qacc) at a settled state of `box_stack`, against MuJoCo's numbers
/// (tests/fixtures/forward/box_stack.json), for each solver and cone.
#[test]
fn inspect_reports_the_constrained_forward_of_mujoco() {
    let fixture: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forward/box_stack.json"))
            .unwrap(),
    )
    .unwrap();
    let dir = scratch("inspect_constrained");
    let state = dir.join("state.json");
    fs::write(
        &state,
        serde_json::json!({"qpos": fixture["qpos"], "qvel": fixture["qvel"]}).to_string(),
    )
    .unwrap();
    let path = model("box_stack.xml");
    for cone in ["pyramidal", "elliptic"] {
        let e = &fixture["cones"][cone];
        for (solver, tol) in [("newton", 1e-8), ("cg", 1e-4), ("pgs", 1e-4)] {
            let out = json(&mbd(&[
                "inspect",
                path.to_str().unwrap(),
                "--state",
                state.to_str().unwrap(),
                "--solver",
                solver,
                "--cone",
                cone,
                "--iterations",
                "1000",
                "--tolerance",
                "1e-12",
                "--json",
            ]));
            assert_eq!(
                out["ncon"].as_u64().unwrap() as usize,
                e["contacts"].as_array().unwrap().len()
            );
            assert_eq!(out["nefc"], e["nefc"]);
            assert_eq!(out["opt"]["cone"], cone);
            let mj = &e["solvers"][match solver {
                "newton" => "Newton",
                "cg" => "CG",
                _ => "PGS",
            }];
            // relative to the size of qacc_smooth (at rest qacc is a small difference of large
            // terms; see tests/forward.rs)
            let (ours, theirs) = (vec_of(&out["qacc"]), vec_of(&mj["qacc"]));
            let scale = vec_of(&e["qacc_smooth"]).iter().fold(1e-12f64, |a, x| a.max(x.abs()));
            let err = ours.iter().zip(&theirs).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / scale;
            assert!(err < tol, "{cone} {solver}: qacc off by {err:.2e}");
            // every contact named by its geoms, every row by its element
            assert_eq!(
                out["efc_name"].as_array().unwrap().len(),
                out["nefc"].as_u64().unwrap() as usize
            );
            assert!(out["contacts"][0]["geom_name"][0].as_str().unwrap() == "floor");
            assert_eq!(matrix_of(&out["efc_J"]).len(), out["nefc"].as_u64().unwrap() as usize);
            // the inverse at this qacc returns the applied force (zero), relative to the weight
            // of the stack (29.43 N), to the solver's tolerance
            assert!(
                vec_of(&out["fwdinv"]).iter().all(|x| *x < tol * 29.43),
                "{}",
                out["fwdinv"]
            );
        }
    }
    // the text output lists the active rows
    let o = mbd(&["inspect", path.to_str().unwrap(), "--state", state.to_str().unwrap()]);
    let text = stdout(&o);
    assert!(text.contains("efc_force") && text.contains("floor/box1"), "{text}");
}

/// Bad solver options: one line and a non-zero exit, naming what is wrong.
#[test]
fn inspect_refuses_bad_solver_options() {
    let path = model("box_stack.xml");
    let p = path.to_str().unwrap();
    let e = fails(&["inspect", p, "--solver", "simplex"], 2);
    assert!(e.contains("solver") && e.contains("simplex"), "{e}");
    let e = fails(&["inspect", p, "--cone", "round"], 2);
    assert!(e.contains("cone") && e.contains("round"), "{e}");
    for bad in ["0", "-3", "many", "1.5"] {
        let e = fails(&["inspect", p, "--iterations", bad], 2);
        assert!(e.contains("--iterations"), "{e}");
    }
    for bad in ["nan", "inf", "-1", "x"] {
        let e = fails(&["inspect", p, "--tolerance", bad], 2);
        assert!(e.contains("--tolerance"), "{e}");
    }
    fails(&["inspect", p, "--solver"], 2);
    // a non-finite state is refused before any stage runs
    let dir = scratch("inspect_bad_state");
    let state = dir.join("s.json");
    fs::write(&state, "{\"qvel\": [0,0,1e400,0,0,0, 0,0,0,0,0,0, 0,0,0,0,0,0]}").unwrap();
    fails(&["inspect", p, "--state", state.to_str().unwrap(), "--solver", "cg"], 1);
    // without overrides the model's own options are reported
    let out = json(&mbd(&["inspect", p, "--json"]));
    assert_eq!(out["opt"]["solver"], "Newton");
    assert_eq!(out["opt"]["cone"], "pyramidal");
    assert_eq!(out["opt"]["iterations"], 100);
}

/// The constraint table names an unnamed geom by its own index (not by the contact's), and says
/// when the noslip pass ran, whose `fwdinv` then does not vanish.
#[test]
fn inspect_names_unnamed_geoms_and_reports_the_noslip_pass() {
    let dir = scratch("inspect_noslip");
    let path = dir.join("incline.xml");
    fs::write(
        &path,
        r#"<mujoco><option noslip_iterations="5" cone="elliptic"/>
<worldbody><geom type="plane" size="1 1 .1" quat="0.984807753012208 0 0.17364817766693033 0" friction="0.5 0.005 0.0001"/>
<body pos="0.017 0 0.0468" quat="0.984807753012208 0 0.17364817766693033 0"><freejoint/>
<geom type="box" size=".1 .1 .05" mass="1" friction="0.5 0.005 0.0001"/></body></worldbody></mujoco>"#,
    )
    .unwrap();
    let out = stdout(&ok(mbd(&["inspect", s(&path)])));
    assert!(out.contains("(noslip pass: up to 5 sweeps)"), "{out}");
    assert!(out.contains("geom 0/geom 1"), "{out}");
    assert!(!out.contains("geom 0/geom 0"), "{out}");
}

/// Mocap bodies through the command: `inspect` lists them with their poses (a keyframe's
/// `mpos`/`mquat`, or a state file's `mocap_pos`/`mocap_quat`) and places them there, `simulate`
/// starts from a state file's poses, and a state file with the wrong number of them is refused.
#[test]
fn inspect_and_simulate_take_the_mocap_poses() {
    let path = model("mocap.xml");
    let o = mbd(&["inspect", s(&path), "--key", "moved"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(
        text.contains("mocap:       target at (0.5500, 0.0500, 1.0200)")
            && text.contains("carrier at (0.0000, -1.0000, 0.3200), quat (0.0000, 0.0000, 0.0000, 1.0000)"),
        "{text}"
    );
    let dir = scratch("mocap");
    let state = dir.join("state.json");
    fs::write(
        &state,
        r#"{"mocap_pos": [[0.6, 0.1, 1.0], [0.9, 1, 0.1], [-1, 0, 0.8], [0, -1, 0.3]], "mocap_quat": [1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3]}"#,
    )
    .unwrap();
    let out = json(&mbd(&["inspect", s(&path), "--state", s(&state), "--json"]));
    assert_eq!(out["sizes"]["nmocap"], 4);
    assert_eq!(out["body_mocapid"][4], 0);
    assert_eq!(out["mocap_quat"][3], serde_json::json!([0.0, 0.0, 0.0, 3.0]));
    let target = out["body_names"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n == "target")
        .unwrap();
    assert_eq!(out["xpos"][target], serde_json::json!([0.6, 0.1, 1.0]));
    let csv = dir.join("run.csv");
    let o = mbd(&sim(s(&path), &["--state", s(&state), "--steps", "20"], s(&csv)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // a mocap model without constraints steps through the same pipeline: its CSV has the
    // constraint columns in the header and in every row
    let free = dir.join("hanging.xml");
    fs::write(
        &free,
        r#"<mujoco><worldbody><body mocap="true" pos="0 0 1"><body><joint type="hinge" axis="1 0 0"/>
           <geom type="capsule" fromto="0 0 0 0 0.1 -0.3" size="0.02" contype="0" conaffinity="0"/></body></body>
           </worldbody></mujoco>"#,
    )
    .unwrap();
    let o = mbd(&sim(s(&free), &["--steps", "10"], s(&csv)));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = fs::read_to_string(&csv).unwrap();
    let widths: Vec<usize> = text.lines().map(|l| l.split(',').count()).collect();
    assert!(text.lines().next().unwrap().contains("ncon"), "{text}");
    assert!(
        widths.len() == 12 && widths.iter().all(|&w| w == widths[0]),
        "{widths:?}"
    );
    fs::write(&state, r#"{"mocap_pos": [[0.6, 0.1, 1.0]]}"#).unwrap();
    fails_with(
        &["inspect", s(&path), "--state", s(&state)],
        1,
        "mocap_pos has 3 numbers, the model needs 12",
    );
}
