//! The row plan of a native kernel (see `spoc_runtime::native::abi`, "The row plan"): which
//! buffer accesses index `base + stride * thread_idx_x` with `base` and `stride` the same for
//! every thread of a row (same block, same `thread_idx` y and z), and which comparisons
//! `index < bound` can be decided for a whole row at once.
//!
//! The analysis is a small abstract interpretation of `u32` expressions as *linear forms*
//! `base + stride * tx` in wrapping `u32` arithmetic, where `base` and `stride` are
//! *row-invariant*: built from constants, scalar parameters, buffer lengths, block/grid
//! indices and sizes, `thread_idx` y/z, and immutable `let`s of those, with no division, load or
//! call (so evaluating them once per row, in the plan, cannot trap and gives the value every
//! thread computes). The runtime then checks each access for the whole row in one comparison
//! (`GlobalRef::window`), and the fast body uses the resulting windows.
//!
//! Soundness does not depend on this analysis being clever, only on it being right: a form it
//! gets wrong would read a wrong (but in-bounds) element, never out of bounds, because the
//! runtime checks every window it hands out.

use super::Native;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
pub(crate) use spoc_ir::visit::children;
use spoc_ir::visit::{for_each_stmt, place_root, walk_expr, walk_lvalue, walk_stmt, Visit};
use spoc_ir::{
    Axis, BinOp, Block, Const, Expr, ExprKind, Intrinsic, LValue, MemSpace, ScalarType, Stmt,
    StmtKind, Type, VarDecl, VarId, VarKind,
};
use std::collections::{HashMap, HashSet};

/// A `u32` term of a linear form: a constant, or row-invariant Rust tokens of type `u32`.
#[derive(Clone, Debug)]
enum Term {
    C(u32),
    E(TokenStream),
}

impl Term {
    fn tokens(&self) -> TokenStream {
        match self {
            Term::C(c) => {
                let l = proc_macro2::Literal::u32_suffixed(*c);
                quote!(#l)
            }
            Term::E(t) => t.clone(),
        }
    }
    /// `self.method(o)` as tokens (`method` one of `u32`'s `wrapping_*`).
    fn wrapping(&self, method: &str, o: &Term) -> Term {
        let (a, b, m) = (self.tokens(), o.tokens(), format_ident!("{method}"));
        Term::E(quote!((#a).#m(#b)))
    }
    fn add(&self, o: &Term) -> Term {
        match (self, o) {
            (Term::C(a), Term::C(b)) => Term::C(a.wrapping_add(*b)),
            (Term::C(0), x) | (x, Term::C(0)) => x.clone(),
            _ => self.wrapping("wrapping_add", o),
        }
    }
    fn sub(&self, o: &Term) -> Term {
        match (self, o) {
            (Term::C(a), Term::C(b)) => Term::C(a.wrapping_sub(*b)),
            (x, Term::C(0)) => x.clone(),
            _ => self.wrapping("wrapping_sub", o),
        }
    }
    fn mul(&self, o: &Term) -> Term {
        match (self, o) {
            (Term::C(a), Term::C(b)) => Term::C(a.wrapping_mul(*b)),
            // Dropping the other factor is fine: terms are pure.
            (Term::C(0), _) | (_, Term::C(0)) => Term::C(0),
            (Term::C(1), x) | (x, Term::C(1)) => x.clone(),
            _ => self.wrapping("wrapping_mul", o),
        }
    }
}

/// `base + stride * thread_idx_x`, wrapping `u32`; `base` and `stride` row-invariant.
#[derive(Clone, Debug)]
struct Lin {
    base: Term,
    stride: Term,
}

impl Lin {
    fn invariant(t: Term) -> Lin {
        Lin {
            base: t,
            stride: Term::C(0),
        }
    }
    fn is_invariant(&self) -> bool {
        matches!(self.stride, Term::C(0))
    }
    fn add(&self, o: &Lin) -> Lin {
        Lin {
            base: self.base.add(&o.base),
            stride: self.stride.add(&o.stride),
        }
    }
    fn sub(&self, o: &Lin) -> Lin {
        Lin {
            base: self.base.sub(&o.base),
            stride: self.stride.sub(&o.stride),
        }
    }
    fn scale(&self, k: &Term) -> Lin {
        Lin {
            base: self.base.mul(k),
            stride: self.stride.mul(k),
        }
    }
    /// A key identifying the form (its tokens as text).
    fn key(&self) -> String {
        format!("{} | {}", self.base.tokens(), self.stride.tokens())
    }
}

/// One window: the accesses of buffer `buf` at index `lin`.
struct Win {
    buf: VarId,
    lin: Lin,
    key: String,
    ident: Ident,
    ty: TokenStream,
}

/// One comparison `lin < bound` proven for a whole row.
struct Fact {
    lin: Lin,
    bound: TokenStream,
    key: String,
}

/// The row plan of a kernel.
pub struct Plan {
    /// Linear forms of immutable `u32` lets.
    lins: HashMap<VarId, Lin>,
    /// Row-invariant immutable variables (scalar parameters and lets), with the tokens that
    /// compute them in the plan (a parameter's own name, a let's initializer).
    inv: HashMap<VarId, TokenStream>,
    /// Invariant variables whose value depends on an argument (a parameter or a length).
    data: HashSet<VarId>,
    /// Buffer parameters: their element type and whether they are writable.
    buffers: HashMap<VarId, (TokenStream, bool)>,
    windows: Vec<Win>,
    facts: Vec<Fact>,
}

impl Plan {
    /// Analyses kernel `body` (variables `vars`, buffer parameters `buffers` with their Rust
    /// element types and mutability). `None` if nothing would be gained (no access or comparison
    /// to plan).
    pub fn new(
        cx: &Native<'_>,
        body: &Block,
        buffers: HashMap<VarId, (TokenStream, bool)>,
    ) -> Option<Plan> {
        let mut assigned = HashSet::new();
        assigned_vars(body, &mut assigned);
        let mut plan = Plan {
            lins: HashMap::new(),
            inv: HashMap::new(),
            data: HashSet::new(),
            buffers,
            windows: Vec::new(),
            facts: Vec::new(),
        };
        for (i, v) in cx.vars.iter().enumerate() {
            let id = VarId(i as u32);
            if v.kind == VarKind::Param
                && !v.mutable
                && !assigned.contains(&id)
                && matches!(v.ty, Type::Scalar(s) if s != ScalarType::F16)
            {
                let name = cx.var(id);
                plan.inv.insert(id, quote!(#name));
                plan.data.insert(id);
            }
        }
        let mut walk = Walk {
            cx,
            plan: &mut plan,
            assigned: &assigned,
        };
        walk.visit_block(body);
        (!plan.windows.is_empty() || !plan.facts.is_empty()).then_some(plan)
    }

    /// The window of access `array[index]`, if planned.
    pub fn window(&self, cx: &Native<'_>, array: &Expr, index: &Expr) -> Option<&Ident> {
        let ExprKind::Var(b) = array.kind else {
            return None;
        };
        self.window_of(cx, b, index)
    }

    /// The window of access `buf[index]`, if planned.
    pub fn window_of(&self, cx: &Native<'_>, buf: VarId, index: &Expr) -> Option<&Ident> {
        let key = self.lin(cx, index)?.key();
        self.windows
            .iter()
            .find(|w| w.buf == buf && w.key == key)
            .map(|w| &w.ident)
    }

    /// The value of comparison `lhs op rhs` for every thread of a row, if planned.
    pub fn fact(&self, cx: &Native<'_>, op: BinOp, lhs: &Expr, rhs: &Expr) -> Option<bool> {
        let (lin, bound, value) = match op {
            BinOp::Lt => (lhs, rhs, true),
            BinOp::Ge => (lhs, rhs, false),
            BinOp::Gt => (rhs, lhs, true),
            BinOp::Le => (rhs, lhs, false),
            _ => return None,
        };
        if lin.ty != Type::Scalar(ScalarType::U32) {
            return None;
        }
        let key = fact_key(&self.lin(cx, lin)?, &self.tokens(cx, bound)?);
        self.facts.iter().any(|f| f.key == key).then_some(value)
    }

    /// The plan closure's body: the checks of the facts, then `Some((windows…))`.
    pub fn plan_body(&self, cx: &Native<'_>) -> TokenStream {
        let facts = self.facts.iter().map(|f| {
            let (base, stride, bound) = (f.lin.base.tokens(), f.lin.stride.tokens(), &f.bound);
            quote!(::spoc::__private::row_below(ctx, #base, #stride, #bound)?;)
        });
        let wins = self.windows.iter().map(|w| {
            let b = cx.var(w.buf);
            let (base, stride) = (w.lin.base.tokens(), w.lin.stride.tokens());
            quote!(#b.window(ctx, #base, #stride)?)
        });
        quote!(#(#facts)* ::core::option::Option::Some((#(#wins,)*)))
    }

    /// The type of the plan's value: a tuple of windows.
    pub fn plan_type(&self) -> TokenStream {
        let tys = self.windows.iter().map(|w| &w.ty);
        quote!((#(#tys,)*))
    }

    /// The names of the windows, in the order of [`Plan::plan_type`].
    pub fn window_names(&self) -> Vec<&Ident> {
        self.windows.iter().map(|w| &w.ident).collect()
    }

    /// A Native generator for row-invariant expressions: invariant lets are replaced by their
    /// initializers.
    fn inv_cx<'a>(&'a self, cx: &Native<'a>) -> Native<'a> {
        Native {
            subst: Some(&self.inv),
            ..Native::new(cx.vars, cx.helpers)
        }
    }

    /// True if `e` is row-invariant (see the module documentation).
    fn invariant(&self, e: &Expr) -> bool {
        crate::nesting::deep(|| match &e.kind {
            ExprKind::Const(c) => !matches!(c, Const::F16(_)),
            ExprKind::Var(id) => self.inv.contains_key(id),
            ExprKind::Len(a) => matches!(a.kind, ExprKind::Var(b) if self.buffers.contains_key(&b)),
            ExprKind::Intrinsic { intrinsic, args } => {
                args.is_empty()
                    && match intrinsic {
                        Intrinsic::BlockIdx(_)
                        | Intrinsic::BlockDim(_)
                        | Intrinsic::GridDim(_)
                        | Intrinsic::GlobalSize(_) => true,
                        Intrinsic::ThreadIdx(a) | Intrinsic::GlobalId(a) => *a != Axis::X,
                        _ => false,
                    }
            }
            ExprKind::Unary { operand, .. } => {
                scalar(&operand.ty) && scalar(&e.ty) && self.invariant(operand)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let int = lhs.ty.as_scalar().is_some_and(|s| s.is_integer());
                !(int && matches!(op, BinOp::Div | BinOp::Rem))
                    && scalar(&lhs.ty)
                    && scalar(&e.ty)
                    && self.invariant(lhs)
                    && self.invariant(rhs)
            }
            ExprKind::Cast { value, to } => {
                *to != ScalarType::F16 && scalar(&value.ty) && self.invariant(value)
            }
            ExprKind::Select { cond, then, els } => {
                scalar(&e.ty) && self.invariant(cond) && self.invariant(then) && self.invariant(els)
            }
            _ => false,
        })
    }

    /// True if invariant `e` depends on an argument (a parameter or a buffer length), as a
    /// bound `index < bound` usually does.
    fn data_dependent(&self, e: &Expr) -> bool {
        let mut found = false;
        visit_expr(e, &mut |x| match &x.kind {
            ExprKind::Len(_) => found = true,
            ExprKind::Var(id) if self.data.contains(id) => found = true,
            _ => {}
        });
        found
    }

    /// The tokens computing invariant `e` in the plan closure.
    fn tokens(&self, cx: &Native<'_>, e: &Expr) -> Option<TokenStream> {
        if !self.invariant(e) {
            return None;
        }
        self.inv_cx(cx).expr(e)
    }

    /// The linear form of `u32` expression `e`, if it has one.
    fn lin(&self, cx: &Native<'_>, e: &Expr) -> Option<Lin> {
        crate::nesting::deep(|| {
            if e.ty != Type::Scalar(ScalarType::U32) {
                return None;
            }
            let lin = match &e.kind {
                ExprKind::Const(Const::U32(c)) => Some(Lin::invariant(Term::C(*c))),
                ExprKind::Var(id) => self.lins.get(id).cloned(),
                ExprKind::Intrinsic {
                    intrinsic: Intrinsic::ThreadIdx(Axis::X),
                    ..
                } => Some(Lin {
                    base: Term::C(0),
                    stride: Term::C(1),
                }),
                ExprKind::Intrinsic {
                    intrinsic: Intrinsic::GlobalId(Axis::X),
                    ..
                } => Some(Lin {
                    base: Term::E(quote!(ctx.block[0].wrapping_mul(ctx.block_dim[0]))),
                    stride: Term::C(1),
                }),
                ExprKind::Binary { op, lhs, rhs } => match op {
                    BinOp::Add => Some(self.lin(cx, lhs)?.add(&self.lin(cx, rhs)?)),
                    BinOp::Sub => Some(self.lin(cx, lhs)?.sub(&self.lin(cx, rhs)?)),
                    BinOp::Mul => {
                        let (a, b) = (self.lin(cx, lhs)?, self.lin(cx, rhs)?);
                        if b.is_invariant() {
                            Some(a.scale(&b.base))
                        } else if a.is_invariant() {
                            Some(b.scale(&a.base))
                        } else {
                            None
                        }
                    }
                    BinOp::Shl => match rhs.kind {
                        // `wrapping_shl` takes the amount modulo 32.
                        ExprKind::Const(Const::U32(k)) => {
                            Some(self.lin(cx, lhs)?.scale(&Term::C(1u32 << (k & 31))))
                        }
                        ExprKind::Const(Const::I32(k)) => {
                            Some(self.lin(cx, lhs)?.scale(&Term::C(1u32 << (k as u32 & 31))))
                        }
                        _ => None,
                    },
                    _ => None,
                },
                ExprKind::Cast { value, .. } if value.ty == e.ty => self.lin(cx, value),
                _ => None,
            };
            lin.or_else(|| Some(Lin::invariant(Term::E(self.tokens(cx, e)?))))
        })
    }
}

fn fact_key(lin: &Lin, bound: &TokenStream) -> String {
    format!("{} < {}", lin.key(), bound)
}

fn scalar(t: &Type) -> bool {
    matches!(t, Type::Scalar(s) if *s != ScalarType::F16)
}

/// The analysis walk, in program order (a `let` is seen before its uses).
struct Walk<'p, 'a> {
    cx: &'p Native<'a>,
    plan: &'p mut Plan,
    assigned: &'p HashSet<VarId>,
}

impl<'ir> Visit<'ir> for Walk<'_, '_> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        crate::nesting::deep(|| match &s.kind {
            StmtKind::Let {
                var,
                init: Some(init),
            } => {
                self.visit_expr(init);
                let decl: Option<&VarDecl> = self.cx.vars.get(var.0 as usize);
                let immutable = decl.is_some_and(|d| !d.mutable) && !self.assigned.contains(var);
                if !immutable {
                    return;
                }
                if let Some(lin) = self.plan.lin(self.cx, init) {
                    self.plan.lins.insert(*var, lin);
                }
                if let Some(t) = self.plan.tokens(self.cx, init) {
                    if self.plan.data_dependent(init) {
                        self.plan.data.insert(*var);
                    }
                    self.plan.inv.insert(*var, t);
                }
            }
            // The value first: the windows are numbered in the order they are met.
            StmtKind::Assign { target, value } => {
                self.visit_expr(value);
                self.visit_lvalue(target);
            }
            _ => walk_stmt(self, s),
        })
    }

    fn visit_lvalue(&mut self, l: &'ir LValue) {
        match l {
            LValue::Index { base, index } => {
                self.visit_expr(index);
                match &**base {
                    LValue::Var(b) => self.access(*b, index),
                    other => self.visit_lvalue(other),
                }
            }
            _ => walk_lvalue(self, l),
        }
    }

    fn visit_expr(&mut self, e: &'ir Expr) {
        crate::nesting::deep(|| {
            match &e.kind {
                ExprKind::Index { array, index } => {
                    if let ExprKind::Var(b) = array.kind {
                        self.access(b, index);
                    }
                }
                ExprKind::Binary { op, lhs, rhs } => self.comparison(*op, lhs, rhs),
                _ => {}
            }
            walk_expr(self, e);
        })
    }
}

impl Walk<'_, '_> {
    /// Plans access `buf[index]` if `buf` is a buffer parameter and `index` linear.
    fn access(&mut self, buf: VarId, index: &Expr) {
        let Some((elem, mutable)) = self.plan.buffers.get(&buf).cloned() else {
            return;
        };
        let Some(lin) = self.plan.lin(self.cx, index) else {
            return;
        };
        let key = lin.key();
        if self
            .plan
            .windows
            .iter()
            .any(|w| w.buf == buf && w.key == key)
        {
            return;
        }
        let ident = format_ident!("__spoc_w{}", self.plan.windows.len());
        let ty = if mutable {
            quote!(::spoc::__private::WindowMut<#elem>)
        } else {
            quote!(::spoc::__private::Window<#elem>)
        };
        self.plan.windows.push(Win {
            buf,
            lin,
            key,
            ident,
            ty,
        });
    }

    /// Plans comparison `index < bound` (or its mirror images) when `index` is linear in
    /// `thread_idx_x` and `bound` an invariant that depends on the arguments (a length, a
    /// parameter): a row where it holds for every thread runs the fast body.
    fn comparison(&mut self, op: BinOp, lhs: &Expr, rhs: &Expr) {
        let (lin, bound) = match op {
            BinOp::Lt | BinOp::Ge => (lhs, rhs),
            BinOp::Gt | BinOp::Le => (rhs, lhs),
            _ => return,
        };
        if lin.ty != Type::Scalar(ScalarType::U32) || !self.plan.data_dependent(bound) {
            return;
        }
        let (Some(l), Some(b)) = (
            self.plan.lin(self.cx, lin),
            self.plan.tokens(self.cx, bound),
        ) else {
            return;
        };
        if l.is_invariant() {
            return;
        }
        let key = fact_key(&l, &b);
        if !self.plan.facts.iter().any(|f| f.key == key) {
            self.plan.facts.push(Fact {
                lin: l,
                bound: b,
                key,
            });
        }
    }
}

/// Calls `f` on `e` and every subexpression.
fn visit_expr(e: &Expr, f: &mut impl FnMut(&Expr)) {
    crate::nesting::deep(|| {
        f(e);
        for c in children(e) {
            visit_expr(c, f);
        }
    })
}

/// Every variable assigned (`v = …`, or the root of `v[i] = …`) anywhere in `b`, and every
/// `for` loop variable.
fn assigned_vars(b: &Block, out: &mut HashSet<VarId>) {
    for_each_stmt(b, &mut |s| match &s.kind {
        StmtKind::Assign { target, .. } => {
            out.insert(place_root(target));
        }
        StmtKind::For(l) => {
            out.insert(l.var);
        }
        _ => {}
    });
}

/// The buffer parameters of a kernel: element type and mutability, for [`Plan::new`].
pub fn buffer_params(params: &[spoc_ir::Param]) -> HashMap<VarId, (TokenStream, bool)> {
    params
        .iter()
        .filter_map(|p| match &p.ty {
            Type::Array {
                elem,
                space: MemSpace::Global,
                ..
            } => {
                let t = super::rust_scalar(elem.as_scalar()?)?;
                Some((p.var, (t, p.mutable)))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::HelperPaths;

    /// The plan of kernel `item` as text: windows (`buffer: base | stride`) and facts.
    fn plan_of(item: syn::ItemFn) -> Option<(Vec<String>, Vec<String>)> {
        let l =
            crate::lower::lower_fn(&item, true).unwrap_or_else(|e| panic!("{:?}", e.messages()));
        let k = crate::handle::kernel_ir("k", &l);
        let helpers = HelperPaths::new();
        let cx = Native::new(&k.vars, &helpers);
        let plan = Plan::new(&cx, &k.body, buffer_params(&k.params))?;
        let wins = plan
            .windows
            .iter()
            .map(|w| format!("{}: {}", cx.var(w.buf), w.key))
            .collect();
        let facts = plan.facts.iter().map(|f| f.key.clone()).collect();
        Some((wins, facts))
    }

    const GID: &str = "ctx . block [0] . wrapping_mul (ctx . block_dim [0])";

    #[test]
    fn saxpy_plans_both_buffers_and_its_guard() {
        let (wins, facts) = plan_of(syn::parse_quote! {
            fn k(a: f32, x: &[f32], y: &mut [f32]) {
                let i = global_id_x();
                if i < y.len() {
                    y[i] = a * x[i] + y[i];
                }
            }
        })
        .unwrap();
        // The stored value is generated (and analysed) before the place it is stored to.
        assert_eq!(
            wins,
            [format!("x_1: {GID} | 1u32"), format!("y_2: {GID} | 1u32")]
        );
        assert_eq!(facts, [format!("{GID} | 1u32 < y_2 . len ()")]);
    }

    #[test]
    fn strides_offsets_and_invariant_lets_are_linear() {
        let (wins, facts) = plan_of(syn::parse_quote! {
            fn k(n: u32, x: &[f32], y: &mut [f32]) {
                let i = global_id_x();
                let m = n as usize - 1;
                if i >= m { return; }
                y[i * 2 + 1] = x[thread_idx_x() << 2] + x[m - i];
            }
        })
        .unwrap();
        let m = "((n_0)) . wrapping_sub (1u32)";
        assert_eq!(
            wins,
            [
                "x_1: 0u32 | 4u32".to_string(),
                // m - i: stride -1 (wrapping), which only one-thread rows can use.
                format!("x_1: ({m}) . wrapping_sub ({GID}) | 4294967295u32"),
                format!("y_2: (({GID}) . wrapping_mul (2u32)) . wrapping_add (1u32) | 2u32"),
            ]
        );
        assert_eq!(facts, [format!("{GID} | 1u32 < ({m})")]);
    }

    #[test]
    fn loop_variables_mutables_and_loads_are_not_linear() {
        let plan = plan_of(syn::parse_quote! {
            fn k(x: &[i32], idx: &[u32], y: &mut [i32]) {
                let i = global_id_x();
                let mut j = i;
                j += 1;
                for k in 0..4 {
                    y[i * 4 + k] = x[j] + x[idx[0] as usize];
                }
            }
        })
        .unwrap();
        // Only idx[0] (an invariant index) is planned.
        assert_eq!(plan.0, ["idx_1: 0u32 | 0u32"]);
        assert!(plan.1.is_empty());
    }

    #[test]
    fn comparisons_with_constants_or_row_invariant_sides_are_not_facts() {
        let plan = plan_of(syn::parse_quote! {
            fn k(y: &mut [f32]) {
                let i = global_id_x();
                let r = global_id_y();
                if i < 16 && r < y.len() && i > 0 {
                    y[0] = 1.0;
                }
            }
        })
        .unwrap();
        assert_eq!(plan.0, ["y_0: 0u32 | 0u32"]);
        assert!(plan.1.is_empty(), "{:?}", plan.1);
    }
}
