//! `mbd inspect`: a model and the pipeline quantities at a state, as JSON (being written).
