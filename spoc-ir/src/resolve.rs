//! Record types the kernel macro could not see: placeholders resolved when the IR is loaded.
//!
//! `#[kernel]` and `#[device]` see one item, so they do not know the fields of the records a
//! function uses (`#[derive(Record)]` structs are other items). Where a type or a constant depends
//! on a field's declaration, the macro leaves a placeholder in the embedded IR, and the generated
//! loader resolves it against the records' definitions ([`RecordDef`], from the derive) before
//! linking and validating:
//!
//! | placeholder | where | becomes |
//! | --- | --- | --- |
//! | [`Type::Pending`]`(`[`PendingType::Field`]`)` for `Root.a.b` | any type | the type of field `b` of field `a` of record `Root` |
//! | an [`ExprKind::Const`] of type [`PendingType::FieldLiteral`] `{ digits, field }` | a literal whose type is that of a field (`q.x += 1.0`) | the constant `digits` (base 10, a leading `-` for negative) of the field's scalar type |
//! | `ExprKind::RecordLit { record: "?rec:Name:f,g,h", .. }` | a record literal, fields in source order | `record: "Name"`, the values reordered to `Name`'s declaration order |
//!
//! The macro checks at compile time that every field it uses exists with the type it is used as,
//! so a failure here means a record changed without its users being recompiled.

use crate::visit::{walk_expr_mut, VisitMut};
use crate::{
    Block, Const, Expr, ExprKind, FieldPath, Function, IrError, Kernel, PendingType, RecordDef,
    ScalarType, Type,
};

/// Prefix of a record literal's record name, fields in source order.
pub const REC: &str = "?rec:";

/// Resolves every placeholder of `kernel` against `kernel.records`.
///
/// # Errors
/// [`IrError::Link`] naming the record, field or literal that does not resolve.
pub fn resolve_kernel(kernel: &mut Kernel) -> Result<(), IrError> {
    let types = (kernel.params.iter_mut().map(|p| &mut p.ty))
        .chain(kernel.vars.iter_mut().map(|v| &mut v.ty))
        .chain(kernel.shared.iter_mut().map(|s| &mut s.elem));
    Resolver::run(&kernel.records, types, &mut kernel.body).map_err(|message| IrError::Link {
        kernel: kernel.name.clone(),
        message,
    })
}

/// Resolves every placeholder of helper `function` against `records` (the records it names and
/// those they contain).
///
/// # Errors
/// [`IrError::Link`] naming the helper and what does not resolve.
pub fn resolve_function(function: &mut Function, records: &[RecordDef]) -> Result<(), IrError> {
    let types = (function.params.iter_mut().map(|p| &mut p.ty))
        .chain(function.vars.iter_mut().map(|v| &mut v.ty))
        .chain(std::iter::once(&mut function.ret));
    Resolver::run(records, types, &mut function.body).map_err(|message| IrError::Link {
        kernel: format!("(helper `{}`)", function.name),
        message,
    })
}

/// A record-definition collector: `<T as spoc::FieldType>::record_defs`.
pub type RecordDefsFn = fn(&mut Vec<RecordDef>);

/// [`crate::link::load_kernel_renamed`] for a kernel that names records: decodes the kernel,
/// renames its calls, adds the definitions `records` collect, resolves the placeholders, links
/// the helpers and validates.
///
/// # Errors
/// [`IrError::Decode`], [`IrError::Link`], [`IrError::Invalid`] or [`IrError::AliasedArgument`].
pub fn load_kernel_with_records(
    bytes: &[u8],
    helpers: &[crate::link::HelperRef],
    renames: &[(&str, &str)],
    records: &[RecordDefsFn],
) -> Result<crate::ValidKernel, IrError> {
    let mut kernel = Kernel::from_bytes(bytes)?;
    crate::link::rename_calls(&mut kernel.body, renames);
    for collect in records {
        collect(&mut kernel.records);
    }
    resolve_kernel(&mut kernel)?;
    crate::link::link_helpers(&mut kernel, helpers)?;
    crate::ValidKernel::new(kernel)
}

struct Resolver<'a> {
    records: &'a [RecordDef],
    /// The first placeholder that did not resolve; the walk does nothing more once set.
    error: Option<String>,
}

impl Resolver<'_> {
    fn record(&self, name: &str) -> Result<&RecordDef, String> {
        self.records
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| format!("record `{name}` is not defined"))
    }

    /// The type of the field at `path`.
    fn path_type(&self, path: &FieldPath) -> Result<Type, String> {
        let mut ty = Type::Record(path.record.clone());
        let mut at = path.record.clone();
        for field in &path.fields {
            let Type::Record(name) = &ty else {
                return Err(format!("`{at}` is not a record (field `{field}`)"));
            };
            let def = self.record(name)?;
            ty = def
                .fields
                .iter()
                .find(|f| &f.name == field)
                .map(|f| f.ty.clone())
                .ok_or_else(|| format!("record `{name}` has no field `{field}`"))?;
            at = format!("{at}.{field}");
        }
        Ok(ty)
    }

    /// Resolves `types`, in order, then the placeholders of `body`; the first that does not
    /// resolve is the error.
    fn run<'t>(
        records: &[RecordDef],
        types: impl Iterator<Item = &'t mut Type>,
        body: &mut Block,
    ) -> Result<(), String> {
        let mut r = Resolver {
            records,
            error: None,
        };
        for t in types {
            r.ty(t)?;
        }
        r.visit_block_mut(body);
        r.error.take().map_or(Ok(()), Err)
    }

    fn ty(&self, t: &mut Type) -> Result<(), String> {
        match t {
            Type::Pending(PendingType::Field(path)) => *t = self.path_type(path)?,
            Type::Array { elem, .. } => self.ty(std::sync::Arc::make_mut(elem))?,
            _ => {}
        }
        Ok(())
    }

    fn expr(&mut self, e: &mut Expr) -> Result<(), String> {
        if let (
            ExprKind::Const(_),
            Type::Pending(PendingType::FieldLiteral {
                digits,
                field: path,
            }),
        ) = (&e.kind, &e.ty)
        {
            let ty = self.path_type(path)?;
            let Type::Scalar(s) = ty else {
                return Err(format!(
                    "the literal `{digits}` is used as field `{path}`, which is a `{ty}`"
                ));
            };
            *e = Expr::constant(literal(digits, s).ok_or_else(|| {
                format!("the literal `{digits}` does not fit `{s}` (field `{path}`)")
            })?);
            return Ok(());
        }
        self.ty(&mut e.ty)?;
        if let ExprKind::RecordLit { record, fields } = &mut e.kind {
            for f in fields.iter_mut() {
                self.visit_expr_mut(f);
            }
            if let Some(rest) = record.strip_prefix(REC) {
                let (name, order) = rest
                    .split_once(':')
                    .ok_or_else(|| format!("malformed record literal `{record}`"))?;
                let def = self.record(name)?;
                let written: Vec<&str> = order.split(',').collect();
                if written.len() != def.fields.len() || written.len() != fields.len() {
                    return Err(format!(
                        "a `{name}` literal gives {} fields; `{name}` has {}",
                        written.len(),
                        def.fields.len()
                    ));
                }
                let mut taken: Vec<Option<Expr>> =
                    std::mem::take(fields).into_iter().map(Some).collect();
                for f in &def.fields {
                    let i = written
                        .iter()
                        .position(|w| *w == f.name)
                        .ok_or_else(|| format!("a `{name}` literal lacks field `{}`", f.name))?;
                    fields.push(
                        taken[i]
                            .take()
                            .ok_or_else(|| format!("field `{}` given twice", f.name))?,
                    );
                }
                *record = name.to_string();
            }
            return Ok(());
        }
        walk_expr_mut(self, e);
        Ok(())
    }
}

impl VisitMut for Resolver<'_> {
    fn visit_stmt_mut(&mut self, stmt: &mut crate::Stmt) {
        if self.error.is_none() {
            crate::visit::walk_stmt_mut(self, stmt);
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if self.error.is_none() {
            if let Err(m) = self.expr(e) {
                self.error.get_or_insert(m);
            }
        }
    }
}

/// The constant of type `s` that the base-10 literal `digits` (with a leading `-` if negative)
/// denotes, or `None` if it does not fit (or `s` is not a number type).
pub fn literal(digits: &str, s: ScalarType) -> Option<Const> {
    let (neg, mag) = match digits.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, digits),
    };
    match s {
        ScalarType::F32 => {
            let v: f32 = mag.parse().ok()?;
            let v = if neg { -v } else { v };
            v.is_finite().then(|| Const::f32(v))
        }
        ScalarType::F64 => {
            let v: f64 = mag.parse().ok()?;
            let v = if neg { -v } else { v };
            v.is_finite().then(|| Const::f64(v))
        }
        ScalarType::Bool | ScalarType::F16 | ScalarType::BF16 => None,
        _ => {
            let m: u128 = mag.parse().ok()?;
            let v: i128 = if neg {
                -(i128::try_from(m).ok()?)
            } else {
                i128::try_from(m).ok()?
            };
            Some(match s {
                ScalarType::I32 => Const::I32(i32::try_from(v).ok()?),
                ScalarType::I64 => Const::I64(i64::try_from(v).ok()?),
                ScalarType::U32 => Const::U32(u32::try_from(v).ok()?),
                _ => Const::U64(u64::try_from(v).ok()?),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Field, Param, StmtKind, VarDecl, VarId, VarKind};

    fn defs() -> Vec<RecordDef> {
        vec![
            RecordDef {
                name: "V".into(),
                fields: vec![
                    Field {
                        name: "x".into(),
                        ty: Type::F32,
                    },
                    Field {
                        name: "y".into(),
                        ty: Type::F32,
                    },
                ],
            },
            RecordDef {
                name: "B".into(),
                fields: vec![
                    Field {
                        name: "id".into(),
                        ty: Type::U32,
                    },
                    Field {
                        name: "pos".into(),
                        ty: Type::Record("V".into()),
                    },
                ],
            },
        ]
    }

    #[test]
    fn literals_fit_their_type() {
        assert_eq!(literal("-3", ScalarType::I32), Some(Const::I32(-3)));
        assert_eq!(literal("-3", ScalarType::U32), None);
        assert_eq!(
            literal("4294967295", ScalarType::U32),
            Some(Const::U32(u32::MAX))
        );
        assert_eq!(literal("4294967296", ScalarType::U32), None);
        assert_eq!(literal("0.1", ScalarType::F32), Some(Const::f32(0.1)));
        assert_eq!(literal("1e39", ScalarType::F32), None);
        assert_eq!(literal("-2.5", ScalarType::F64), Some(Const::f64(-2.5)));
    }

    #[test]
    fn placeholders_resolve_against_the_definitions() {
        let b = Type::Record("B".into());
        let path = |p: &str| FieldPath::parse(p).unwrap();
        let lit = |d: &str, p: &str| Expr {
            kind: ExprKind::Const(Const::U64(0)),
            ty: Type::Pending(PendingType::FieldLiteral {
                digits: d.into(),
                field: Box::new(path(p)),
            }),
        };
        let mut f = Function {
            name: "h".into(),
            params: vec![Param {
                var: VarId(0),
                name: "b".into(),
                ty: b.clone(),
                mutable: false,
            }],
            ret: Type::Pending(PendingType::Field(Box::new(path("B.pos")))),
            vars: vec![
                VarDecl {
                    name: "b".into(),
                    ty: b,
                    mutable: false,
                    kind: VarKind::Param,
                },
                VarDecl {
                    name: "t".into(),
                    ty: Type::Pending(PendingType::Field(Box::new(path("B.pos.y")))),
                    mutable: false,
                    kind: VarKind::Local,
                },
            ],
            body: vec![crate::Stmt {
                kind: StmtKind::Return(Some(Expr {
                    kind: ExprKind::RecordLit {
                        record: format!("{REC}V:y,x"),
                        fields: vec![lit("2", "B.pos.y"), lit("-1.5", "B.pos.x")],
                    },
                    ty: Type::Record("V".into()),
                })),
                loc: None,
            }],
        };
        resolve_function(&mut f, &defs()).unwrap();
        assert_eq!(f.ret, Type::Record("V".into()));
        assert_eq!(f.vars[1].ty, Type::F32);
        let StmtKind::Return(Some(e)) = &f.body[0].kind else {
            panic!("a return")
        };
        let ExprKind::RecordLit { record, fields } = &e.kind else {
            panic!("a record literal")
        };
        assert_eq!(record, "V");
        assert_eq!(fields[0], Expr::constant(Const::f32(-1.5)));
        assert_eq!(fields[1], Expr::constant(Const::f32(2.0)));

        let mut bad = f.clone();
        bad.ret = Type::Pending(PendingType::Field(Box::new(path("B.vel"))));
        let e = resolve_function(&mut bad, &defs()).unwrap_err();
        assert!(e.to_string().contains("no field `vel`"), "{e}");
    }
}
