//! Records: field reads (`p.x`, `b.pos.x`), record literals (`Particle { x: 1.0, .. }`), and the
//! inference of field types.
//!
//! A record's fields are declared in another item, which the macro cannot see. So the type of
//! `p.x` is a type variable, one per record type and field name (every `p.x` of a `Particle`
//! shares it), fixed by how the field is used, as a helper call's result is. At the end of
//! lowering ([`Lowerer::solve_fields`]) accesses whose base types turned out equal are merged,
//! and each access gets its *path* from a named record (`Body.pos.x`). A field type nothing fixed
//! (`q.x += 1.0`: an unsuffixed literal only says "a float") stays *generic*: its IR type is the
//! placeholder `Type::Pending(PendingType::Field(Body.pos.x))`, resolved when the kernel is loaded, with the record
//! definitions at hand (`spoc_ir::resolve`). Every access is checked at compile time against
//! the record's field table (`record_checks.rs`): the field exists, and its type is the one it is
//! used as (or of the kind, for a generic one).

use crate::errors::{Loc, Lowered};
use crate::lower::{ident_name, Lowerer, TExpr};
use crate::types::{Kind, Scalar, Ty};
use spoc_ir::{Block, ExprKind};
use std::collections::HashMap;

/// One field access: the first of its record type and field name.
pub struct FieldUse {
    pub base: Ty,
    pub field: String,
    pub ty: Ty,
    pub span: Loc,
}

/// A field of a named record, through nested records: `root.fields[0].fields[1]…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    /// Index of the named record (`Unifier::records`).
    pub root: u32,
    pub fields: Vec<String>,
}

/// What a field is used as, for its compile-time check.
#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    Scalar(Scalar),
    /// The named record (`Unifier::records` index).
    Record(u32),
    /// A type nothing fixed, of this kind (`Record`: some record); and the same type as the
    /// field at `same_as` (an index into the checks) when several fields share it.
    Generic {
        kind: Kind,
        same_as: Option<usize>,
    },
}

/// The compile-time check of one field path.
pub struct FieldCheck {
    pub path: FieldPath,
    pub expect: Expect,
    pub span: Loc,
}

/// A record literal: its record, how many fields it gives, where it is.
pub struct RecordLitUse {
    pub record: u32,
    pub count: usize,
    pub span: Loc,
}

impl Lowerer {
    /// `base.field` as a value.
    pub fn field_value(&mut self, f: &syn::ExprField, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&f);
        let name = self.member_name(&f.member)?;
        let base = self.value(&f.base, pre)?;
        let ty = self.field_ty(base.ty, &name, Loc::of(&f.member))?;
        let kind = ExprKind::Field {
            base: Box::new(base.e),
            field: name,
        };
        Ok(self.mk(kind, ty, span))
    }

    /// The name of a field member (`.x`); tuple fields (`.0`) are refused.
    pub fn member_name(&mut self, m: &syn::Member) -> Lowered<String> {
        match m {
            syn::Member::Named(i) => Ok(ident_name(i)),
            syn::Member::Unnamed(_) => Err(self.errs.spanned(
                m,
                "tuple fields (`.0`) are not supported in kernels; records have named fields",
            )),
        }
    }

    /// The type of field `name` of a value of type `base` (a record, or a variable that must
    /// be one).
    pub fn field_ty(&mut self, base: Ty, name: &str, span: Loc) -> Lowered<Ty> {
        match self.tys.resolve(base) {
            Ty::Record(_) => {}
            Ty::Vector(s, lanes) => {
                return match spoc_ir::lane_index(name) {
                    Some(i) if i < usize::from(lanes) => Ok(Ty::Scalar(s)),
                    _ => Err(self.errs.at(
                        span,
                        format!(
                            "no lane `{name}` on a `{}`: its lanes are {}",
                            crate::types::vector_name(s, lanes),
                            spoc_ir::LANE_NAMES[..usize::from(lanes)]
                                .iter()
                                .map(|l| format!("`.{l}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )),
                };
            }
            Ty::Var(_) => {
                self.constrain_at(
                    base,
                    Kind::Record,
                    span,
                    &format!("no field `{name}` on this value"),
                )?;
            }
            Ty::Buffer { .. } => {
                return Err(self.errs.at(
                    span,
                    format!("a buffer has no field `{name}`; index it first: `x[i].{name}`"),
                ))
            }
            Ty::Array { .. } => {
                return Err(self.errs.at(
                    span,
                    format!("an array has no field `{name}`; index it first: `a[i].{name}`"),
                ))
            }
            t => {
                let shown = self.tys.show(t);
                return Err(self.errs.at(
                    span,
                    format!("no field `{name}` on type {shown}: only records have fields"),
                ));
            }
        }
        let key = self.tys.resolve(base);
        if let Some(u) = self
            .field_uses
            .iter()
            .find(|u| u.field == name && self.tys.resolve(u.base) == key)
        {
            return Ok(u.ty);
        }
        let ty = self.tys.fresh(Kind::Any, span);
        self.field_uses.push(FieldUse {
            base,
            field: name.to_string(),
            ty,
            span,
        });
        Ok(ty)
    }

    /// `Name { a: e1, b: e2, … }`: the values are evaluated in source order (into temporaries
    /// when they are not variables or constants), and the IR literal names its fields in source
    /// order (`?rec:Name:a,b,…`), reordered when the kernel is loaded.
    pub fn record_lit(&mut self, s: &syn::ExprStruct, pre: &mut Block) -> Lowered<TExpr> {
        let span = Loc::of(&s);
        if s.qself.is_some() {
            return Err(self.errs.spanned(
                s,
                "qualified paths (`<T as Trait>::…`) are not supported in kernels",
            ));
        }
        if let Some(rest) = &s.rest {
            return Err(self.errs.spanned(
                rest,
                "`..base` is not supported in a record literal in kernels; give every field",
            ));
        }
        if s.dot2_token.is_some() {
            return Err(self.errs.spanned(
                s,
                "`..` is not supported in a record literal in kernels; give every field",
            ));
        }
        let ty = syn::Type::Path(syn::TypePath {
            qself: None,
            path: s.path.clone(),
        });
        let Some(path) = crate::sig::record_path(&ty) else {
            return Err(self.errs.spanned(
                &s.path,
                "struct literals in kernels are records: a `#[derive(Record)]` struct named by a capitalised path without generic arguments",
            ));
        };
        let rt = self.tys.record(path);
        let Ty::Record(r) = rt else {
            return Err(crate::errors::Failed);
        };
        let record = self.tys.record_name(r).to_string();
        let mut names: Vec<String> = Vec::new();
        let mut values: Vec<TExpr> = Vec::new();
        let mut ok = true;
        let many = s.fields.len() > 1;
        for f in &s.fields {
            let Ok(name) = self.member_name(&f.member) else {
                ok = false;
                continue;
            };
            if names.contains(&name) {
                self.errs.spanned(
                    &f.member,
                    format!("field `{name}` specified more than once"),
                );
                ok = false;
                continue;
            }
            let mut fpre = Block::new();
            let v = match self.scalar(&f.expr, &mut fpre) {
                Ok(v) => v,
                Err(_) => {
                    ok = false;
                    continue;
                }
            };
            self.sequence(&mut values, &v, fpre, pre);
            let Ok(fty) = self.field_ty(rt, &name, Loc::of(&f.member)) else {
                ok = false;
                continue;
            };
            if self
                .unify_at(
                    fty,
                    v.ty,
                    v.span,
                    &format!("mismatched types in field `{name}` of `{record}`"),
                )
                .is_err()
            {
                ok = false;
                continue;
            }
            let simple = matches!(v.e.kind, ExprKind::Var(_) | ExprKind::Const(_));
            // The fields are reordered at load time: keep the source's evaluation order.
            let v = if many && !simple {
                self.spill(v, pre)
            } else {
                v
            };
            names.push(name);
            values.push(v);
        }
        if !ok {
            return Err(crate::errors::Failed);
        }
        if names.is_empty() {
            return Err(self.errs.at(
                span,
                format!("a `{record}` literal gives every field of `{record}`"),
            ));
        }
        self.record_lits.push(RecordLitUse {
            record: r,
            count: names.len(),
            span,
        });
        let kind = ExprKind::RecordLit {
            record: format!("{}{record}:{}", spoc_ir::resolve::REC, names.join(",")),
            fields: values.into_iter().map(|v| v.e).collect(),
        };
        Ok(self.mk(kind, rt, span))
    }

    /// Merges field accesses whose base types turned out equal (their field types are one), until
    /// nothing changes. Reports fields used as two types.
    pub fn solve_fields(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.field_uses.len() {
                for j in 0..i {
                    let (a, b) = (&self.field_uses[j], &self.field_uses[i]);
                    if a.field != b.field
                        || self.tys.resolve(a.base) != self.tys.resolve(b.base)
                        || self.tys.resolve(a.ty) == self.tys.resolve(b.ty)
                    {
                        continue;
                    }
                    let (ta, tb, span) = (a.ty, b.ty, b.span);
                    if self.tys.unify(ta, tb).is_err() {
                        let field = b.field.clone();
                        let rec = self.tys.show(b.base);
                        let (x, y) = (self.tys.show(ta), self.tys.show(tb));
                        self.errs.at(
                            span,
                            format!("mismatched types: field `{field}` of {rec} is used as {x} and as {y}"),
                        );
                        return;
                    }
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// The path of every field access from a named record, where there is one (`None` when the
    /// access's base is a record of unknown type, reported by the caller).
    pub fn field_paths(&self) -> Vec<Option<FieldPath>> {
        let mut paths: Vec<Option<FieldPath>> = vec![None; self.field_uses.len()];
        loop {
            let mut changed = false;
            for i in 0..self.field_uses.len() {
                if paths[i].is_some() {
                    continue;
                }
                let u = &self.field_uses[i];
                let base_path = match self.tys.resolve(u.base) {
                    Ty::Record(r) => Some(FieldPath {
                        root: r,
                        fields: Vec::new(),
                    }),
                    Ty::Var(w) => (0..self.field_uses.len())
                        .find(|&k| {
                            paths[k].is_some()
                                && self.tys.resolve(self.field_uses[k].ty) == Ty::Var(w)
                        })
                        .and_then(|k| paths[k].clone()),
                    _ => None,
                };
                if let Some(mut p) = base_path {
                    p.fields.push(u.field.clone());
                    paths[i] = Some(p);
                    changed = true;
                }
            }
            if !changed {
                return paths;
            }
        }
    }

    /// The generic field types: each free variable some field access has as its type, with the
    /// text of the first such field's path (`Body.pos.x`).
    pub fn generic_fields(&self, paths: &[Option<FieldPath>]) -> HashMap<u32, String> {
        let mut out = HashMap::new();
        for (u, p) in self.field_uses.iter().zip(paths) {
            if let (Ty::Var(v), Some(p)) = (self.tys.resolve(u.ty), p) {
                out.entry(v).or_insert_with(|| self.path_text(p));
            }
        }
        out
    }

    /// `Root.a.b`, with the root record's IR name.
    pub fn path_text(&self, p: &FieldPath) -> String {
        let mut s = self.tys.record_name(p.root).to_string();
        for f in &p.fields {
            s.push('.');
            s.push_str(f);
        }
        s
    }

    /// The compile-time checks of every field path, with final types.
    pub fn field_checks(&self, paths: &[Option<FieldPath>]) -> Vec<FieldCheck> {
        let mut out: Vec<FieldCheck> = Vec::new();
        let mut first_of: HashMap<u32, usize> = HashMap::new();
        for (u, p) in self.field_uses.iter().zip(paths) {
            let Some(p) = p else { continue };
            if out.iter().any(|c| c.path == *p) {
                continue;
            }
            let expect = match self.tys.resolve(u.ty) {
                Ty::Scalar(s) => Expect::Scalar(s),
                Ty::Record(r) => Expect::Record(r),
                Ty::Var(v) => {
                    let same_as = first_of.get(&v).copied();
                    first_of.entry(v).or_insert(out.len());
                    Expect::Generic {
                        kind: self.tys.kind_of(v),
                        same_as,
                    }
                }
                _ => continue,
            };
            out.push(FieldCheck {
                path: p.clone(),
                expect,
                span: u.span,
            });
        }
        out
    }
}
