//! Statement lowering: structured control flow to labels and predicated branches, variables to
//! registers, helper calls inlined.

use super::asm::{b32_imm, b64_imm, Asm, Class, Opd};
use super::layout::Layout;
use super::math::Routine;
use super::value::{Addr, ArrRef, Base, Len, Space, Store, Val};
use super::Ctx;
use crate::CodegenError;
use spoc_ir::{
    Block, Const, Expr, ExprKind, FenceScope, ForDir, ForLoop, Function, MemSpace, Pattern,
    ScalarType, Stmt, StmtKind, Type, VarDecl, VarId,
};
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The payload values of each case of a variant value (`None` for a case without any).
type CasePayloads = [Option<Vec<Val>>];

pub(crate) type R<T> = Result<T, CodegenError>;

/// One function body being emitted: the kernel's, or an inlined helper's.
pub(crate) struct Frame<'k> {
    pub func: Option<&'k Function>,
    pub vars: &'k [VarDecl],
    /// Identifier stems for the variables (register names); `None` where they are the names
    /// [`Frame::show`] prints (see [`Frame::ident`]).
    pub idents: Option<Vec<String>>,
    /// The value bound to each variable, once declared.
    pub vals: Vec<Option<Val>>,
    /// `(continue target, break target)` of the enclosing loops, innermost last.
    pub loops: Vec<(String, String)>,
    /// For a helper: the label after its body and the registers of its result.
    pub ret: Option<(String, Val)>,
    /// The printer of the function's statements, for the comments above their code.
    pub show: spoc_ir::print::Show<'k>,
    /// For a helper: it has a `return` before its end, so what follows that `return` in its
    /// body runs on only some of the lanes that called it (see [`Gen::divergent`]).
    pub early_return: bool,
}

impl Frame<'_> {
    /// The identifier stem of variable `v` (its register names are made from it).
    pub(crate) fn ident(&self, v: VarId) -> &str {
        match &self.idents {
            Some(idents) => &idents[v.0 as usize],
            None => &self.show.names()[v.0 as usize],
        }
    }
}

/// True if `body` (a helper's) has a `return` anywhere but as its last statement.
pub(crate) fn has_early_return(body: &Block) -> bool {
    let mut returns = 0;
    spoc_ir::visit::for_each_stmt(body, &mut |s| {
        if matches!(s.kind, StmtKind::Return(_)) {
            returns += 1;
        }
    });
    let last = matches!(
        body.last(),
        Some(Stmt {
            kind: StmtKind::Return(_),
            ..
        })
    );
    returns > usize::from(last)
}

/// The generator of one entry function.
pub(crate) struct Gen<'k, 'c> {
    pub cx: &'c Ctx<'k>,
    pub a: Asm,
    pub frames: Vec<Frame<'k>>,
    /// `.local` arrays: name and layout.
    pub locals: Vec<(String, Layout)>,
    /// Math routines the body calls (emitted as `.func`s before the entry).
    pub routines: BTreeSet<Routine>,
    /// `variable -> registers` lines for the header comment, each `\t//   …\n`.
    pub var_map: String,
    /// Inlined helper calls so far (to name their registers).
    pub inlined: usize,
    /// The `%laneid`-style mask register used by warp operations (`activemask`), when needed.
    pub local_names: BTreeSet<String>,
    /// Checked mode: the register holding the fault record's global address.
    pub fault: Option<Opd>,
    /// The (line, column) of the statement being emitted (0, 0 when unknown).
    pub loc: (u32, u32),
    /// How many conditionally executed regions (an `if`'s arms, a loop, a `match` arm, the
    /// right side of `&&`/`||`, a branching select's arms) enclose the code being emitted.
    /// Where it is 0 (and no enclosing helper returned early), every lane of the warp that has
    /// not exited runs the code, and warp operations name them all ([`Gen::entry_warp_mask`]).
    pub divergent: u32,
    /// The line (an [`Asm::mark`]) where the kernel body starts: the entry warp mask is
    /// computed there.
    pub body_start: usize,
    /// The register holding `activemask` as computed at the body's start, once needed.
    pub entry_mask: Option<Opd>,
    /// The buffer [`Gen::describe`] writes each statement's comment into (kept between
    /// statements: one allocation, not one per statement).
    described: String,
}

impl<'k, 'c> Gen<'k, 'c> {
    pub(crate) fn new(cx: &'c Ctx<'k>) -> Gen<'k, 'c> {
        Gen {
            cx,
            a: Asm::new(),
            frames: Vec::new(),
            locals: Vec::new(),
            routines: BTreeSet::new(),
            var_map: String::new(),
            inlined: 0,
            local_names: BTreeSet::new(),
            fault: None,
            loc: (0, 0),
            divergent: 0,
            body_start: 0,
            entry_mask: None,
            described: String::new(),
        }
    }

    pub(crate) fn frame(&self) -> &Frame<'k> {
        self.frames
            .last()
            .expect("a frame is open while generating")
    }

    fn frame_mut(&mut self) -> &mut Frame<'k> {
        self.frames
            .last_mut()
            .expect("a frame is open while generating")
    }

    /// The value bound to variable `v` in the current frame.
    pub(crate) fn var_val(&self, v: VarId) -> R<Val> {
        self.frame()
            .vals
            .get(v.0 as usize)
            .cloned()
            .flatten()
            .ok_or_else(|| {
                self.cx.unsupported(
                    format!("a use of variable #{} before its declaration", v.0),
                    "variables declared before use (the validator should have caught this)",
                )
            })
    }

    /// Binds variable `v` to `val` in the current frame.
    pub(crate) fn bind(&mut self, v: VarId, val: Val) {
        let f = self.frame_mut();
        f.vals[v.0 as usize] = Some(val);
    }

    /// Allocates registers (or `.local` storage) for local variable `v` and binds them.
    pub(crate) fn declare_var(&mut self, v: VarId) -> R<Val> {
        let vars = self.frame().vars;
        let d = &vars[v.0 as usize];
        let stem = self.frame().ident(v).to_string();
        let mut val = self.fresh_val(&d.ty, Some(&stem))?;
        if let Val::Array(a) = &mut val {
            a.id = crate::checked::array_id(self.func_index(), v);
        }
        // The header comment's line: `name (in `helper`): type -> registers`.
        let m = &mut self.var_map;
        let _ = write!(m, "\t//   {}", d.name);
        if let Some(f) = self.frames.last().and_then(|f| f.func) {
            let _ = write!(m, " (in `{}`)", f.name);
        }
        let _ = write!(m, ": {} -> ", d.ty);
        match &val {
            Val::Array(ArrRef {
                store: Store::Mem(a),
                ..
            }) => m.push_str(&a.operand()),
            _ => {
                let mut regs = Vec::new();
                val.regs(&mut regs);
                for (i, r) in regs.iter().enumerate() {
                    if i > 0 {
                        m.push_str(", ");
                    }
                    m.push_str(r);
                }
            }
        }
        m.push('\n');
        self.bind(v, val.clone());
        Ok(val)
    }

    /// Fresh registers for a value of type `ty`: named after `stem` when given, numbered
    /// temporaries otherwise. Fixed-length local arrays get `.local` storage.
    pub(crate) fn fresh_val(&mut self, ty: &Type, stem: Option<&str>) -> R<Val> {
        Ok(match ty {
            Type::Unit => Val::Unit,
            Type::Scalar(s) => {
                let c = Class::of(*s);
                let o = match stem {
                    Some(n) => self.a.named(c, n),
                    None => self.a.tmp(c),
                };
                Val::Scalar(o, *s)
            }
            Type::Record(name) => {
                let def = self.cx.record(name)?.clone();
                let mut fs = Vec::new();
                for f in &def.fields {
                    let st = stem.map(|s| format!("{s}_{}", f.name));
                    fs.push(self.fresh_val(&f.ty, st.as_deref())?);
                }
                Val::Record(name.clone(), fs)
            }
            Type::Vector { elem, lanes } => {
                let c = Class::of(*elem);
                let mut ls = Vec::new();
                for l in 0..*lanes {
                    let lane = ["x", "y", "z", "w"][l as usize];
                    ls.push(match stem {
                        Some(n) => self.a.named(c, &format!("{n}_{lane}")),
                        None => self.a.tmp(c),
                    });
                }
                Val::Vector(*elem, ls)
            }
            Type::Variant(name) => {
                let def = self.cx.variant(name)?.clone();
                let tag = match stem {
                    Some(n) => self.a.named(Class::B32, &format!("{n}_tag")),
                    None => self.a.tmp(Class::B32),
                };
                let mut cases = Vec::new();
                for c in &def.cases {
                    let mut p = Vec::new();
                    for (i, t) in c.payload.iter().enumerate() {
                        let st = stem.map(|s| format!("{s}_{}{i}", c.name));
                        p.push(self.fresh_val(t, st.as_deref())?);
                    }
                    cases.push(Some(p));
                }
                Val::Variant {
                    name: name.clone(),
                    tag,
                    cases,
                }
            }
            Type::Array {
                elem,
                space: MemSpace::Local,
                len: Some(n),
            } => {
                let layout = self.cx.layout(ty)?;
                let base = stem.unwrap_or("tmp");
                let mut name = format!("$local_{base}");
                let mut k = 2;
                while self.local_names.contains(&name) {
                    name = format!("$local_{base}_{k}");
                    k += 1;
                }
                self.local_names.insert(name.clone());
                self.locals.push((name.clone(), layout));
                Val::Array(ArrRef {
                    elem: (**elem).clone(),
                    len: Len::Const(*n),
                    id: crate::checked::NO_ARRAY,
                    store: Store::Mem(Addr {
                        space: Space::Local,
                        base: Base::Sym(name),
                        offset: 0,
                        guard: None,
                        array: crate::checked::NO_ARRAY,
                    }),
                })
            }
            Type::Array { .. } | Type::Pending(_) => {
                return Err(self.cx.unsupported(
                    format!("a local value of type `{ty}`"),
                    "local arrays of fixed length (buffers and shared arrays are used by name)",
                ))
            }
        })
    }

    /// Copies `src` into the registers (or storage) of `dst`. Registers are copied through
    /// temporaries when the two overlap, so that `p = (p.y, p.x)` swaps.
    pub(crate) fn assign_val(&mut self, dst: &Val, src: &Val) -> R<()> {
        // Scalars (most assignments): a `mov` unless they are the same register, as below.
        if let (Val::Scalar(d, _), Val::Scalar(s, _)) = (dst, src) {
            self.a.mov_to(d, s);
            return Ok(());
        }
        if let (Val::Array(d), Val::Array(s)) = (dst, src) {
            if d != s {
                self.copy_array(d, s)?;
            }
            return Ok(());
        }
        let mut dregs = Vec::new();
        dst.regs(&mut dregs);
        let mut sregs = Vec::new();
        src.regs(&mut sregs);
        let overlap = matches!(dst, Val::Record(..) | Val::Vector(..) | Val::Variant { .. })
            && sregs.iter().any(|s| dregs.contains(s))
            && dregs != sregs;
        if overlap {
            let tmp = self.temp_copy(src)?;
            return self.assign_plain(dst, &tmp);
        }
        if dregs == sregs && !dregs.is_empty() {
            return Ok(());
        }
        self.assign_plain(dst, src)
    }

    /// A copy of `src` in fresh temporaries.
    fn temp_copy(&mut self, src: &Val) -> R<Val> {
        Ok(match src {
            Val::Scalar(o, t) => Val::Scalar(self.a.copy(o), *t),
            Val::Record(n, fs) => {
                let mut out = Vec::new();
                for f in fs {
                    out.push(self.temp_copy(f)?);
                }
                Val::Record(n.clone(), out)
            }
            Val::Vector(t, ls) => Val::Vector(*t, ls.iter().map(|l| self.a.copy(l)).collect()),
            Val::Variant { name, tag, cases } => {
                let tag = self.a.copy(tag);
                let mut cs = Vec::new();
                for c in cases {
                    cs.push(match c {
                        None => None,
                        Some(p) => {
                            let mut out = Vec::new();
                            for v in p {
                                out.push(self.temp_copy(v)?);
                            }
                            Some(out)
                        }
                    });
                }
                Val::Variant {
                    name: name.clone(),
                    tag,
                    cases: cs,
                }
            }
            other => other.clone(),
        })
    }

    fn assign_plain(&mut self, dst: &Val, src: &Val) -> R<()> {
        match (dst, src) {
            (Val::Unit, Val::Unit) => Ok(()),
            (Val::Scalar(d, _), Val::Scalar(s, _)) => {
                self.a.mov_to(d, s);
                Ok(())
            }
            (Val::Record(_, d), Val::Record(_, s)) if d.len() == s.len() => {
                for (d, s) in d.iter().zip(s) {
                    self.assign_plain(d, s)?;
                }
                Ok(())
            }
            (Val::Vector(_, d), Val::Vector(_, s)) if d.len() == s.len() => {
                for (d, s) in d.iter().zip(s) {
                    self.a.mov_to(d, s);
                }
                Ok(())
            }
            (
                Val::Variant {
                    tag: dt, cases: dc, ..
                },
                Val::Variant {
                    tag: st, cases: sc, ..
                },
            ) => {
                self.a.mov_to(dt, st);
                for (d, s) in dc.iter().zip(sc) {
                    if let (Some(d), Some(s)) = (d, s) {
                        for (d, s) in d.iter().zip(s) {
                            self.assign_plain(d, s)?;
                        }
                    }
                }
                Ok(())
            }
            (Val::Array(d), Val::Array(s)) => self.copy_array(d, s),
            _ => Err(self.cx.unsupported(
                "an assignment between values of different shapes".to_string(),
                "well-typed IR (the validator should have caught this)",
            )),
        }
    }

    /// Emits a counted loop `for i in 0..n` around `body(i)` (an element-wise copy or fill).
    pub(crate) fn counted_loop(
        &mut self,
        n: &Len,
        stem: &str,
        body: &mut dyn FnMut(&mut Self, &Opd) -> R<()>,
    ) -> R<()> {
        let n = self.len_opd(n)?;
        let i = self.a.tmp(Class::B32);
        let head = self.a.label(&format!("{stem}_loop"));
        let end = self.a.label(&format!("{stem}_done"));
        self.a.mov_to(&i, &b32_imm(0));
        self.a.put(&head);
        let p = self.a.tmp(Class::Pred);
        self.a.ins(format_args!("setp.ge.u32 {p}, {i}, {n}"));
        self.a.bra_if(&p, true, &end);
        body(self, &i)?;
        self.a.ins(format_args!("add.s32 {i}, {i}, 1"));
        self.a.bra(&head);
        self.a.put(&end);
        Ok(())
    }

    /// Copies every element of `src` into `dst` (arrays of the same length).
    pub(crate) fn copy_array(&mut self, dst: &ArrRef, src: &ArrRef) -> R<()> {
        let (d, s) = (dst.clone(), src.clone());
        self.counted_loop(&src.len.clone(), "copy", &mut |g, i| {
            let sp = g.index_place(&s, i)?;
            let v = g.load(&sp)?;
            let dp = g.index_place(&d, i)?;
            g.store(&dp, &v)
        })
    }

    /// Stores `v` into every element of `dst`.
    pub(crate) fn fill_array(&mut self, dst: &ArrRef, v: &Val) -> R<()> {
        let (d, v) = (dst.clone(), v.clone());
        self.counted_loop(&dst.len.clone(), "fill", &mut |g, i| {
            let dp = g.index_place(&d, i)?;
            g.store(&dp, &v)
        })
    }

    /// The length of an array as a `u32` operand.
    pub(crate) fn len_opd(&mut self, len: &Len) -> R<Opd> {
        Ok(match len {
            Len::Const(n) => b32_imm(*n as i64),
            Len::Reg(r) => r.clone(),
            Len::DynShared => unreachable!("resolved by the caller"),
        })
    }

    /// Runs `f` (emitting code that only some lanes may run) with [`Gen::divergent`] raised.
    pub(crate) fn diverged<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        self.divergent += 1;
        let r = f(self);
        self.divergent -= 1;
        r
    }

    /// True where every lane of the warp that has not exited runs the code being emitted: no
    /// conditional region encloses it, and no enclosing helper has returned early.
    pub(crate) fn warp_converged(&self) -> bool {
        self.divergent == 0 && !self.frames.iter().any(|f| f.early_return)
    }

    // ------------------------------------------------------------------ statements

    pub(crate) fn block(&mut self, b: &'k Block) -> R<()> {
        for s in b {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// A one-line description of `s` for the comment above its code, written into `text`
    /// (emptied first); false when `s` gets none.
    fn describe(&self, s: &Stmt, text: &mut String) -> bool {
        if matches!(s.kind, StmtKind::Block(_)) {
            return false;
        }
        text.clear();
        if let Some(l) = s.loc {
            let _ = write!(text, "line {}: ", l.line);
        }
        // The description proper, after the location.
        let start = text.len();
        let show = &self.frame().show;
        match &s.kind {
            StmtKind::If { cond, .. } => {
                text.push_str("if ");
                show.expr_into(text, cond);
            }
            StmtKind::While { cond, .. } => {
                text.push_str("while ");
                show.expr_into(text, cond);
            }
            StmtKind::For(l) => {
                let name = self.frame().ident(l.var);
                let _ = write!(text, "for {name} in (");
                show.expr_into(text, &l.start);
                text.push_str("..");
                show.expr_into(text, &l.end);
                text.push(')');
                if l.dir == ForDir::Down {
                    text.push_str(".rev()");
                }
                text.push_str(".step_by(");
                show.expr_into(text, &l.step);
                text.push(')');
            }
            StmtKind::Match { scrutinee, .. } => {
                text.push_str("match ");
                show.expr_into(text, scrutinee);
            }
            StmtKind::Pragma { hints, .. } => {
                text.push_str("pragma ");
                text.push_str(&hints.join(", "));
            }
            _ => {
                // The first line, trimmed.
                show.stmt_into(text, s);
                if let Some(nl) = text[start..].find('\n') {
                    text.truncate(start + nl);
                }
                let trimmed = text[start..].trim_end().len();
                text.truncate(start + trimmed);
                let lead = trimmed - text[start..].trim_start().len();
                text.drain(start..start + lead);
            }
        }
        // At most 100 characters (fewer bytes than that are fewer characters).
        if text.len() - start > 100 {
            if let Some((cut, _)) = text[start..].char_indices().nth(100) {
                text.truncate(start + cut);
            }
        }
        true
    }

    pub(crate) fn stmt(&mut self, s: &'k Stmt) -> R<()> {
        let outer = self.loc;
        if let Some(l) = s.loc {
            self.loc = (l.line, l.column);
        }
        let r = self.stmt_at(s);
        self.loc = outer;
        r
    }

    /// [`Gen::stmt`] with `self.loc` set to the statement's location.
    fn stmt_at(&mut self, s: &'k Stmt) -> R<()> {
        let mut text = std::mem::take(&mut self.described);
        if self.describe(s, &mut text) {
            self.a.comment(&text);
        }
        self.described = text;
        match &s.kind {
            StmtKind::Let { var, init } => match init {
                Some(Expr {
                    kind: ExprKind::ArrayRepeat { value, .. },
                    ..
                }) => {
                    let v = self.expr(value)?;
                    let dst = self.declare_var(*var)?;
                    if let Val::Array(d) = &dst {
                        self.fill_array(d, &v)?;
                    }
                    Ok(())
                }
                Some(e) => {
                    let v = self.expr(e)?;
                    let dst = self.declare_var(*var)?;
                    self.assign_val(&dst, &v)
                }
                None => self.declare_var(*var).map(|_| ()),
            },
            StmtKind::Assign { target, value } => {
                let v = self.expr(value)?;
                let p = self.lvalue_place(target)?;
                self.store(&p, &v)
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::If { cond, then, els } => {
                let end = self.a.label("endif");
                match els {
                    None => {
                        self.branch(cond, false, &end)?;
                        self.diverged(|g| g.block(then))?;
                    }
                    Some(els) => {
                        let else_l = self.a.label("else");
                        self.branch(cond, false, &else_l)?;
                        self.diverged(|g| g.block(then))?;
                        self.a.bra(&end);
                        self.a.put(&else_l);
                        self.diverged(|g| g.block(els))?;
                    }
                }
                self.a.put(&end);
                Ok(())
            }
            StmtKind::While { cond, body } => {
                let head = self.a.label("while");
                let end = self.a.label("wend");
                self.a.put(&head);
                // Later iterations run on the lanes still looping: the condition too.
                self.diverged(|g| {
                    g.branch(cond, false, &end)?;
                    g.frame_mut().loops.push((head.clone(), end.clone()));
                    let r = g.block(body);
                    g.frame_mut().loops.pop();
                    r
                })?;
                self.a.bra(&head);
                self.a.put(&end);
                Ok(())
            }
            StmtKind::For(l) => self.for_loop(l),
            StmtKind::Match { scrutinee, arms } => {
                let sv = self.expr(scrutinee)?;
                let end = self.a.label("mend");
                for (pat, body) in arms {
                    let next = self.a.label("arm");
                    self.pattern_test(&sv, &scrutinee.ty, pat, &next)?;
                    self.diverged(|g| g.block(body))?;
                    self.a.bra(&end);
                    self.a.put(&next);
                }
                self.a.put(&end);
                Ok(())
            }
            StmtKind::Break | StmtKind::Continue => {
                let Some((cont, brk)) = self.frame().loops.last().cloned() else {
                    return Err(self.cx.unsupported(
                        "`break`/`continue` outside a loop".to_string(),
                        "a loop (the validator should have caught this)",
                    ));
                };
                let l = if matches!(s.kind, StmtKind::Break) {
                    brk
                } else {
                    cont
                };
                self.a.bra(&l);
                Ok(())
            }
            StmtKind::Return(v) => {
                let val = match v {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                match self.frame().ret.clone() {
                    None => {
                        self.a.ins("ret");
                        Ok(())
                    }
                    Some((label, res)) => {
                        if let Some(val) = val {
                            self.assign_val(&res, &val)?;
                        }
                        self.a.bra(&label);
                        Ok(())
                    }
                }
            }
            StmtKind::Barrier => {
                self.a.ins("bar.sync 0");
                Ok(())
            }
            StmtKind::WarpBarrier => {
                self.a.ins("bar.warp.sync -1");
                Ok(())
            }
            StmtKind::MemFence(scope) => {
                self.a.ins(match scope {
                    FenceScope::Block => "membar.cta",
                    FenceScope::Device => "membar.gl",
                });
                Ok(())
            }
            StmtKind::Expr(e) => self.expr(e).map(|_| ()),
            StmtKind::Pragma { body, .. } => self.block(body),
        }
    }

    /// `for var in (start..end)[.rev()].step_by(step) { body }`, never overflowing `var`:
    /// the distance to the bound is compared with the step before stepping.
    fn for_loop(&mut self, l: &'k ForLoop) -> R<()> {
        let (var, dir) = (l.var, l.dir);
        let (start, end, step, body) = (&l.start, &l.end, &l.step, &l.body);
        let ty = start.ty.as_scalar().unwrap_or(ScalarType::I32);
        let wide = ty.size_bytes() == 8;
        let c = Class::of(ty);
        let s = self.scalar(start)?;
        let s = self.a.copy(&s);
        let e = self.scalar(end)?;
        let e = self.a.copy(&e);
        let st = self.scalar(step)?;
        let st = self.a.copy(&st);
        let p = self.a.tmp(Class::Pred);
        // A step of 0 would loop forever (Rust panics): the body runs once (the largest step
        // ends the loop after one iteration), as on the other GPU targets; checked mode
        // records it.
        self.a.ins(format_args!("setp.eq.u32 {p}, {st}, 0"));
        if self.fault.is_some() {
            let stepping = self.a.un("not.pred", Class::Pred, &p);
            self.fault_unless_plain(&stepping, crate::checked::FAULT_ZERO_STEP);
        }
        let stw = if wide {
            let w = self.a.un("cvt.u64.u32", Class::B64, &st);
            self.a.tri("selp.b64", Class::B64, &b64_imm(-1), &w, &p)
        } else {
            self.a.tri("selp.b32", Class::B32, &b32_imm(-1), &st, &p)
        };
        let done = self.a.label("for_end");
        let head = self.a.label("for");
        let next = self.a.label("for_next");
        let cmp = if ty.is_signed() { "s" } else { "u" };
        let bits = if wide { 64 } else { 32 };
        let p = self.a.tmp(Class::Pred);
        self.a
            .ins(format_args!("setp.lt.{cmp}{bits} {p}, {s}, {e}"));
        self.a.bra_if(&p, false, &done);
        let v = self.declare_var(var)?;
        let Some(v) = v.opd().cloned() else {
            return Err(self.cx.unsupported(
                "a `for` loop over a non-integer variable".to_string(),
                "an integer loop variable",
            ));
        };
        match dir {
            ForDir::Up => self.a.mov_to(&v, &s),
            ForDir::Down => self.a.ins(format_args!("sub.s{bits} {v}, {e}, 1")),
        }
        self.a.put(&head);
        self.frame_mut().loops.push((next.clone(), done.clone()));
        let r = self.diverged(|g| g.block(body));
        self.frame_mut().loops.pop();
        r?;
        self.a.put(&next);
        let rem = self.a.tmp(c);
        let p = self.a.tmp(Class::Pred);
        match dir {
            ForDir::Up => {
                self.a.ins(format_args!("sub.s{bits} {rem}, {e}, {v}"));
                self.a
                    .ins(format_args!("setp.le.u{bits} {p}, {rem}, {stw}"));
                self.a.bra_if(&p, true, &done);
                self.a.ins(format_args!("add.s{bits} {v}, {v}, {stw}"));
            }
            ForDir::Down => {
                self.a.ins(format_args!("sub.s{bits} {rem}, {v}, {s}"));
                self.a
                    .ins(format_args!("setp.lt.u{bits} {p}, {rem}, {stw}"));
                self.a.bra_if(&p, true, &done);
                self.a.ins(format_args!("sub.s{bits} {v}, {v}, {stw}"));
            }
        }
        self.a.bra(&head);
        self.a.put(&done);
        Ok(())
    }

    /// Jumps to `fail` unless `v` (of type `ty`) matches `pat`; binds the pattern's variables
    /// when it matches.
    pub(crate) fn pattern_test(&mut self, v: &Val, ty: &Type, pat: &Pattern, fail: &str) -> R<()> {
        match pat {
            Pattern::Wildcard => Ok(()),
            Pattern::Case {
                variant,
                case,
                bindings,
            } => {
                let (idx, tag, cases) = self.case_of(v, variant, case)?;
                let p = self.a.tmp(Class::Pred);
                self.a.ins(format_args!("setp.ne.u32 {p}, {tag}, {idx}"));
                self.a.bra_if(&p, true, fail);
                let payload = cases.get(idx).cloned().flatten().unwrap_or_default();
                for (b, pv) in bindings.iter().zip(payload) {
                    let dst = self.declare_var(*b)?;
                    self.assign_val(&dst, &pv)?;
                }
                Ok(())
            }
            _ => {
                let ok = self.a.label("pat_ok");
                self.pattern_jump(v, ty, pat, &ok)?;
                self.a.bra(fail);
                self.a.put(&ok);
                Ok(())
            }
        }
    }

    /// Jumps to `ok` if `v` matches `pat` (a pattern without bindings); falls through otherwise.
    fn pattern_jump(&mut self, v: &Val, ty: &Type, pat: &Pattern, ok: &str) -> R<()> {
        match pat {
            Pattern::Wildcard => self.a.bra(ok),
            Pattern::Or(alts) => {
                for a in alts {
                    self.pattern_jump(v, ty, a, ok)?;
                }
            }
            Pattern::Case { variant, case, .. } => {
                let (idx, tag, _) = self.case_of(v, variant, case)?;
                let p = self.a.tmp(Class::Pred);
                self.a.ins(format_args!("setp.eq.u32 {p}, {tag}, {idx}"));
                self.a.bra_if(&p, true, ok);
            }
            Pattern::Int(c) => {
                let (s, t) = self.int_scrutinee(v, ty)?;
                let p = self.a.tmp(Class::Pred);
                self.a
                    .ins(format_args!("setp.eq{t} {p}, {s}, {}", const_text(*c)));
                self.a.bra_if(&p, true, ok);
            }
            Pattern::Range(lo, hi) => {
                let (s, t) = self.int_scrutinee(v, ty)?;
                let p = self.a.tmp(Class::Pred);
                let q = self.a.tmp(Class::Pred);
                self.a
                    .ins(format_args!("setp.ge{t} {p}, {s}, {}", const_text(*lo)));
                self.a
                    .ins(format_args!("setp.le{t} {q}, {s}, {}", const_text(*hi)));
                self.a.ins(format_args!("and.pred {p}, {p}, {q}"));
                self.a.bra_if(&p, true, ok);
            }
        }
        Ok(())
    }

    /// For pattern `variant::case` on the variant value `v`: the case's position, `v`'s tag and
    /// its cases' payloads.
    fn case_of<'v>(
        &self,
        v: &'v Val,
        variant: &str,
        case: &str,
    ) -> R<(usize, &'v Opd, &'v CasePayloads)> {
        let idx = self.cx.variant(variant)?.case_index(case).unwrap_or(0);
        let Val::Variant { tag, cases, .. } = v else {
            return Err(self.cx.unsupported(
                format!("pattern `{variant}::{case}` on a non-variant value"),
                "a variant scrutinee",
            ));
        };
        Ok((idx, tag, cases))
    }

    fn int_scrutinee(&self, v: &Val, ty: &Type) -> R<(Opd, &'static str)> {
        match (v, ty.as_scalar()) {
            (Val::Scalar(o, _), Some(t)) if t.is_integer() => {
                Ok((o.clone(), super::asm::ptx_type(t)))
            }
            _ => Err(self.cx.unsupported(
                "an integer pattern on a non-integer value",
                "an integer scrutinee",
            )),
        }
    }

    /// Jumps to `target` when `cond` evaluates to `when`; `&&`, `||` and `!` become branches
    /// (short-circuit, nothing computed that Rust would not compute).
    pub(crate) fn branch(&mut self, cond: &'k Expr, when: bool, target: &str) -> R<()> {
        use spoc_ir::{BinOp, UnOp};
        match &cond.kind {
            ExprKind::Const(Const::Bool(c)) => {
                if *c == when {
                    self.a.bra(target);
                }
                Ok(())
            }
            ExprKind::Unary {
                op: UnOp::Not,
                operand,
            } if operand.ty == Type::BOOL => self.branch(operand, !when, target),
            ExprKind::Binary { op, lhs, rhs } if op.is_logical() => {
                let is_and = *op == BinOp::LogicalAnd;
                if is_and != when {
                    // `a && b` false: either is false; `a || b` true: either is true.
                    self.branch(lhs, when, target)?;
                    self.diverged(|g| g.branch(rhs, when, target))
                } else {
                    let skip = self.a.label(if is_and { "and" } else { "or" });
                    self.branch(lhs, !when, &skip)?;
                    self.diverged(|g| g.branch(rhs, when, target))?;
                    self.a.put(&skip);
                    Ok(())
                }
            }
            _ => {
                let p = self.scalar(cond)?;
                let p = self.pred_reg(&p);
                self.a.bra_if(&p, when, target);
                Ok(())
            }
        }
    }

    /// A predicate operand in a register (`mov.pred` of a constant).
    pub(crate) fn pred_reg(&mut self, p: &Opd) -> Opd {
        self.a.reg(p)
    }

    /// Inlines a call of helper `func` with argument values `args`.
    pub(crate) fn inline_call(&mut self, func: &'k Function, args: Vec<Val>) -> R<Val> {
        self.inlined += 1;
        let n = self.inlined;
        let prefix = format!("{}{}", func.name, n);
        let names = spoc_ir::print::var_names(&func.vars);
        let idents: Vec<String> = crate::names::renamed_idents(&names)
            .as_deref()
            .unwrap_or(&names)
            .iter()
            .map(|i| format!("{prefix}_{i}"))
            .collect();
        let ret_label = self.a.label(&format!("{}_{n}_ret", func.name));
        let result = self.fresh_val(&func.ret, Some(&format!("{prefix}_ret")))?;
        self.a
            .comment(format!("inlined call of helper `{}`", func.name));
        self.frames.push(Frame {
            func: Some(func),
            vars: &func.vars,
            idents: Some(idents),
            vals: vec![None; func.vars.len()],
            loops: Vec::new(),
            ret: Some((ret_label.clone(), result.clone())),
            show: spoc_ir::print::Show::with_names(self.cx.kernel, Some(func), names),
            early_return: has_early_return(&func.body),
        });
        let r = (|| -> R<()> {
            for (p, v) in func.params.iter().zip(args) {
                match (&p.ty, &v) {
                    (Type::Array { space, .. }, Val::Array(arr)) => {
                        let local = *space == MemSpace::Local;
                        if local && p.mutable {
                            let dst = self.declare_var(p.var)?;
                            self.assign_val(&dst, &Val::Array(arr.clone()))?;
                        } else {
                            self.bind(p.var, v.clone());
                        }
                    }
                    _ => {
                        let dst = self.declare_var(p.var)?;
                        self.assign_val(&dst, &v)?;
                    }
                }
            }
            self.block(&func.body)
        })();
        self.frames.pop();
        r?;
        self.a.put(&ret_label);
        Ok(result)
    }

    /// The immediate operand of integer constant `c` in class of its type.
    pub(crate) fn const_opd(&self, c: Const) -> Opd {
        super::ops::const_opd(c)
    }
}

/// The text of an integer constant.
fn const_text(c: Const) -> String {
    match c {
        Const::I32(v) => v.to_string(),
        Const::U32(v) => v.to_string(),
        Const::I64(v) => v.to_string(),
        Const::U64(v) => b64_imm(v as i128).text.to_string(),
        _ => "0".into(),
    }
}
