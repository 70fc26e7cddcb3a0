//! PM Log (placeholder)
