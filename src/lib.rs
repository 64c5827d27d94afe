//! # mbd: multibody dynamics, explicitly
//!
//! A library and a book that show every algorithm of rigid-body dynamics as explicit, tested
//! code, in the notation of Featherstone's *Rigid Body Dynamics Algorithms*, of MuJoCo's
//! computation chapter and of Lacoursière's SPOOK stepper.
//!
//! ## Quick start
//!
//! ```
//! use mbd::dynamics::{aba, crba, rnea};
//! use mbd::model::{canned, Integrator};
//! use mbd::mujoco::integrator::{Simulator, State};
//!
//! fn main() -> mbd::Result<()> {
//!     // A double pendulum; any MuJoCo model loads the same way:
//!     // let model = mbd::mjcf::load("robot.xml")?.model;
//!     let model = canned::chain(2, false);
//!     let (q, qd) = (vec![0.3, -0.2], vec![0.0, 0.5]);
//!
//!     let h = crba(&model, &q)?; // the mass matrix H(q) (MuJoCo's M)
//!     let c = rnea(&model, &q, &qd, &[0.0; 2], None)?; // bias forces C(q, qd)
//!     let qdd = aba(&model, &q, &qd, &[0.0; 2], None)?; // forward dynamics
//!     assert!((&h * &qdd + &c).amax() < 1e-12); // H qdd + C = tau = 0
//!
//!     // Outputs go back in as inputs: inverse dynamics of that motion gives tau = 0.
//!     let tau = rnea(&model, &q, &qd, &qdd, None)?;
//!     assert!(tau.amax() < 1e-12);
//!
//!     // A PD controller on the first joint, without writing an integrator.
//!     let mut sim = Simulator::new(&model, State::reference(&model), Integrator::Rk4)?;
//!     sim.state.qpos[0] = 0.5;
//!     for _ in 0..2000 {
//!         let (q, v) = (&sim.state.qpos, &sim.state.qvel);
//!         sim.state.qfrc_applied[0] = -50.0 * q[0] - 10.0 * v[0];
//!         sim.step()?;
//!     }
//!     assert!(sim.state.qpos[0].abs() < 0.05);
//!     Ok(())
//! }
//! ```
//!
//! Every checked function returns [`Result`] with a typed [`Error`] naming what went wrong and
//! where; I/O errors convert into it, so `?` works on both.
//!
//! ## Finding things
//!
//! Search these docs with the words of the field: "mass matrix" finds [`dynamics::crba`],
//! "forward dynamics" [`dynamics::aba`], "inverse dynamics" [`dynamics::rnea`], "qfrc_bias"
//! [`dynamics::bias_forces`], "MJCF" [`mjcf::load_str`]. Every public item's documentation names
//! the book section, the equation or the MuJoCo function it implements; the book's notation table
//! (`book/src/notation.md`) maps each symbol to its Rust name and its MuJoCo field. The graded
//! exercises of every chapter are the separate crate `exercises/`
//! (`cargo test -p exercises --test ch01`).
//!
//! ## Map: book chapter, module, example, tests
//!
//! The layering (a module uses only modules on the rows above it in this list, never one
//! below): [`spatial`], [`vector`]; [`model`], [`sparse`], [`integrate`]; [`kinematics`],
//! [`dynamics`], [`collision`], [`mjcf`]; [`loops`], [`mujoco`], [`spook`]; [`cli`], `figures`, `plot`, `book`.
//!
//! | # | book chapter (`book/src/`) | module | example (`examples/`) | tests (`tests/`; `exercises/X` = graded exercises, `exercises/tests/X.rs`) |
//! |---|---|---|---|---|
//! |  | Introduction (`introduction.md`) | this page | | |
//! | 1 | Spatial vectors (`spatial.md`) | [`spatial`] | `ch01_spatial` | `exercises/ch01`, `dynamics_props` |
//! | 2 | Joint models and kinematic trees (`joints.md`) | [`model`], [`kinematics`], [`mjcf`] | `ch02_joints`, `mjcf_public` | `exercises/ch02`, `mjcf`, `public_models` |
//! | 3 | The recursive Newton-Euler algorithm (`rnea.md`) | [`dynamics`] | `ch03_rnea` | `exercises/ch03`, `peers` |
//! | 4 | The composite-rigid-body algorithm (`crba.md`) | [`dynamics`] | `ch04_crba` | `exercises/ch04`, `peers` |
//! | 5 | The articulated-body algorithm (`aba.md`) | [`dynamics`], [`integrate`] | `ch05_aba` | `exercises/ch05`, `peers` |
//! | 6 | Sparse factorization of the joint-space inertia (`sparse.md`) | [`sparse`], [`model::simple_bodies`] | `ch06_sparse` | `exercises/ch06`, `sparse`, `simple_bodies` |
//! | 7 | Closed-loop systems (`loops.md`) | [`loops`], [`model::mechanisms`] | `ch07_loops` | `exercises/ch07`, `loops` |
//! | 8 | Solving the constraint equations, sparsity and ladders (`loops2.md`) | [`loops`], [`sparse::etree`], [`sparse::block`], [`model::loop_models`] | `ch08_loops2` | `exercises/ch08`, `loops2` |
//! | 9 | MuJoCo's com-based quantities (`com.md`) | [`mujoco::com`] | `ch09_com` | `exercises/ch09`, `mujoco_com` |
//! | 10 | Collision detection (`collision.md`) | [`collision`], [`mujoco::collision`], [`mujoco::ray`] | `ch10_collision` | `exercises/ch10`, `collision`, `ray` |
//! | 11 | The constraint model (`constraints.md`) | [`mujoco::constraint`] | `ch11_constraints` | `exercises/ch11`, `constraint` |
//! | 12 | Soft constraints (`soft_constraints.md`) | [`mujoco::constraint`] | `ch12_soft_constraints` | `exercises/ch12`, `constraint` |
//! | 13 | Solvers (`solvers.md`) | [`mujoco::solver`] | `ch13_solvers` | `exercises/ch13`, `solver`, `solver_sparse` |
//! | 14 | The constrained pipeline (`constrained_forward.md`) | [`mujoco::forward`], [`mujoco::sensor`] | `ch14_constrained_forward` | `exercises/ch14`, `forward`, `forward_props`, `simulate_constrained`, `sensors`, `cli` |
//! | 15 | Integrators and the simulation loop (`integrators.md`) | [`mujoco::integrator`], [`mujoco::implicit`], [`mujoco::derivatives`], [`dynamics::actuation`] | `ch15_integrators` | `exercises/ch15`, `integrators`, `derivatives`, `muscles`, `mocap`, `simulate_corpus`, `simulate_warmstart`, `lqr`, `cli_simulate` |
//! | 16 | SPOOK: a variational stepper (`spook.md`) | [`spook`], [`collision`] | `ch16_spook` | `exercises/ch16`, `spook`, `spook_mujoco` |
//! | 17 | Sparse direct solves for SPOOK (`spook_sparse.md`) | [`sparse::ordering`], [`sparse::multifrontal`], [`spook::sparse`] | `ch17_spook_sparse` | `exercises/ch17`, `spook_sparse` |
//! | 18 | One mechanism, every formulation (`comparison.md`) | [`loops`], [`mujoco`], [`spook`], `figures::comparison` | `ch18_comparison` | `exercises/ch18`, `comparison`, `soft_constraints` |
//! | 19 | Performance (`performance.md`) | `benches/` | `cargo bench` |  |
//! |  | the `mbd` command, MuJoCo's stepping | [`cli`], [`mujoco::integrator`], `src/main.rs` | | `cli`, `errors`, `fuzz` |
//! |  | figures and drawings of every chapter | `figures`, `plot` (feature `plot`) | | `book`, `browser` |
//! | 23 | graded exercises; For instructors (`instructor.md`) | the `exercises/` crate: stubs `src/`, answers `solutions/`, graders `tests/`, `grade-class` | | `exercises/*` (`.ci/run`) |

pub mod cli;
pub mod collision;
pub mod dynamics;
pub mod error;
#[cfg(feature = "plot")]
pub mod figures;
pub mod integrate;
pub mod kinematics;
pub mod loops;
pub mod mjcf;
pub mod model;
pub mod mujoco;
#[cfg(feature = "plot")]
pub mod plot;
pub mod sparse;
pub mod spatial;
pub mod spook;
pub mod vector;

#[cfg(feature = "book")]
pub mod book;

pub use error::{Error, Result};
