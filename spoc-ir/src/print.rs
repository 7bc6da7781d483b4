//! The printer (placeholder; filled in next).
use crate::Kernel;
use std::fmt;

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel {}", self.name)
    }
}
