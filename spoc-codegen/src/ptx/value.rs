//! Values and places during PTX generation.
//!
//! A value of the IR lives in registers ([`Val`]): a scalar in one register, a record in one
//! register per scalar leaf, a variant as a tag register plus the payload registers of every
//! case. Arrays are references ([`ArrRef`]) to memory: global buffers, shared arrays, `.local`
//! arrays, or the per-field pointers of a Structure-of-Arrays parameter.

use super::asm::Opd;
use spoc_ir::{ScalarType, Type};

/// A state space holding array elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    /// Device memory of a buffer parameter; read-only buffers load with `ld.global.nc`.
    Global { readonly: bool },
    /// Block-shared memory.
    Shared,
    /// Per-thread `.local` memory.
    Local,
}

impl Space {
    /// The load instruction prefix (`ld.global.nc`, `ld.shared`, …).
    pub(crate) fn ld(self) -> &'static str {
        match self {
            Space::Global { readonly: true } => "ld.global.nc",
            Space::Global { readonly: false } => "ld.global",
            Space::Shared => "ld.shared",
            Space::Local => "ld.local",
        }
    }
    /// The store instruction prefix.
    pub(crate) fn st(self) -> &'static str {
        match self {
            Space::Global { .. } => "st.global",
            Space::Shared => "st.shared",
            Space::Local => "st.local",
        }
    }
    /// The space qualifier of atomics (`.global`, `.shared`).
    pub(crate) fn atom(self) -> &'static str {
        match self {
            Space::Global { .. } => ".global",
            Space::Shared => ".shared",
            Space::Local => ".local",
        }
    }
}

/// What an address is relative to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Base {
    /// A 64-bit address register.
    Reg(Opd),
    /// A `.shared`/`.local` variable of the function.
    Sym(String),
}

/// An address: `[base+offset]` in a state space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Addr {
    pub space: Space,
    pub base: Base,
    pub offset: u64,
    /// Checked mode: the predicate under which the access may happen (every index test of
    /// the place passed); loads give 0 and stores do nothing when it is false.
    pub guard: Option<Opd>,
    /// The identifier (`crate::checked::array_id`) of the array this address is in, for the
    /// arrays nested in its elements.
    pub array: u32,
}

impl Addr {
    /// The address `bytes` further on.
    pub(crate) fn plus(&self, bytes: u64) -> Addr {
        Addr {
            offset: self.offset + bytes,
            ..self.clone()
        }
    }
    /// The instruction prefix `@guard ` of a checked access; empty when unguarded.
    pub(crate) fn guard_prefix(&self) -> String {
        match &self.guard {
            Some(g) => format!("@{g} "),
            None => String::new(),
        }
    }
    /// The PTX operand `[base+offset]`.
    pub(crate) fn operand(&self) -> String {
        let b = match &self.base {
            Base::Reg(r) => r.text.as_str(),
            Base::Sym(s) => s.as_str(),
        };
        if self.offset == 0 {
            format!("[{b}]")
        } else {
            format!("[{b}+{}]", self.offset)
        }
    }
}

/// One field of a Structure-of-Arrays parameter: its own base pointer (in global memory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SoaLeaf {
    pub field: String,
    pub ty: ScalarType,
    pub base: Opd,
    pub readonly: bool,
}

/// Where the elements of an array are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Store {
    /// Contiguous elements in `#[repr(C)]` layout from this address.
    Mem(Addr),
    /// A Structure-of-Arrays record buffer: one array per field.
    Soa(Vec<SoaLeaf>),
}

/// The length of an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Len {
    /// Known at compile time.
    Const(u32),
    /// In a `u32` register (buffer parameters).
    Reg(Opd),
    /// The dynamic shared array: `%dynamic_smem_size / sizeof(elem)`.
    DynShared,
}

/// A reference to an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArrRef {
    pub elem: Type,
    pub len: Len,
    pub store: Store,
    /// The array's identifier in checked mode's fault record (`crate::checked::array_id`).
    pub id: u32,
}

/// A value in registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    Unit,
    Scalar(Opd, ScalarType),
    Record(String, Vec<Val>),
    Vector(ScalarType, Vec<Opd>),
    /// `cases[i]` holds case `i`'s payload, or `None` when this value cannot be that case (a
    /// literal of another case): nothing to copy then.
    Variant {
        name: String,
        tag: Opd,
        cases: Vec<Option<Vec<Val>>>,
    },
    Array(ArrRef),
}

impl Val {
    /// The scalar operand, if this is a scalar.
    pub(crate) fn opd(&self) -> Option<&Opd> {
        match self {
            Val::Scalar(o, _) => Some(o),
            _ => None,
        }
    }

    /// Every register operand this value is made of.
    pub(crate) fn regs<'v>(&'v self, out: &mut Vec<&'v str>) {
        match self {
            Val::Unit | Val::Array(_) => {}
            Val::Scalar(o, _) => {
                if !o.imm {
                    out.push(o.text.as_str())
                }
            }
            Val::Record(_, fs) => fs.iter().for_each(|f| f.regs(out)),
            Val::Vector(_, ls) => ls
                .iter()
                .filter(|o| !o.imm)
                .for_each(|o| out.push(o.text.as_str())),
            Val::Variant { tag, cases, .. } => {
                if !tag.imm {
                    out.push(tag.text.as_str());
                }
                for c in cases.iter().flatten() {
                    c.iter().for_each(|v| v.regs(out));
                }
            }
        }
    }
}

/// A place that can be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// A value of type `ty` in memory.
    Mem(Addr, Type),
    /// Element `index` of a Structure-of-Arrays buffer, narrowed to `leaves`.
    Soa {
        leaves: Vec<SoaLeaf>,
        index: Opd,
        ty: Type,
        /// As [`Addr::guard`].
        guard: Option<Opd>,
    },
    /// Registers (a local variable, or a part of one).
    Reg(Val),
}
