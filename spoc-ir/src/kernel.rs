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
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    pub kind: VarKind,
}

/// A parameter. Buffers are `Type::Array { space: Global, len: None, .. }`; `mutable` tells a
/// `&mut [T]` from a `&[T]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Param {
    pub var: VarId,
    pub name: String,
    pub ty: Type,
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
    pub var: VarId,
    pub elem: Type,
    pub len: Option<u32>,
}

/// A helper function callable from kernels (`#[device]` in the kernel language).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Type,
    pub vars: Vec<VarDecl>,
    pub body: Block,
}

/// A kernel: the unit that is compiled and launched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<Param>,
    /// Every variable of the body (parameters, locals, shared arrays), indexed by [`VarId`].
    pub vars: Vec<VarDecl>,
    pub shared: Vec<SharedDecl>,
    pub body: Block,
    pub records: Vec<RecordDef>,
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
