//! The validator (placeholder; filled in next).
use crate::{IrError, Kernel};

/// Checks that `kernel` is well-formed and well-typed.
pub fn validate(_kernel: &Kernel) -> Result<(), IrError> {
    Ok(())
}
