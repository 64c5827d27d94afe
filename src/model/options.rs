//! The simulation options of a model (MuJoCo's `mjOption` with MuJoCo's names, and the
//! compiler's `<lengthrange>` settings), split out of the model module.

use crate::error::{Error, Result};
use crate::spatial::Vec3;

/// Declares an option enum with MuJoCo's names: `name()` gives the name MuJoCo's XML and
/// `mj_printModel` use, `parse` accepts it in any case.
macro_rules! mj_enum {
    ($(#[$doc:meta])* $ty:ident, $kind:literal { $($(#[$vdoc:meta])* $var:ident = $name:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $ty {
            $($(#[$vdoc])* $var),+
        }

        impl $ty {
            /// Every value, in MuJoCo's order.
            pub const ALL: &'static [$ty] = &[$($ty::$var),+];

            /// MuJoCo's name of the value.
            pub fn name(&self) -> &'static str {
                match self {
                    $($ty::$var => $name),+
                }
            }

            /// Parses MuJoCo's name of a value, in any case.
            pub fn parse(s: &str) -> Result<Self> {
                $ty::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name().eq_ignore_ascii_case(s))
                    .ok_or_else(|| Error::UnknownOption {
                        kind: $kind,
                        value: s.to_string(),
                        expected: $ty::ALL.iter().map(|v| v.name()).collect::<Vec<_>>().join(", "),
                    })
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

mj_enum!(
    /// MuJoCo's time integrators (`mjtIntegrator`, `<option integrator>`).
    Integrator, "integrator" {
        /// Semi-implicit Euler with implicit joint damping (`mjINT_EULER`).
        Euler = "Euler",
        /// Fourth-order Runge-Kutta (`mjINT_RK4`).
        Rk4 = "RK4",
        /// Implicit in velocity, with the RNE derivative (`mjINT_IMPLICIT`).
        Implicit = "implicit",
        /// Implicit in velocity without the RNE derivative, symmetrized (`mjINT_IMPLICITFAST`).
        ImplicitFast = "implicitfast",
    }
);

mj_enum!(
    /// MuJoCo's constraint solvers (`mjtSolver`, `<option solver>`).
    Solver, "solver" {
        /// Projected Gauss-Seidel on the dual (`mjSOL_PGS`).
        Pgs = "PGS",
        /// Nonlinear conjugate gradient on the reduced primal (`mjSOL_CG`).
        Cg = "CG",
        /// Newton's method on the reduced primal (`mjSOL_NEWTON`).
        Newton = "Newton",
    }
);

mj_enum!(
    /// MuJoCo's friction cones (`mjtCone`, `<option cone>`).
    Cone, "cone" {
        /// Pyramidal approximation (`mjCONE_PYRAMIDAL`).
        Pyramidal = "pyramidal",
        /// Elliptic cone (`mjCONE_ELLIPTIC`).
        Elliptic = "elliptic",
    }
);

/// Simulation options (MuJoCo's `<option>`), with MuJoCo's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Time step (s).
    pub timestep: f64,
    /// Gravity in world coordinates (m/s^2).
    pub gravity: Vec3,
    /// Time integrator (MuJoCo's `mjtIntegrator`).
    pub integrator: Integrator,
    /// Constraint solver (MuJoCo's `mjtSolver`).
    pub solver: Solver,
    /// Friction cone (MuJoCo's `mjtCone`).
    pub cone: Cone,
    /// Maximum solver iterations.
    pub iterations: usize,
    /// Solver tolerance.
    pub tolerance: f64,
    /// Maximum line-search evaluations per CG or Newton iteration (`ls_iterations`, default 50).
    pub ls_iterations: usize,
    /// Line-search tolerance, relative to the gradient (`ls_tolerance`, default 0.01).
    pub ls_tolerance: f64,
    /// Sweeps of the noslip pass after the solver (`noslip_iterations`, default 0: none).
    pub noslip_iterations: usize,
    /// Tolerance of the noslip pass's scaled improvement (`noslip_tolerance`, default 1e-6).
    pub noslip_tolerance: f64,
    /// Ratio of frictional to normal constraint impedance.
    pub impratio: f64,
    /// Density of the surrounding medium (MuJoCo's fluid model, `mj_fluid`).
    pub density: f64,
    /// Viscosity of the surrounding medium.
    pub viscosity: f64,
    /// Wind velocity in world coordinates.
    pub wind: Vec3,
    /// The magnetic field in world coordinates (`magnetic`), read by magnetometer sensors.
    pub magnetic: Vec3,
    /// MuJoCo's `<flag>` settings that differ from the default, as (name, enabled), e.g.
    /// `("contact", false)`. A disabled `gravity` flag is applied to [`Options::gravity`] (set
    /// to zero) by the MJCF reader, as MuJoCo's `mj_rne` ignores gravity then.
    pub flags: Vec<(String, bool)>,
    /// `<compiler><lengthrange>` (MuJoCo's `mjLROpt`): how the actuator length ranges a muscle
    /// needs are found, by `crate::mujoco::lengthrange::set_length_range`. A compiler setting
    /// in MuJoCo (not part of `mjOption`); kept here so that the model carries it from the
    /// MJCF reader to the simulation that computes the ranges.
    pub lengthrange: LengthRangeOptions,
}

/// Which actuators get a computed length range (MuJoCo's `mjtLRMode`, `<lengthrange mode>`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LengthRangeMode {
    /// None (`mjLRMODE_NONE`).
    None,
    /// Muscles: actuators with a muscle gain or bias (`mjLRMODE_MUSCLE`, the default).
    #[default]
    Muscle,
    /// Muscles and actuators with a user gain or bias (`mjLRMODE_MUSCLEUSER`); this crate has
    /// no user gains, so the same as `Muscle`.
    MuscleUser,
    /// Every actuator (`mjLRMODE_ALL`).
    All,
}

/// MuJoCo's `mjLROpt` with its defaults (`mj_defaultLROpt`): the settings of the simulation that
/// finds an actuator's length range (`mj_setLengthRange`).
#[derive(Clone, Debug, PartialEq)]
pub struct LengthRangeOptions {
    /// Which actuators (`mode`, default muscles).
    pub mode: LengthRangeMode,
    /// Keep a given range with `lengthrange[0] < lengthrange[1]` (`useexisting`, default true).
    pub useexisting: bool,
    /// Take a limited joint's or tendon's range instead of simulating (`uselimit`, default false).
    pub uselimit: bool,
    /// The acceleration the pushing force causes, `|M^-1 f| = accel` (`accel`, default 20).
    pub accel: f64,
    /// A cap on `|f|`, 0 for none (`maxforce`, default 0).
    pub maxforce: f64,
    /// Time constant of the velocity damping `qvel *= exp(-h / timeconst)` (`timeconst`, default 1 s).
    pub timeconst: f64,
    /// Time step of the simulation, 0 for the model's (`timestep`, default 0.01 s).
    pub timestep: f64,
    /// Simulated time per side (`inttotal`, default 10 s).
    pub inttotal: f64,
    /// The final interval over which the length is measured (`interval`, default 2 s).
    pub interval: f64,
    /// Convergence tolerance: the length may move by at most `tolrange` times the range over the
    /// interval (`tolrange`, default 0.05).
    pub tolrange: f64,
}

impl Default for LengthRangeOptions {
    fn default() -> Self {
        LengthRangeOptions {
            mode: LengthRangeMode::Muscle,
            useexisting: true,
            uselimit: false,
            accel: 20.0,
            maxforce: 0.0,
            timeconst: 1.0,
            timestep: 0.01,
            inttotal: 10.0,
            interval: 2.0,
            tolrange: 0.05,
        }
    }
}

impl Options {
    /// Whether MuJoCo's `<flag NAME="disable">` is set (a disable flag, such as `contact`,
    /// `constraint`, `eulerdamp` or `clampctrl`).
    pub fn disabled(&self, name: &str) -> bool {
        self.flags.iter().any(|(n, on)| n == name && !on)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timestep: 0.002,
            gravity: Vec3::new(0.0, 0.0, -9.81),
            integrator: Integrator::Euler,
            solver: Solver::Newton,
            cone: Cone::Pyramidal,
            iterations: 100,
            tolerance: 1e-8,
            ls_iterations: 50,
            ls_tolerance: 0.01,
            noslip_iterations: 0,
            noslip_tolerance: 1e-6,
            impratio: 1.0,
            density: 0.0,
            viscosity: 0.0,
            wind: Vec3::zeros(),
            magnetic: Vec3::new(0.0, -0.5, 0.0),
            flags: Vec::new(),
            lengthrange: LengthRangeOptions::default(),
        }
    }
}
