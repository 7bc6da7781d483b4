//! The AST as Rust source: a `#[kernel] fn` (and its `#[device]` helpers) that rustc, the
//! `#[kernel]` attribute and `spoc_frontend::lower_kernel_source` all read. Every operation is
//! parenthesized, every literal suffixed, so precedence and inference never matter.

use crate::ast::*;
use crate::visit::{uses, Uses};

/// A literal as Rust writes it (negative values parenthesized).
pub fn lit(v: Val) -> String {
    match v {
        Val::Bool(b) => b.to_string(),
        Val::I32(i32::MIN) => "i32::MIN".into(),
        Val::I64(i64::MIN) => "i64::MIN".into(),
        Val::I32(x) if x < 0 => format!("(-{}i32)", x.unsigned_abs()),
        Val::I64(x) if x < 0 => format!("(-{}i64)", x.unsigned_abs()),
        Val::I32(x) => format!("{x}i32"),
        Val::I64(x) => format!("{x}i64"),
        Val::U32(x) => format!("{x}u32"),
        Val::U64(x) => format!("{x}u64"),
        Val::Usize(x) => format!("{x}usize"),
        Val::F32(x) => float(
            x as f64,
            x.is_nan(),
            x.is_sign_negative(),
            "f32",
            &format!("{:?}", x.abs()),
        ),
        Val::F64(x) => float(
            x,
            x.is_nan(),
            x.is_sign_negative(),
            "f64",
            &format!("{:?}", x.abs()),
        ),
    }
}

fn float(x: f64, nan: bool, neg: bool, ty: &str, abs: &str) -> String {
    if nan {
        return format!("{ty}::NAN");
    }
    if x.is_infinite() {
        return if neg {
            format!("{ty}::NEG_INFINITY")
        } else {
            format!("{ty}::INFINITY")
        };
    }
    if neg {
        format!("(-{abs}{ty})")
    } else {
        format!("{abs}{ty}")
    }
}

/// A pattern literal (negative values unparenthesized, as patterns need).
fn pat_lit(v: Val) -> String {
    let s = lit(v);
    match s.strip_prefix('(').and_then(|s| s.strip_suffix(')')) {
        Some(inner) => inner.to_string(),
        None => s,
    }
}

/// Prints kernels.
pub struct Printer<'k> {
    k: &'k Kernel,
    out: String,
    indent: usize,
}

/// The kernel's parameter list as `(name, Rust type)` pairs, in order (what the harness binds).
pub fn param_list(k: &Kernel, u: &Uses) -> Vec<(String, String)> {
    let mut ps = vec![];
    for &p in &u.params {
        ps.push((k.var_name(p), k.ty_of(p).name().to_string()));
    }
    for t in &u.inputs {
        ps.push((format!("x_{}", t.name()), format!("&[{}]", t.name())));
    }
    for t in &u.outputs {
        ps.push((format!("o_{}", t.name()), format!("&mut [{}]", t.name())));
    }
    for &a in &u.accs {
        ps.push((format!("acc{a}"), format!("&mut [{}]", k.accs[a].ty.name())));
    }
    ps
}

/// The kernel alone (no helpers), with `#[kernel]` if `attr`.
pub fn kernel_fn(k: &Kernel, attr: bool) -> String {
    let mut p = Printer {
        k,
        out: String::new(),
        indent: 0,
    };
    p.kernel(attr);
    p.out
}

/// The kernel's helpers as `#[device]` fns.
pub fn helpers(k: &Kernel) -> String {
    let mut p = Printer {
        k,
        out: String::new(),
        indent: 0,
    };
    let u = uses(k);
    for &h in &u.helpers {
        p.helper(h);
    }
    p.out
}

/// The name of helper `h` of kernel `k`.
pub fn helper_name(k: &Kernel, h: usize) -> String {
    format!("{}_h{h}", k.name)
}

/// Helpers then the kernel, with their attributes: what a compiled test `include!`s.
pub fn full(k: &Kernel) -> String {
    let mut s = helpers(k);
    s.push_str(&kernel_fn(k, true));
    s
}

impl Printer<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn kernel(&mut self, attr: bool) {
        let k = self.k;
        let u = uses(k);
        let params: Vec<String> = param_list(k, &u)
            .into_iter()
            .map(|(n, t)| format!("{n}: {t}"))
            .collect();
        if attr {
            self.line("#[kernel]");
        }
        self.line(&format!("fn {}({}) {{", k.name, params.join(", ")));
        self.indent += 1;
        if u.gid {
            self.line("let gid = global_id_x();");
        }
        for &s in &u.shared {
            self.line(&format!(
                "let sh{s} = shared_array::<{}, {BLOCK}>();",
                k.shared[s].ty.name()
            ));
        }
        for s in &k.body {
            self.stmt(s);
        }
        self.indent -= 1;
        self.line("}");
    }

    fn helper(&mut self, h: usize) {
        let k = self.k;
        let hp = &k.helpers[h];
        let params: Vec<String> = hp
            .params
            .iter()
            .map(|&p| format!("{}: {}", k.var_name(p), k.ty_of(p).name()))
            .collect();
        self.line("#[device]");
        self.line(&format!(
            "fn {}({}) -> {} {{",
            helper_name(k, h),
            params.join(", "),
            hp.ret.name()
        ));
        self.indent += 1;
        self.block_body(&hp.body);
        self.indent -= 1;
        self.line("}");
    }

    fn block_body(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &b.tail {
            let t = self.expr(t);
            self.line(&t);
        }
    }

    fn braced(&mut self, head: &str, b: &Block, tail: &str) {
        self.line(&format!("{head}{{"));
        self.indent += 1;
        self.block_body(b);
        self.indent -= 1;
        self.line(&format!("}}{tail}"));
    }

    /// A loop bounded by counter `c`: `c` declared (`u32`, 0), the loop's first line `head`,
    /// then in the loop `if c >= limit { break; }` when `limit` is given, `c += 1u32;` and
    /// `body`.
    fn counted_loop(&mut self, c: &str, head: &str, limit: Option<u32>, body: &Block) {
        self.line(&format!("let mut {c}: u32 = 0u32;"));
        self.line(head);
        self.indent += 1;
        if let Some(limit) = limit {
            self.line(&format!("if {c} >= {limit}u32 {{"));
            self.line("    break;");
            self.line("}");
        }
        self.line(&format!("{c} += 1u32;"));
        self.block_body(body);
        self.indent -= 1;
        self.line("}");
    }

    fn place(&mut self, p: &Place) -> String {
        match p {
            Place::Var(v) => self.k.var_name(*v),
            Place::Arr(a, i) => self.arr_index(*a, i),
            Place::Out(t, slot) => out_slot(*t, *slot),
            Place::Shared(sh) => format!("sh{sh}[thread_idx_x()]"),
        }
    }

    fn arr_index(&mut self, a: VarId, i: &Expr) -> String {
        let len = match self.k.vars[a.0 as usize].kind {
            VarKind::Array { len } => len,
            _ => 1,
        };
        format!("{}[{} % {len}usize]", self.k.var_name(a), self.expr(i))
    }

    fn stmt(&mut self, s: &Stmt) {
        let k = self.k;
        match s {
            Stmt::Let { var, init } => {
                let m = match k.vars[var.0 as usize].kind {
                    VarKind::Local { mutable: true } => "mut ",
                    _ => "",
                };
                let e = self.expr(init);
                self.line(&format!(
                    "let {m}{}: {} = {e};",
                    k.var_name(*var),
                    k.ty_of(*var).name()
                ));
            }
            Stmt::LetArr { var, init } => {
                let len = match k.vars[var.0 as usize].kind {
                    VarKind::Array { len } => len,
                    _ => 1,
                };
                let e = self.expr(init);
                let t = k.ty_of(*var).name();
                self.line(&format!(
                    "let mut {}: [{t}; {len}] = [{e}; {len}];",
                    k.var_name(*var)
                ));
            }
            Stmt::Assign { place, op, value } => {
                let v = match op {
                    Some(o @ (BinOp::Div | BinOp::Rem)) if value.ty.is_int() => {
                        let _ = o;
                        self.divisor(value)
                    }
                    _ => self.expr(value),
                };
                let p = self.place(place);
                let op = op.map(|o| o.symbol()).unwrap_or("");
                self.line(&format!("{p} {op}= {v};"));
            }
            Stmt::Atomic {
                target,
                op,
                index,
                value,
            } => {
                let t = match (target, index) {
                    (AtomTarget::Acc(a), Some(i)) => {
                        format!("acc{a}[{} % {ACC_LEN}usize]", self.expr(i))
                    }
                    (AtomTarget::Acc(a), None) => format!("acc{a}[0usize]"),
                    (AtomTarget::Shared(sh), Some(i)) => {
                        format!("sh{sh}[{} % {BLOCK}usize]", self.expr(i))
                    }
                    (AtomTarget::Shared(sh), None) => format!("sh{sh}[thread_idx_x()]"),
                };
                let v = self.expr(value);
                self.line(&format!("{}(&mut {t}, {v});", op.name()));
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(cond);
                match els {
                    None => self.braced(&format!("if {c} "), then, ""),
                    Some(e) => {
                        self.braced(&format!("if {c} "), then, "");
                        // `} else {` on its own line would be fine too; keep Rust's style.
                        self.out.truncate(self.out.len() - 1);
                        self.out.push_str(" else {\n");
                        self.indent += 1;
                        self.block_body(e);
                        self.indent -= 1;
                        self.line("}");
                    }
                }
            }
            Stmt::While {
                counter,
                limit,
                cond,
                body,
            } => {
                let c = k.var_name(*counter);
                let extra = match cond {
                    Some(e) => format!(" && {}", self.expr(e)),
                    None => String::new(),
                };
                let head = format!("while ({c} < {limit}u32){extra} {{");
                self.counted_loop(&c, &head, None, body);
            }
            Stmt::Loop {
                counter,
                limit,
                body,
            } => self.counted_loop(&k.var_name(*counter), "loop {", Some(*limit), body),
            Stmt::For(l) => {
                let (lo, hi) = (self.expr(&l.lo), self.expr(&l.hi));
                let mut range = format!("({lo}..{hi})");
                if l.rev {
                    range.push_str(".rev()");
                }
                if let Some(s) = l.step {
                    range.push_str(&format!(".step_by({s}usize)"));
                }
                self.braced(
                    &format!("for {} in {range} ", k.var_name(l.var)),
                    &l.body,
                    "",
                );
            }
            Stmt::Match {
                scrut,
                arms,
                default,
            } => {
                let s = self.expr(scrut);
                self.line(&format!("match {s} {{"));
                self.indent += 1;
                for a in arms {
                    let pats = pats(&a.pats);
                    self.braced(&format!("{pats} => "), &a.body, "");
                }
                self.braced("_ => ", default, "");
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Block(b) => self.braced("", b, ""),
            Stmt::Break => self.line("break;"),
            Stmt::Continue => self.line("continue;"),
            Stmt::Return => self.line("return;"),
            Stmt::Sync => self.line("sync_threads();"),
            Stmt::Warp {
                var,
                op,
                value,
                operand,
            } => {
                let v = self.expr(value);
                let args = match operand {
                    Some(o) => format!("{v}, {}", self.expr(o)),
                    None => v,
                };
                self.line(&format!(
                    "let {}: {} = {}({args});",
                    k.var_name(*var),
                    k.ty_of(*var).name(),
                    op.name()
                ));
            }
        }
    }

    /// An integer divisor: a non-zero literal as is, anything else as `(d | 1)`.
    fn divisor(&mut self, d: &Expr) -> String {
        if divisor_is_plain(d) {
            self.expr(d)
        } else {
            format!("({} | {})", self.expr(d), lit(Val::from_bits(d.ty, 1)))
        }
    }

    /// A block used as a value, on one line per statement, as an expression string.
    fn block_expr(&mut self, b: &Block) -> String {
        let saved = std::mem::take(&mut self.out);
        let saved_indent = self.indent;
        self.indent = 0;
        for s in &b.stmts {
            self.stmt(s);
        }
        let body = std::mem::replace(&mut self.out, saved);
        self.indent = saved_indent;
        let tail = b.tail.as_ref().map(|t| self.expr(t)).unwrap_or_default();
        let stmts: Vec<&str> = body.lines().collect();
        if stmts.is_empty() {
            format!("{{ {tail} }}")
        } else {
            format!("{{ {} {tail} }}", stmts.join(" "))
        }
    }

    /// An expression as a string.
    pub fn expr(&mut self, e: &Expr) -> String {
        let k = self.k;
        match &e.kind {
            ExprKind::Lit(v) => lit(*v),
            ExprKind::Var(v) => k.var_name(*v),
            ExprKind::Intr(i) => match i {
                Intr::Gid => "gid".into(),
                Intr::Tid => "thread_idx_x()".into(),
                Intr::BlockIdx => "block_idx_x()".into(),
                Intr::BlockDim => "block_dim_x()".into(),
                Intr::GridDim => "grid_dim_x()".into(),
                Intr::GlobalSize => "global_size_x()".into(),
                Intr::LaneId => "lane_id()".into(),
                Intr::WarpSize => "warp_size()".into(),
            },
            ExprKind::Input { index, wrap } => {
                let t = e.ty.name();
                let i = self.expr(index);
                match wrap {
                    Wrap::Lit => format!("x_{t}[{i} % {IN_LEN}usize]"),
                    Wrap::Len => format!("x_{t}[{i} % x_{t}.len()]"),
                }
            }
            ExprKind::OutRead { slot } => out_slot(e.ty, *slot),
            ExprKind::ArrRead { arr, index } => self.arr_index(*arr, index),
            ExprKind::SharedRead { sh, index } => match index {
                None => format!("sh{sh}[thread_idx_x()]"),
                Some(i) => format!("sh{sh}[{} % {BLOCK}usize]", self.expr(i)),
            },
            ExprKind::Len(l) => match l {
                LenOf::Input(t) => format!("x_{}.len()", t.name()),
                LenOf::Output(t) => format!("o_{}.len()", t.name()),
                LenOf::Array(a) => format!("{}.len()", k.var_name(*a)),
                LenOf::Shared(sh) => format!("sh{sh}.len()"),
            },
            ExprKind::Unary(op, a) => {
                let a = self.expr(a);
                match op {
                    UnOp::Neg => format!("(-{a})"),
                    UnOp::Not => format!("(!{a})"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a);
                let b = if matches!(op, BinOp::Div | BinOp::Rem) && b.ty.is_int() {
                    self.divisor(b)
                } else {
                    self.expr(b)
                };
                format!("({a} {} {b})", op.symbol())
            }
            ExprKind::Cast(a) => format!("({} as {})", self.expr(a), e.ty.name()),
            ExprKind::Method(m, args) => {
                let recv = self.expr(&args[0]);
                let rest: Vec<String> = args[1..].iter().map(|a| self.expr(a)).collect();
                let recv = if recv.starts_with('(') {
                    recv
                } else {
                    format!("({recv})")
                };
                format!("{recv}.{}({})", m.name(), rest.join(", "))
            }
            ExprKind::If(c, a, b) => {
                let c = self.expr(c);
                let a = self.block_expr(a);
                let b = self.block_expr(b);
                format!("(if {c} {a} else {b})")
            }
            ExprKind::Block(b) => format!("({})", self.block_expr(b)),
            ExprKind::Match(s, arms, d) => {
                let s = self.expr(s);
                let mut parts = vec![];
                for a in arms {
                    let body = self.block_expr(&a.body);
                    parts.push(format!("{} => {body},", pats(&a.pats)));
                }
                let d = self.block_expr(d);
                parts.push(format!("_ => {d},"));
                format!("(match {s} {{ {} }})", parts.join(" "))
            }
            ExprKind::Call(h, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{}({})", helper_name(k, *h), args.join(", "))
            }
        }
    }
}

fn out_slot(t: Ty, slot: u32) -> String {
    format!("o_{}[gid * {SLOTS}usize + {slot}usize]", t.name())
}

fn pats(ps: &[Pat]) -> String {
    ps.iter()
        .map(|p| match p {
            Pat::Lit(v) => pat_lit(*v),
            Pat::Range(a, b) => format!("{}..={}", pat_lit(*a), pat_lit(*b)),
        })
        .collect::<Vec<_>>()
        .join(" | ")
}
