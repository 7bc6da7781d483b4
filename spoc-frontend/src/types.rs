//! The checker's types and its unification-based inference.
//!
//! Surface types are the kernel language's: `bool`, `i32`, `i64`, `u32`, `u64`, `usize`, `f32`,
//! `f64`, records (`#[derive(Record)]` structs, by name), buffers `&[T]` / `&mut [T]` of scalars or
//! records, and the arrays a kernel declares (shared arrays and local arrays). `usize` stays distinct from `u32` while checking (as in
//! Rust) and is lowered to the IR's `U32` (indices and lengths are 32-bit on the device).
//!
//! Type variables carry a [`Kind`] that bounds what they may become: an unsuffixed integer
//! literal is an `Int` variable (defaulting to `i32`), a float literal a `Float` variable
//! (defaulting to `f64`), a helper call's result an `Any` variable that something must fix.
//!
//! A record's fields are not visible to the macro (the struct is another item), so the type of a
//! field access `p.x` is a variable too; one per record and field name, shared by every access
//! (`lower_record.rs`). A variable known to be a record of a name not known yet (`b.pos` used as
//! `b.pos.x`) has the kind `Record`.

use crate::errors::Loc;
use spoc_ir::{MemSpace, ScalarType, Type};
use std::fmt;

/// A scalar type of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Bool,
    I32,
    I64,
    U32,
    U64,
    Usize,
    F32,
    F64,
    /// `f16` (`half::f16`, re-exported by `spoc::prelude`): storage in the IR, arithmetic in
    /// `f32` rounded once (`spoc_ir::half`).
    F16,
    /// `bf16` (`half::bf16`, re-exported by `spoc::prelude`), as `F16`.
    BF16,
}

impl Scalar {
    /// Parses a Rust type name (`"f32"`, `"usize"`, …).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Scalar::Bool,
            "i32" => Scalar::I32,
            "i64" => Scalar::I64,
            "u32" => Scalar::U32,
            "u64" => Scalar::U64,
            "usize" => Scalar::Usize,
            "f32" => Scalar::F32,
            "f64" => Scalar::F64,
            "f16" => Scalar::F16,
            "bf16" => Scalar::BF16,
            _ => return None,
        })
    }

    /// The Rust spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
        }
    }

    /// The IR scalar type (`usize` is `U32`).
    pub fn ir(self) -> ScalarType {
        match self {
            Scalar::Bool => ScalarType::Bool,
            Scalar::I32 => ScalarType::I32,
            Scalar::I64 => ScalarType::I64,
            Scalar::U32 | Scalar::Usize => ScalarType::U32,
            Scalar::U64 => ScalarType::U64,
            Scalar::F32 => ScalarType::F32,
            Scalar::F64 => ScalarType::F64,
            Scalar::F16 => ScalarType::F16,
            Scalar::BF16 => ScalarType::BF16,
        }
    }

    pub fn is_int(self) -> bool {
        matches!(
            self,
            Scalar::I32 | Scalar::I64 | Scalar::U32 | Scalar::U64 | Scalar::Usize
        )
    }

    /// `f32` and `f64`: the types a float literal may take (not the 16-bit floats, which
    /// have no literals in Rust: `f16::from_f32(0.5)`).
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// The name in backquotes after its article, as messages write it: "an `f16`", "a `bf16`".
    pub fn a_name(self) -> String {
        let n = self.name();
        let an = n.starts_with(['i', 'u', 'f']) && n != "usize";
        format!("{} `{n}`", if an { "an" } else { "a" })
    }

    /// `f16` and `bf16`.
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::BF16)
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, Scalar::U32 | Scalar::U64 | Scalar::Usize)
    }
}

/// What a type variable may still become.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Any type (a helper call's result).
    Any,
    /// An integer or float type.
    Numeric,
    /// An integer type or `bool` (operands of `& | ^ !`).
    IntOrBool,
    /// An integer type (an unsuffixed integer literal).
    Int,
    /// A float type (an unsuffixed float literal).
    Float,
    /// A float type or a 16-bit float (`min`, `max` and the operators take both).
    AnyFloat,
    /// A record type (a value whose fields are read, `b.pos` in `b.pos.x`).
    Record,
}

impl Kind {
    fn admits(self, s: Scalar) -> bool {
        match self {
            Kind::Any => true,
            Kind::Numeric => s != Scalar::Bool,
            Kind::IntOrBool => s.is_int() || s == Scalar::Bool,
            Kind::Int => s.is_int(),
            Kind::Float => s.is_float(),
            Kind::AnyFloat => s.is_float() || s.is_half(),
            Kind::Record => false,
        }
    }

    /// The tightest kind admitting what both admit, if any.
    fn meet(self, other: Kind) -> Option<Kind> {
        use Kind::*;
        Some(match (self, other) {
            (Any, k) | (k, Any) => k,
            (a, b) if a == b => a,
            (Numeric, Int) | (Int, Numeric) => Int,
            (Numeric, Float) | (Float, Numeric) => Float,
            (AnyFloat, Float) | (Float, AnyFloat) => Float,
            (AnyFloat, Numeric) | (Numeric, AnyFloat) => AnyFloat,
            (IntOrBool, Int) | (Int, IntOrBool) => Int,
            (Numeric, IntOrBool) | (IntOrBool, Numeric) => Int,
            _ => return None,
        })
    }

    /// How the kind reads in an error message.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Any => "a value",
            Kind::Numeric => "a number",
            Kind::IntOrBool => "an integer or `bool`",
            Kind::Int => "an integer",
            Kind::Float => "a float",
            Kind::AnyFloat => "a float (`f16`, `bf16`, `f32` or `f64`)",
            Kind::Record => "a record",
        }
    }
}

/// A type while checking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// No value.
    Unit,
    Scalar(Scalar),
    /// A record (`#[derive(Record)]` struct): index into [`Unifier::records`].
    Record(u32),
    /// A short vector (`F32x4`, `U32x2`, …): its lane type and lane count (2 or 4).
    Vector(Scalar, u8),
    /// A global buffer parameter.
    Buffer {
        elem: Elem,
        mutable: bool,
    },
    /// An array declared in the body: a shared array (`shared_array::<T, N>()`, …) or a local
    /// array (`[v; N]`).
    Array {
        /// A type variable bound to the element type (a local array's element type may be an
        /// unsuffixed literal's, settled later).
        elem: u32,
        /// Shared or local memory.
        space: ArraySpace,
        /// The length in elements (`rows * cols` for a 2-D shared array); `None` for the
        /// `dynamic_shared` array, sized at launch.
        len: Option<u32>,
        /// `Some(cols)` for a 2-D shared array, indexed `a[r][c]` and lowered to `a[r * cols + c]`.
        cols: Option<u32>,
    },
    /// A type variable (index into [`Unifier`]).
    Var(u32),
}

/// Where an array declared in a kernel body lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArraySpace {
    /// Per-block shared memory: `shared_array`, `shared_array_2d`, `dynamic_shared`.
    Shared,
    /// Per-thread memory: `let mut a = [0.0f32; 16];`.
    Local,
}

impl ArraySpace {
    /// The IR memory space.
    pub fn ir(self) -> MemSpace {
        match self {
            ArraySpace::Shared => MemSpace::Shared,
            ArraySpace::Local => MemSpace::Local,
        }
    }
}

/// The element type of a buffer: a scalar or a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Scalar(Scalar),
    /// Index into [`Unifier::records`].
    Record(u32),
    /// A short vector: lane type, lane count.
    Vector(Scalar, u8),
}

/// The vector types of the kernel language, by their Rust names (`spoc::F32x4`, …): lane
/// type and lane count. The host types of the same names are `spoc::F32x4` etc.
/// (spoc-runtime's `memory::vector`).
pub const VECTORS: [(&str, Scalar, u8); 6] = [
    ("F32x2", Scalar::F32, 2),
    ("F32x4", Scalar::F32, 4),
    ("I32x2", Scalar::I32, 2),
    ("I32x4", Scalar::I32, 4),
    ("U32x2", Scalar::U32, 2),
    ("U32x4", Scalar::U32, 4),
];

/// The vector type named `name` (`"F32x4"`), if it is one.
pub fn vector_named(name: &str) -> Option<(Scalar, u8)> {
    VECTORS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, s, l)| (s, l))
}

/// The Rust name of the vector type of `lanes` lanes of `s` (`F32x4`).
pub fn vector_name(s: Scalar, lanes: u8) -> &'static str {
    VECTORS
        .iter()
        .find(|(_, t, l)| *t == s && *l == lanes)
        .map_or("?", |(n, _, _)| n)
}

impl Elem {
    /// The element as a value type.
    pub fn ty(self) -> Ty {
        match self {
            Elem::Scalar(s) => Ty::Scalar(s),
            Elem::Record(r) => Ty::Record(r),
            Elem::Vector(s, l) => Ty::Vector(s, l),
        }
    }

    /// The element's Rust spelling (`f32`, `F32x4`), a record's given by `record` (of the
    /// record's index).
    pub fn spelled(self, record: impl FnOnce(u32) -> String) -> String {
        match self {
            Elem::Scalar(s) => s.name().to_string(),
            Elem::Record(r) => record(r),
            Elem::Vector(s, l) => vector_name(s, l).to_string(),
        }
    }
}

/// A record type named in a function: its IR name (the path's last segment, which must be the
/// struct's own name: checked at compile time) and the path as first written, which generated
/// code uses to reach its `spoc::Record` impl.
#[derive(Clone)]
pub struct RecordUse {
    pub name: String,
    pub path: syn::Path,
    pub span: Loc,
    /// Other paths the same name was written with (checked to be the same type).
    pub aliases: Vec<syn::Path>,
}

impl Ty {
    pub const BOOL: Ty = Ty::Scalar(Scalar::Bool);
    pub const USIZE: Ty = Ty::Scalar(Scalar::Usize);
    pub const I32: Ty = Ty::Scalar(Scalar::I32);

    /// The Rust spelling of a parameter or value type: scalars, vectors and records as
    /// [`Elem::spelled`] (a record's by `record`), a buffer by `buffer` (of whether it is `mut`
    /// and its element's spelling), anything else (the unit type, arrays, type variables) `()`.
    pub fn spelled(
        self,
        record: impl FnOnce(u32) -> String,
        buffer: impl FnOnce(bool, String) -> String,
    ) -> String {
        match self {
            Ty::Scalar(s) => Elem::Scalar(s).spelled(record),
            Ty::Record(r) => Elem::Record(r).spelled(record),
            Ty::Vector(s, l) => Elem::Vector(s, l).spelled(record),
            Ty::Buffer { elem, mutable } => buffer(mutable, elem.spelled(record)),
            Ty::Unit | Ty::Var(_) | Ty::Array { .. } => "()".into(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Free { kind: Kind, origin: Loc },
    Bound(Ty),
}

/// The inference state: one slot per type variable.
#[derive(Default)]
pub struct Unifier {
    slots: Vec<Slot>,
    /// The record types named in the function, each name once.
    pub records: Vec<RecordUse>,
}

/// Why two types do not unify, with both sides spelled for a message.
#[derive(Debug)]
pub struct Mismatch {
    pub expected: String,
    pub found: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, found {}", self.expected, self.found)
    }
}

impl Unifier {
    /// The record type `path` names (its last segment), added on first use.
    pub fn record(&mut self, path: &syn::Path) -> Ty {
        let name = path
            .segments
            .last()
            .map(|s| crate::lower::ident_name(&s.ident))
            .unwrap_or_default();
        let written = |p: &syn::Path| quote::quote!(#p).to_string();
        if let Some(i) = self.records.iter().position(|r| r.name == name) {
            let r = &mut self.records[i];
            if written(&r.path) != written(path)
                && !r.aliases.iter().any(|a| written(a) == written(path))
            {
                r.aliases.push(path.clone());
            }
            return Ty::Record(i as u32);
        }
        self.records.push(RecordUse {
            name,
            path: path.clone(),
            span: Loc::of(path),
            aliases: Vec::new(),
        });
        Ty::Record((self.records.len() - 1) as u32)
    }

    /// The Rust spelling of a buffer element type (`f32`, `Particle`).
    pub fn elem_name(&self, e: Elem) -> String {
        e.spelled(|r| self.record_name(r).to_string())
    }

    /// The IR name of record `i`.
    pub fn record_name(&self, i: u32) -> &str {
        self.records
            .get(i as usize)
            .map_or("?", |r| r.name.as_str())
    }

    /// A fresh variable of `kind`, created at `origin` (where a "cannot infer" error points).
    pub fn fresh(&mut self, kind: Kind, origin: Loc) -> Ty {
        self.slots.push(Slot::Free { kind, origin });
        Ty::Var((self.slots.len() - 1) as u32)
    }

    /// Follows bound variables to a concrete type or a free variable.
    pub fn resolve(&self, mut t: Ty) -> Ty {
        while let Ty::Var(v) = t {
            match self.slots[v as usize] {
                Slot::Bound(b) => t = b,
                Slot::Free { .. } => break,
            }
        }
        t
    }

    /// The kind of a free variable (after [`Unifier::resolve`]).
    pub fn kind_of(&self, v: u32) -> Kind {
        match self.slots[v as usize] {
            Slot::Free { kind, .. } => kind,
            Slot::Bound(_) => Kind::Any,
        }
    }

    /// Spells a type for a message: `` `f32` ``, `integer`, `float`, …
    pub fn show(&self, t: Ty) -> String {
        match self.resolve(t) {
            Ty::Unit => "`()`".into(),
            Ty::Scalar(s) => format!("`{}`", s.name()),
            Ty::Record(r) => format!("`{}`", self.record_name(r)),
            Ty::Vector(s, l) => format!("`{}`", vector_name(s, l)),
            Ty::Buffer { elem, mutable } => {
                let e = match elem {
                    Elem::Scalar(s) => s.name(),
                    Elem::Record(r) => self.record_name(r),
                    Elem::Vector(s, l) => vector_name(s, l),
                };
                format!("`&{}[{e}]`", if mutable { "mut " } else { "" })
            }
            Ty::Array {
                elem,
                space,
                len,
                cols,
            } => {
                let e = match self.resolve(Ty::Var(elem)) {
                    Ty::Scalar(s) => s.name().to_string(),
                    _ => "_".into(),
                };
                match (space, len, cols) {
                    (ArraySpace::Local, Some(n), _) => format!("`[{e}; {n}]`"),
                    (_, Some(n), Some(c)) => format!("shared `[[{e}; {c}]; {}]`", n / c.max(1)),
                    (_, Some(n), None) => format!("shared `[{e}; {n}]`"),
                    (_, None, _) => format!("shared `[{e}]`"),
                }
            }
            Ty::Var(v) => match self.kind_of(v) {
                Kind::Int => "integer".into(),
                Kind::Float => "float".into(),
                k => format!("{} of unknown type", k.describe()),
            },
        }
    }

    /// Makes `a` and `b` the same type.
    pub fn unify(&mut self, a: Ty, b: Ty) -> Result<(), Mismatch> {
        let (a, b) = (self.resolve(a), self.resolve(b));
        let mismatch = |u: &Unifier| Mismatch {
            expected: u.show(a),
            found: u.show(b),
        };
        match (a, b) {
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            (Ty::Var(x), Ty::Var(y)) => {
                let (kx, ky) = (self.kind_of(x), self.kind_of(y));
                let k = kx.meet(ky).ok_or_else(|| mismatch(self))?;
                if let Slot::Free { kind, .. } = &mut self.slots[y as usize] {
                    *kind = k;
                }
                self.slots[x as usize] = Slot::Bound(b);
                Ok(())
            }
            (Ty::Var(x), t) | (t, Ty::Var(x)) => {
                let ok = match t {
                    Ty::Scalar(s) => self.kind_of(x).admits(s),
                    Ty::Record(_) => matches!(self.kind_of(x), Kind::Any | Kind::Record),
                    _ => self.kind_of(x) == Kind::Any,
                };
                if !ok {
                    return Err(mismatch(self));
                }
                self.slots[x as usize] = Slot::Bound(t);
                Ok(())
            }
            (x, y) if x == y => Ok(()),
            _ => Err(mismatch(self)),
        }
    }

    /// Requires `t` to be of `kind`; narrows a variable's kind.
    pub fn constrain(&mut self, t: Ty, kind: Kind) -> Result<(), Mismatch> {
        match self.resolve(t) {
            Ty::Var(v) => {
                let k = self.kind_of(v).meet(kind).ok_or_else(|| Mismatch {
                    expected: kind.describe().into(),
                    found: self.show(t),
                })?;
                if let Slot::Free { kind, .. } = &mut self.slots[v as usize] {
                    *kind = k;
                }
                Ok(())
            }
            Ty::Scalar(s) if kind.admits(s) => Ok(()),
            Ty::Record(_) if kind == Kind::Record => Ok(()),
            _ if kind == Kind::Any => Ok(()),
            _ => Err(Mismatch {
                expected: kind.describe().into(),
                found: self.show(t),
            }),
        }
    }

    /// Binds every free variable but those in `keep`: integer literals default to `i32`, float
    /// literals to `f64`. Returns the origins and kinds of variables nothing fixed (helper-call
    /// results, records of unknown type).
    pub fn apply_defaults(&mut self, keep: &dyn Fn(u32) -> bool) -> Vec<(Loc, Kind)> {
        let mut unresolved = Vec::new();
        for i in 0..self.slots.len() {
            if keep(i as u32) {
                continue;
            }
            if let Slot::Free { kind, origin } = self.slots[i] {
                match kind {
                    Kind::Int => self.slots[i] = Slot::Bound(Ty::Scalar(Scalar::I32)),
                    Kind::Float => self.slots[i] = Slot::Bound(Ty::Scalar(Scalar::F64)),
                    _ => unresolved.push((origin, kind)),
                }
            }
        }
        unresolved
    }

    /// The IR type of a fully resolved type; `None` for a variable still free.
    pub fn ir_type(&self, t: Ty) -> Option<Type> {
        Some(match self.resolve(t) {
            Ty::Unit => Type::Unit,
            Ty::Scalar(s) => Type::Scalar(s.ir()),
            Ty::Record(r) => Type::Record(self.record_name(r).to_string()),
            Ty::Vector(s, lanes) => Type::Vector {
                elem: s.ir(),
                lanes,
            },
            Ty::Buffer { elem, .. } => Type::global_array(self.ir_type(elem.ty())?),
            Ty::Array {
                elem, space, len, ..
            } => Type::Array {
                elem: std::sync::Arc::new(self.ir_type(Ty::Var(elem))?),
                space: space.ir(),
                len,
            },
            Ty::Var(_) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_literal_unifies_with_usize_not_f32() {
        let mut u = Unifier::default();
        let v = u.fresh(Kind::Int, Loc::call_site());
        assert!(u.unify(v, Ty::Scalar(Scalar::F32)).is_err());
        u.unify(v, Ty::USIZE).unwrap();
        assert_eq!(u.resolve(v), Ty::USIZE);
        assert_eq!(u.ir_type(v), Some(Type::U32));
    }

    #[test]
    fn defaults_and_kind_meet() {
        let mut u = Unifier::default();
        let i = u.fresh(Kind::Int, Loc::call_site());
        let f = u.fresh(Kind::Float, Loc::call_site());
        let a = u.fresh(Kind::Any, Loc::call_site());
        let n = u.fresh(Kind::Any, Loc::call_site());
        u.constrain(n, Kind::IntOrBool).unwrap();
        u.constrain(n, Kind::Numeric).unwrap();
        assert_eq!(u.kind_of(n.var()), Kind::Int);
        assert!(u.unify(i, f).is_err());
        u.unify(a, f).unwrap();
        assert_eq!(u.apply_defaults(&|_| false).len(), 0);
        assert_eq!(u.resolve(i), Ty::I32);
        assert_eq!(u.resolve(a), Ty::Scalar(Scalar::F64));
    }

    #[test]
    fn unresolved_any_is_reported() {
        let mut u = Unifier::default();
        u.fresh(Kind::Any, Loc::call_site());
        assert_eq!(u.apply_defaults(&|_| false).len(), 1);
    }

    impl Ty {
        fn var(self) -> u32 {
            match self {
                Ty::Var(v) => v,
                _ => panic!("not a variable"),
            }
        }
    }
}
