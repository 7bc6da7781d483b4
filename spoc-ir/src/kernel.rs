//! Kernels, helper functions and their declarations.

use crate::expr::VarId;
use crate::stmt::Block;
use crate::types::{RecordDef, Type, VariantDef};
use serde::{Deserialize, Serialize};

/// What kind of variable a [`VarDecl`] declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VarKind {
    /// A parameter of the kernel or helper.
    Param,
    /// A `let` local or a `for` loop variable.
    Local,
    /// A shared-memory array (see [`SharedDecl`]).
    Shared,
}

/// A variable: its source name (not necessarily unique: shadowing gives several variables one
/// name), type, mutability and kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VarDecl {
    /// The name in the source (`"tmp"` for temporaries the macro introduces).
    pub name: String,
    /// The variable's type (an array type for buffers and shared arrays).
    pub ty: Type,
    /// True if it may be assigned after its `let` (`let mut`).
    pub mutable: bool,
    /// Parameter, local or shared array.
    pub kind: VarKind,
}

/// A parameter. Buffers are `Type::Array { space: Global, len: None, .. }`; `mutable` tells a
/// `&mut [T]` from a `&[T]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Param {
    /// The parameter's variable in the function's variable table.
    pub var: VarId,
    /// The parameter's name in the source; launch errors name the parameter by it.
    pub name: String,
    /// Its type: a scalar, a record, or a global array for a buffer.
    pub ty: Type,
    /// True for a `&mut [T]` buffer; `false` for `&[T]` and for values.
    pub mutable: bool,
}

impl Param {
    /// True for buffer (array) parameters.
    pub fn is_buffer(&self) -> bool {
        matches!(self.ty, Type::Array { .. })
    }
}

/// A shared-memory array declared in a kernel: `len` elements of `elem`, or, when `len` is `None`,
/// as many as the dynamic shared-memory size given at launch holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SharedDecl {
    /// The array's variable (of [`VarKind::Shared`]).
    pub var: VarId,
    /// The element type.
    pub elem: Type,
    /// The length in elements, or `None` for an array sized by the launch's dynamic shared
    /// memory (its byte size divided by the element size).
    pub len: Option<u32>,
}

/// A helper function callable from kernels (`#[device]` in the kernel language).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Function {
    /// The function's name; calls ([`crate::ExprKind::Call`]) refer to it, so it is unique
    /// within a kernel.
    pub name: String,
    /// The parameters, in order.
    pub params: Vec<Param>,
    /// The return type ([`Type::Unit`] for none).
    pub ret: Type,
    /// Every variable of the body (parameters and locals), indexed by [`VarId`].
    pub vars: Vec<VarDecl>,
    /// The body; a function with a value returns it with [`crate::StmtKind::Return`].
    pub body: Block,
}

/// A kernel: the unit that is compiled and launched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    /// The kernel's name (the Rust function's name).
    pub name: String,
    /// The parameters, in order: the launch's arguments bind to them positionally.
    pub params: Vec<Param>,
    /// Every variable of the body (parameters, locals, shared arrays), indexed by [`VarId`].
    pub vars: Vec<VarDecl>,
    /// The shared-memory arrays the kernel declares.
    pub shared: Vec<SharedDecl>,
    /// The body, run by every thread of the launch.
    pub body: Block,
    /// The record types the kernel and its helpers use.
    pub records: Vec<RecordDef>,
    /// The variant types the kernel and its helpers use.
    pub variants: Vec<VariantDef>,
    /// Helper functions the body calls, directly or through other helpers.
    pub functions: Vec<Function>,
}

impl Kernel {
    /// The declaration of variable `id`.
    ///
    /// # Panics
    /// If `id` is not a variable of this kernel (the validator rejects such kernels).
    pub fn var(&self, id: VarId) -> &VarDecl {
        &self.vars[id.0 as usize]
    }

    /// The helper function called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The record type called `name`.
    pub fn record(&self, name: &str) -> Option<&RecordDef> {
        self.records.iter().find(|r| r.name == name)
    }

    /// The variant type called `name`.
    pub fn variant(&self, name: &str) -> Option<&VariantDef> {
        self.variants.iter().find(|v| v.name == name)
    }
}

impl Function {
    /// The declaration of variable `id`.
    ///
    /// # Panics
    /// If `id` is not a variable of this function.
    pub fn var(&self, id: VarId) -> &VarDecl {
        &self.vars[id.0 as usize]
    }
}
