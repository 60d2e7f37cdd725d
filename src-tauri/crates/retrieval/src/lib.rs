//! Top-K tool retrieval (being written).
