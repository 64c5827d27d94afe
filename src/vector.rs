//! Vector inputs: every checked entry point takes its vectors as `&impl AsVector`, so a student
//! can pass what the library returns (`DVector<f64>`) as well as a `Vec<f64>`, an array or a
//! slice: `rnea(&model, &q, &qd, &qdd, None)` compiles for all of them.

use nalgebra::DVector;

/// Anything that can be read as a slice of `f64`: slices, arrays, `Vec<f64>`, nalgebra's
/// `DVector<f64>`.
pub trait AsVector {
    /// The entries, in order.
    fn as_vector(&self) -> &[f64];
}

impl AsVector for [f64] {
    fn as_vector(&self) -> &[f64] {
        self
    }
}

impl<const N: usize> AsVector for [f64; N] {
    fn as_vector(&self) -> &[f64] {
        self
    }
}

impl AsVector for Vec<f64> {
    fn as_vector(&self) -> &[f64] {
        self
    }
}

impl AsVector for DVector<f64> {
    fn as_vector(&self) -> &[f64] {
        self.as_slice()
    }
}

impl<T: AsVector + ?Sized> AsVector for &T {
    fn as_vector(&self) -> &[f64] {
        (**self).as_vector()
    }
}
