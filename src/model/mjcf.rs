//! The MJCF subset reader (to be written).
