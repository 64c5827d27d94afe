//! MuJoCo's numerical constants, under MuJoCo's names (`mjmodel.h`), in one place.
//!
//! Every check against "tiny" or "huge" in the library uses these, so that the library rejects
//! and clamps where MuJoCo does.

/// MuJoCo's `mjMINVAL` = 1e-15: the smallest value treated as nonzero (pivots of `mj_factorI`,
/// masses and inertias of moving bodies, norms of axes and quaternions).
pub const MJ_MINVAL: f64 = 1e-15;

/// MuJoCo's `mjMAXVAL` = 1e10: the largest magnitude a state entry may have; `mj_checkPos`,
/// `mj_checkVel` and `mj_checkAcc` reset the simulation when `|x| > mjMAXVAL`. The library
/// rejects such states and model parameters at the door ([`crate::model::Model::check_state`],
/// [`crate::model::Model::validate`]).
pub const MJ_MAXVAL: f64 = 1e10;

/// MuJoCo's `mjMINIMP` = 0.0001: the smallest constraint impedance.
pub const MJ_MINIMP: f64 = 0.0001;

/// MuJoCo's `mjMAXIMP` = 0.9999: the largest constraint impedance.
pub const MJ_MAXIMP: f64 = 0.9999;

/// MuJoCo's `mjMINMU` = 1e-5: the smallest friction coefficient of a contact.
pub const MJ_MINMU: f64 = 1e-5;

/// MuJoCo's `mjNREF` = 2: the number of solver reference parameters (`solref`).
pub const MJ_NREF: usize = 2;

/// MuJoCo's `mjNIMP` = 5: the number of solver impedance parameters (`solimp`).
pub const MJ_NIMP: usize = 5;
