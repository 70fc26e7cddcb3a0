//! Manifest tests.
