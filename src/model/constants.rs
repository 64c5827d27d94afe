//! MuJoCo's numerical constants, in one place and under MuJoCo's own names (`mjmodel.h`,
//! `user_util.h`), so that a reader can grep for them in MuJoCo's sources.
//!
//! | constant | value | MuJoCo's use |
//! |---|---|---|
//! | [`mjMINVAL`] | 1e-15 | smallest mass, principal moment or pivot; below it a quantity counts as zero |
//! | [`mjMAXVAL`] | 1e10 | largest magnitude a model or state value may have |
//! | [`mjEPS`] | 1e-14 | smallest norm of an axis, frame or `fromto` segment the compiler accepts |
//! | [`mjMINMU`] | 1e-5 | smallest friction coefficient in a contact |
//! | [`mjMINIMP`], [`mjMAXIMP`] | 1e-4, 0.9999 | bounds of the constraint impedance |
//! | [`mjNREF`], [`mjNIMP`] | 2, 5 | number of `solref` and `solimp` parameters |
//! | [`mjNDYN`], [`mjNGAIN`], [`mjNBIAS`] | 10 | number of actuator `dynprm`, `gainprm`, `biasprm` parameters |
//! | [`mjNFLUID`] | 12 | number of fluid-interaction parameters per geom |
#![allow(non_upper_case_globals)]

/// MuJoCo's `mjMINVAL`: the smallest value that is not treated as zero (masses, principal
/// moments, pivots of `mj_factorI`).
pub const mjMINVAL: f64 = 1e-15;
/// MuJoCo's `mjMAXVAL`: the largest magnitude of a model or state value.
pub const mjMAXVAL: f64 = 1e10;
/// MuJoCo's compiler tolerance `mjEPS` (`user_util.h`): the smallest norm of an axis or frame.
pub const mjEPS: f64 = 1e-14;
/// MuJoCo's `mjMINMU`: the smallest friction coefficient.
pub const mjMINMU: f64 = 1e-5;
/// MuJoCo's `mjMINIMP`: the smallest constraint impedance.
pub const mjMINIMP: f64 = 0.0001;
/// MuJoCo's `mjMAXIMP`: the largest constraint impedance.
pub const mjMAXIMP: f64 = 0.9999;
/// MuJoCo's `mjNREF`: number of solver reference parameters (`solref`).
pub const mjNREF: usize = 2;
/// MuJoCo's `mjNIMP`: number of solver impedance parameters (`solimp`).
pub const mjNIMP: usize = 5;
/// MuJoCo's `mjNDYN`: number of actuator activation-dynamics parameters (`dynprm`).
pub const mjNDYN: usize = 10;
/// MuJoCo's `mjNGAIN`: number of actuator gain parameters (`gainprm`).
pub const mjNGAIN: usize = 10;
/// MuJoCo's `mjNBIAS`: number of actuator bias parameters (`biasprm`).
pub const mjNBIAS: usize = 10;
/// MuJoCo's `mjNFLUID`: number of fluid-interaction parameters per geom.
pub const mjNFLUID: usize = 12;

/// [`mjMINVAL`] in Rust's constant case (the same value, for code that prefers it).
pub const MJ_MINVAL: f64 = mjMINVAL;
/// [`mjMAXVAL`] in Rust's constant case: also the largest magnitude `mj_checkPos`,
/// `mj_checkVel` and `mj_checkAcc` accept in the state before declaring a simulation diverged.
pub const MJ_MAXVAL: f64 = mjMAXVAL;
/// [`mjMINIMP`] in Rust's constant case.
pub const MJ_MINIMP: f64 = mjMINIMP;
/// [`mjMAXIMP`] in Rust's constant case.
pub const MJ_MAXIMP: f64 = mjMAXIMP;
/// [`mjMINMU`] in Rust's constant case.
pub const MJ_MINMU: f64 = mjMINMU;
/// [`mjNREF`] in Rust's constant case.
pub const MJ_NREF: usize = mjNREF;
/// [`mjNIMP`] in Rust's constant case.
pub const MJ_NIMP: usize = mjNIMP;
