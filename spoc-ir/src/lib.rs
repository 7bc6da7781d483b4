//! # spoc-ir
//!
//! The intermediate representation every spoc kernel is lowered to by `#[kernel]` at compile time,
//! and that every code generator and the Interpreter consume. It mirrors Sarek's IR in Rust form
//! (DESIGN.md §3): element types, constants, operators, typed expressions, l-values, statements,
//! declarations, helper functions and kernels.
//!
//! - [`validate()`] checks a kernel before code generation or interpretation.
//! - [`Kernel`]'s `Display` prints it as Rust-like text ([`mod@print`]).
//! - [`Kernel::content_hash`] is a stable hash used as a compile-cache key.
//! - [`Kernel::to_bytes`] / [`Kernel::from_bytes`] are how the macro embeds a kernel in the binary.

#![warn(missing_docs)]

pub mod affine;
mod error;
mod expr;
pub mod half;
mod hash;
pub mod idmap;
mod intrinsic;
mod kernel;
pub mod layout;
pub mod link;
pub mod print;
pub mod registers;
pub mod resolve;
mod stmt;
mod types;
pub mod unroll;
pub mod validate;
pub mod visit;

pub use error::{AliasedCall, IrError};
pub use expr::{BinOp, Const, Expr, ExprKind, LValue, Pattern, UnOp, VarId};
pub use hash::ContentHash;
pub use intrinsic::{AtomicOp, Axis, FenceScope, HalfKind, Intrinsic, MathFn, ShuffleKind};
pub use kernel::{Function, Kernel, Param, SharedDecl, VarDecl, VarKind};
pub use stmt::{Block, ForDir, ForLoop, SrcLoc, Stmt, StmtKind};
pub use types::{
    lane_index, Field, FieldPath, MemSpace, PendingType, RecordDef, ScalarType, Type, VariantCase,
    VariantDef, LANE_NAMES,
};
pub use validate::{validate, AsValid, ValidKernel};

/// Version of the serialized form; bumped whenever a node changes shape.
pub const IR_FORMAT_VERSION: u32 = 2;

impl Kernel {
    /// Serializes the kernel (postcard, prefixed with [`IR_FORMAT_VERSION`]). Deterministic: equal
    /// kernels give equal bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self)
    }

    /// Reads a kernel written by [`Kernel::to_bytes`].
    ///
    /// # Errors
    /// [`IrError::Decode`] if the bytes are not a kernel of this IR version.
    pub fn from_bytes(bytes: &[u8]) -> Result<Kernel, IrError> {
        decode(bytes)
    }
}

impl Function {
    /// Serializes the helper function, like [`Kernel::to_bytes`].
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(self)
    }

    /// Reads a helper function written by [`Function::to_bytes`].
    ///
    /// # Errors
    /// [`IrError::Decode`] if the bytes are not a function of this IR version.
    pub fn from_bytes(bytes: &[u8]) -> Result<Function, IrError> {
        decode(bytes)
    }
}

/// `value` in postcard, prefixed with [`IR_FORMAT_VERSION`].
fn encode<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut out = IR_FORMAT_VERSION.to_le_bytes().to_vec();
    out.extend(postcard::to_stdvec(value).expect("serializing IR cannot fail"));
    out
}

fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, IrError> {
    let (version, body) = bytes
        .split_first_chunk::<4>()
        .ok_or_else(|| IrError::Decode("input shorter than the version header".into()))?;
    let version = u32::from_le_bytes(*version);
    if version != IR_FORMAT_VERSION {
        return Err(IrError::Decode(format!(
            "IR format version {version}, this spoc-ir reads version {IR_FORMAT_VERSION} (rebuild the crate that defines the kernel)"
        )));
    }
    postcard::from_bytes(body).map_err(|e| IrError::Decode(e.to_string()))
}
