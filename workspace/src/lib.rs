//! The sitefile workspace API (work in progress).
