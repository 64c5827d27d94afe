//! # mbd: multibody dynamics, explicitly
//!
//! A library and a book that show every algorithm of rigid-body dynamics as explicit, tested
//! code, in the notation of Featherstone's *Rigid Body Dynamics Algorithms* and of MuJoCo's
//! computation chapter.
//!
//! | book chapter | module | source |
//! |---|---|---|
//! | Spatial vectors | [`spatial`] | Featherstone ch. 2 |
//! | Joint models and kinematic trees | [`model`], [`kinematics`], [`model::mjcf`] | Featherstone ch. 3-4, MuJoCo's MJCF |
//! | Recursive Newton-Euler | [`dynamics::rnea`] | Featherstone ch. 5 |
//! | Composite rigid bodies | [`dynamics::crba`] | Featherstone ch. 6 |
//! | Articulated bodies | [`dynamics::aba`] | Featherstone ch. 7 |
//! | Closed-loop systems | [`loops`], [`model::mechanisms`] | Featherstone ch. 8 |
//! | Figures of every chapter | [`figures`], [`plot`] | |

pub mod cli;
pub mod dynamics;
pub mod error;
#[cfg(feature = "plot")]
pub mod figures;
pub mod integrate;
pub mod kinematics;
pub mod loops;
pub mod model;
pub mod mujoco;
#[cfg(feature = "plot")]
pub mod plot;
pub mod sparse;
pub mod spatial;

#[cfg(feature = "book")]
pub mod book;

pub use error::{Error, Result};
