//! # mbd: multibody dynamics, explicitly
//!
//! A library and a book that show every algorithm of rigid-body dynamics as explicit, tested
//! code, in the notation of Featherstone's *Rigid Body Dynamics Algorithms* and of MuJoCo's
//! computation chapter.
//!
//! | book chapter | module | source |
//! |---|---|---|
//! | Spatial vectors | [`spatial`] | Featherstone ch. 2 |
//! | Joint models and kinematic trees | [`model`], [`kinematics`] | Featherstone ch. 3-4 |
//! | Recursive Newton-Euler | [`dynamics::rnea`] | Featherstone ch. 5 |
//! | Composite rigid bodies | [`dynamics::crba`] | Featherstone ch. 6 |
//! | Articulated bodies | [`dynamics::aba`] | Featherstone ch. 7 |
//! | Reading MuJoCo models | [`model::mjcf`] | MuJoCo's MJCF |

pub mod dynamics;
pub mod error;
pub mod kinematics;
pub mod model;
pub mod spatial;

pub use error::{Error, Result};
