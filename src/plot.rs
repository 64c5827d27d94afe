//! One plotting style for every figure of the book (plotters, SVG, embedded font).
