//! MuJoCo's numerical constants, once, under MuJoCo's names (`mjMINVAL`, `mjMAXVAL`, ...), for
//! every part of the library that follows MuJoCo's rules.

/// MuJoCo's `mjMINVAL`: the smallest mass, principal moment or pivot MuJoCo accepts (1e-15).
pub const MJ_MINVAL: f64 = 1e-15;

/// MuJoCo's `mjMAXVAL`: the largest magnitude `mj_checkPos`/`mj_checkVel`/`mj_checkAcc` accept in
/// the state before declaring a simulation diverged (1e10).
pub const MJ_MAXVAL: f64 = 1e10;
