//! The printer: IR as Rust-like text.
//!
//! What users see in error messages and in `SPOC_DUMP` output, so it favours clarity over
//! brevity:
//! - record and variant types first, then the helper functions (in [`Kernel::functions`] order),
//!   then the kernel;
//! - every binary operation is parenthesised (`((a * x[i]) + y[i])`), so precedence never needs to
//!   be guessed;
//! - constants carry a Rust suffix unless they are `i32` or `f64` (Rust's defaults), so the text read
//!   back as Rust has the same types (`1u32`, `2.0f32`, `7`, `0.5`);
//! - variables are printed by their source name; when several variables of one function share a
//!   name (shadowing), the later ones get `_1`, `_2`, … (see [`var_names`]);
//! - memory spaces are spelled out (`x: global [f32]`, `y: mut global [f32]`, `shared tile: [f32; 256]`).
//!
//! The output is stable: the same kernel always prints the same text. Printing never panics, even
//! on an ill-formed kernel (an unknown variable prints as `$v7`), so that error messages can show
//! any IR.

use crate::expr::{Const, Expr, ExprKind, LValue, Pattern, UnOp};
use crate::intrinsic::{FenceScope, Intrinsic};
use crate::kernel::{Function, Kernel, Param, VarDecl};
use crate::stmt::{Block, ForDir, Stmt, StmtKind};
use crate::types::{RecordDef, Type, VariantDef};
use std::collections::HashSet;
use std::fmt::{self, Write as _};

const INDENT: &str = "    ";

/// The printed name of every variable of a table ([`Kernel::vars`] or [`Function::vars`]),
/// indexed like the table.
///
/// The first variable with a given source name keeps it; later ones get the first free
/// `name_1`, `name_2`, … that is no other variable's source name, so the result has no
/// duplicates. Empty names print as `_v<index>`. Deterministic: the same table gives the same
/// names. Code generators may use these as identifiers for readable output.
pub fn var_names(vars: &[VarDecl]) -> Vec<String> {
    // foldhash, not SipHash: an unrolled kernel has thousands of variables.
    type Fast = foldhash::fast::FixedState;
    // Few distinct source names (an unrolled body repeats them): no capacity reserved.
    let reserved: HashSet<&str, Fast> = vars.iter().map(|v| v.name.as_str()).collect();
    let mut used: HashSet<String, Fast> =
        HashSet::with_capacity_and_hasher(vars.len(), Fast::default());
    // The next suffix to try per base name: an unrolled loop declares hundreds of variables of
    // one name, and trying `_1, _2, …` from 1 each time would be quadratic.
    let mut next: std::collections::HashMap<&str, u32, Fast> = Default::default();
    let mut out = Vec::with_capacity(vars.len());
    for (i, v) in vars.iter().enumerate() {
        let base = if v.name.is_empty() {
            format!("_v{i}")
        } else {
            v.name.clone()
        };
        let name = if !used.contains(&base) {
            base
        } else {
            // Keyed by the source name; an unnamed variable's base `_v<i>` is its own.
            let mut first = 1;
            let k = if v.name.is_empty() {
                &mut first
            } else {
                next.entry(v.name.as_str()).or_insert(1)
            };
            loop {
                let cand = format!("{base}_{k}");
                *k += 1;
                if !used.contains(&cand) && !reserved.contains(cand.as_str()) {
                    break cand;
                }
            }
        };
        used.insert(name.clone());
        out.push(name);
    }
    out
}

/// A printer of one function's statements and expressions, its variable names computed once
/// (what [`expr_to_string`] and [`stmt_to_string`] compute per call): for code generators that
/// describe every statement.
pub struct Show<'a>(Printer<'a>);

impl<'a> Show<'a> {
    /// A printer for the kernel body (`function` = `None`) or helper `function` of `kernel`.
    pub fn new(kernel: &'a Kernel, function: Option<&'a Function>) -> Show<'a> {
        let vars = function.map_or(&kernel.vars[..], |f| &f.vars[..]);
        Show(Printer::new(vars, &kernel.records))
    }

    /// [`Show::new`] with the function's [`var_names`], computed already by the caller.
    pub fn with_names(
        kernel: &'a Kernel,
        function: Option<&'a Function>,
        names: Vec<String>,
    ) -> Show<'a> {
        let vars = function.map_or(&kernel.vars[..], |f| &f.vars[..]);
        Show(Printer {
            names,
            vars,
            records: &kernel.records,
        })
    }

    /// `e` as [`expr_to_string`] prints it.
    pub fn expr(&self, e: &Expr) -> String {
        self.0.render(|p, out| p.expr(out, e))
    }

    /// `s` as [`stmt_to_string`] prints it.
    pub fn stmt(&self, s: &Stmt) -> String {
        self.0.render(|p, out| p.stmt(out, 0, s))
    }

    /// The printed name of each variable of the function ([`var_names`]), indexed like its table.
    pub fn names(&self) -> &[String] {
        &self.0.names
    }

    /// [`Show::expr`] appended to `out`.
    pub fn expr_into(&self, out: &mut String, e: &Expr) {
        self.0.expr(out, e)
    }

    /// [`Show::stmt`] appended to `out`.
    pub fn stmt_into(&self, out: &mut String, s: &Stmt) {
        self.0.stmt(out, 0, s)
    }
}

/// Prints expression `e` of the kernel body (`function` = `None`) or of helper `function`, with
/// the same variable names and record field names as the kernel's full printout.
pub fn expr_to_string(kernel: &Kernel, function: Option<&Function>, e: &Expr) -> String {
    let vars = function.map_or(&kernel.vars[..], |f| &f.vars[..]);
    Printer::new(vars, &kernel.records).render(|p, out| p.expr(out, e))
}

/// Prints statement `s` (and the statements nested in it) like [`expr_to_string`], with no
/// leading indentation.
pub fn stmt_to_string(kernel: &Kernel, function: Option<&Function>, s: &Stmt) -> String {
    let vars = function.map_or(&kernel.vars[..], |f| &f.vars[..]);
    Printer::new(vars, &kernel.records).render(|p, out| p.stmt(out, 0, s))
}

/// Prints an expression, statement or place of one function: it knows the variables' printed
/// names and the records' field names.
pub(crate) struct Printer<'a> {
    names: Vec<String>,
    vars: &'a [VarDecl],
    records: &'a [RecordDef],
}

impl<'a> Printer<'a> {
    /// A printer for the function whose variable table is `vars`.
    pub(crate) fn new(vars: &'a [VarDecl], records: &'a [RecordDef]) -> Printer<'a> {
        Printer {
            names: var_names(vars),
            vars,
            records,
        }
    }

    /// A printer that names variables by their source names, without disambiguation (error
    /// messages speak the user's names).
    pub(crate) fn plain(vars: &'a [VarDecl], records: &'a [RecordDef]) -> Printer<'a> {
        Printer {
            names: vars.iter().map(|v| v.name.clone()).collect(),
            vars,
            records,
        }
    }

    /// What `print` writes with this printer into a fresh string.
    fn render(&self, print: impl FnOnce(&Self, &mut String)) -> String {
        let mut out = String::new();
        print(self, &mut out);
        out
    }

    /// A printer with no variable names (variables print as `$v<n>`) and no records.
    fn bare() -> Printer<'static> {
        Printer {
            names: Vec::new(),
            vars: &[],
            records: &[],
        }
    }

    fn var(&self, out: &mut String, id: crate::VarId) {
        match self.names.get(id.0 as usize) {
            Some(n) => out.push_str(n),
            None => {
                let _ = write!(out, "$v{}", id.0);
            }
        }
    }

    pub(crate) fn constant(out: &mut String, c: Const) {
        let _ = match c {
            Const::Bool(b) => write!(out, "{b}"),
            Const::I32(v) => write!(out, "{v}"),
            Const::I64(v) => write!(out, "{v}i64"),
            Const::U32(v) => write!(out, "{v}u32"),
            Const::U64(v) => write!(out, "{v}u64"),
            Const::F16(bits) => write!(out, "f16::from_bits(0x{bits:04x})"),
            Const::BF16(bits) => write!(out, "bf16::from_bits(0x{bits:04x})"),
            Const::F32(bits) => {
                let v = f32::from_bits(bits);
                if v.is_nan() {
                    if bits == f32::NAN.to_bits() {
                        write!(out, "f32::NAN")
                    } else {
                        write!(out, "f32::from_bits(0x{bits:08x})")
                    }
                } else if v.is_infinite() {
                    let sign = if v < 0.0 { "NEG_" } else { "" };
                    write!(out, "f32::{sign}INFINITY")
                } else {
                    write!(out, "{v:?}f32")
                }
            }
            Const::F64(bits) => {
                let v = f64::from_bits(bits);
                if v.is_nan() {
                    if bits == f64::NAN.to_bits() {
                        write!(out, "f64::NAN")
                    } else {
                        write!(out, "f64::from_bits(0x{bits:016x})")
                    }
                } else if v.is_infinite() {
                    let sign = if v < 0.0 { "NEG_" } else { "" };
                    write!(out, "f64::{sign}INFINITY")
                } else {
                    write!(out, "{v:?}")
                }
            }
        };
    }

    /// Prints `e` so that a postfix (`.method()`, `[i]`, `.field`) can follow it unambiguously.
    fn postfix_operand(&self, out: &mut String, e: &Expr) {
        let needs_parens = match &e.kind {
            ExprKind::Unary { .. } => true,
            ExprKind::Const(c) => {
                let mut s = String::new();
                Self::constant(&mut s, *c);
                s.starts_with('-')
            }
            _ => false,
        };
        if needs_parens {
            out.push('(');
            self.expr(out, e);
            out.push(')');
        } else {
            self.expr(out, e);
        }
    }

    fn list(&self, out: &mut String, items: &[Expr]) {
        for (i, a) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            self.expr(out, a);
        }
    }

    pub(crate) fn expr(&self, out: &mut String, e: &Expr) {
        match &e.kind {
            ExprKind::Const(c) => Self::constant(out, *c),
            ExprKind::Var(v) => self.var(out, *v),
            ExprKind::Index { array, index } => {
                self.postfix_operand(out, array);
                out.push('[');
                self.expr(out, index);
                out.push(']');
            }
            ExprKind::Field { base, field } => {
                self.postfix_operand(out, base);
                out.push('.');
                out.push_str(field);
            }
            ExprKind::Unary { op, operand } => {
                out.push(match op {
                    UnOp::Neg => '-',
                    UnOp::Not => '!',
                });
                // `--x` would read as a decrement; `-(-x)` does not.
                if matches!(operand.kind, ExprKind::Unary { .. })
                    || matches!(operand.kind, ExprKind::Const(_)) && self.starts_with_minus(operand)
                {
                    out.push('(');
                    self.expr(out, operand);
                    out.push(')');
                } else {
                    self.postfix_operand(out, operand);
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                out.push('(');
                self.expr(out, lhs);
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                self.expr(out, rhs);
                out.push(')');
            }
            ExprKind::Intrinsic { intrinsic, args } => match intrinsic {
                Intrinsic::Math(m) if !args.is_empty() => {
                    self.postfix_operand(out, &args[0]);
                    out.push('.');
                    out.push_str(m.name());
                    out.push('(');
                    self.list(out, &args[1..]);
                    out.push(')');
                }
                _ => {
                    out.push_str(&intrinsic.name());
                    out.push('(');
                    self.list(out, args);
                    out.push(')');
                }
            },
            ExprKind::Cast { value, to } => {
                out.push('(');
                self.expr(out, value);
                let _ = write!(out, " as {to})");
            }
            ExprKind::Call { func, args } => {
                out.push_str(func);
                out.push('(');
                self.list(out, args);
                out.push(')');
            }
            ExprKind::Select { cond, then, els } => {
                out.push_str("if ");
                self.expr(out, cond);
                out.push_str(" { ");
                self.expr(out, then);
                out.push_str(" } else { ");
                self.expr(out, els);
                out.push_str(" }");
            }
            ExprKind::Match { scrutinee, arms } => {
                out.push_str("match ");
                self.expr(out, scrutinee);
                out.push_str(" {");
                for (i, (p, a)) in arms.iter().enumerate() {
                    out.push_str(if i > 0 { ", " } else { " " });
                    self.pattern(out, p);
                    out.push_str(" => ");
                    self.expr(out, a);
                }
                out.push_str(" }");
            }
            ExprKind::Len(a) => {
                out.push_str("len(");
                self.expr(out, a);
                out.push(')');
            }
            ExprKind::RecordLit { record, fields } => {
                out.push_str(record);
                let def = self.records.iter().find(|r| &r.name == record);
                out.push_str(" {");
                for (i, v) in fields.iter().enumerate() {
                    out.push_str(if i > 0 { ", " } else { " " });
                    match def.and_then(|d| d.fields.get(i)) {
                        Some(f) => out.push_str(&f.name),
                        None => {
                            let _ = write!(out, "#{i}");
                        }
                    }
                    out.push_str(": ");
                    self.expr(out, v);
                }
                out.push_str(if fields.is_empty() { "}" } else { " }" });
            }
            ExprKind::VariantLit {
                variant,
                case,
                payload,
            } => {
                let _ = write!(out, "{variant}::{case}");
                if !payload.is_empty() {
                    out.push('(');
                    self.list(out, payload);
                    out.push(')');
                }
            }
            ExprKind::ArrayRepeat { value, len } => {
                out.push('[');
                self.expr(out, value);
                let _ = write!(out, "; {len}]");
            }
            ExprKind::VectorLit(lanes) => {
                match &e.ty {
                    Type::Vector { .. } => {
                        let _ = write!(out, "{}", e.ty);
                    }
                    _ => out.push_str("vector"),
                }
                out.push('(');
                self.list(out, lanes);
                out.push(')');
            }
        }
    }

    fn starts_with_minus(&self, e: &Expr) -> bool {
        let mut s = String::new();
        self.expr(&mut s, e);
        s.starts_with('-')
    }

    pub(crate) fn lvalue(&self, out: &mut String, l: &LValue) {
        match l {
            LValue::Var(v) => self.var(out, *v),
            LValue::Index { base, index } => {
                self.lvalue(out, base);
                out.push('[');
                self.expr(out, index);
                out.push(']');
            }
            LValue::Field { base, field } => {
                self.lvalue(out, base);
                out.push('.');
                out.push_str(field);
            }
        }
    }

    pub(crate) fn pattern(&self, out: &mut String, p: &Pattern) {
        match p {
            Pattern::Wildcard => out.push('_'),
            Pattern::Int(c) => Self::constant(out, *c),
            Pattern::Range(lo, hi) => {
                Self::constant(out, *lo);
                out.push_str("..=");
                Self::constant(out, *hi);
            }
            Pattern::Or(alts) => {
                if alts.is_empty() {
                    out.push_str("<no alternative>");
                }
                for (i, a) in alts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" | ");
                    }
                    self.pattern(out, a);
                }
            }
            Pattern::Case {
                variant,
                case,
                bindings,
            } => {
                let _ = write!(out, "{variant}::{case}");
                if !bindings.is_empty() {
                    out.push('(');
                    for (i, b) in bindings.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        self.var(out, *b);
                    }
                    out.push(')');
                }
            }
        }
    }

    fn indent(out: &mut String, depth: usize) {
        for _ in 0..depth {
            out.push_str(INDENT);
        }
    }

    /// Prints the statements of `b`, one per line, at `depth`.
    fn block_body(&self, out: &mut String, depth: usize, b: &Block) {
        for s in b {
            Self::indent(out, depth);
            self.stmt(out, depth, s);
            out.push('\n');
        }
    }

    /// Prints ` {\n … \n<indent>}` for block `b` whose opening line is at `depth`.
    fn braced(&self, out: &mut String, depth: usize, b: &Block) {
        if b.is_empty() {
            out.push_str(" {}");
            return;
        }
        out.push_str(" {\n");
        self.block_body(out, depth + 1, b);
        Self::indent(out, depth);
        out.push('}');
    }

    /// Prints statement `s` with no leading indentation and no trailing newline; nested lines are
    /// indented relative to `depth`.
    pub(crate) fn stmt(&self, out: &mut String, depth: usize, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, init } => {
                out.push_str("let ");
                let decl = self.vars.get(var.0 as usize);
                if decl.is_some_and(|d| d.mutable) {
                    out.push_str("mut ");
                }
                self.var(out, *var);
                match (decl, init) {
                    (Some(d), _) => {
                        let _ = write!(out, ": {}", d.ty);
                    }
                    (None, Some(init)) => {
                        let _ = write!(out, ": {}", init.ty);
                    }
                    (None, None) => {}
                }
                if let Some(init) = init {
                    out.push_str(" = ");
                    self.expr(out, init);
                }
                out.push(';');
            }
            StmtKind::Assign { target, value } => {
                self.lvalue(out, target);
                out.push_str(" = ");
                self.expr(out, value);
                out.push(';');
            }
            StmtKind::Block(b) => {
                if b.is_empty() {
                    out.push_str("{}");
                } else {
                    out.push_str("{\n");
                    self.block_body(out, depth + 1, b);
                    Self::indent(out, depth);
                    out.push('}');
                }
            }
            StmtKind::If { cond, then, els } => {
                out.push_str("if ");
                self.expr(out, cond);
                self.braced(out, depth, then);
                if let Some(els) = els {
                    out.push_str(" else");
                    match els.as_slice() {
                        [only @ Stmt {
                            kind: StmtKind::If { .. },
                            ..
                        }] => {
                            out.push(' ');
                            self.stmt(out, depth, only);
                        }
                        _ => self.braced(out, depth, els),
                    }
                }
            }
            StmtKind::While { cond, body } => {
                if matches!(cond.kind, ExprKind::Const(Const::Bool(true))) {
                    out.push_str("loop");
                } else {
                    out.push_str("while ");
                    self.expr(out, cond);
                }
                self.braced(out, depth, body);
            }
            StmtKind::For(l) => {
                out.push_str("for ");
                self.var(out, l.var);
                out.push_str(" in ");
                let unit_step = l.unit_step();
                let plain = unit_step && l.dir == ForDir::Up;
                if !plain {
                    out.push('(');
                }
                self.expr(out, &l.start);
                out.push_str("..");
                self.expr(out, &l.end);
                if !plain {
                    out.push(')');
                    if l.dir == ForDir::Down {
                        out.push_str(".rev()");
                    }
                    if !unit_step {
                        out.push_str(".step_by(");
                        self.expr(out, &l.step);
                        out.push(')');
                    }
                }
                self.braced(out, depth, &l.body);
            }
            StmtKind::Match { scrutinee, arms } => {
                out.push_str("match ");
                self.expr(out, scrutinee);
                out.push_str(" {\n");
                for (p, b) in arms {
                    Self::indent(out, depth + 1);
                    self.pattern(out, p);
                    out.push_str(" =>");
                    self.braced(out, depth + 1, b);
                    out.push('\n');
                }
                Self::indent(out, depth);
                out.push('}');
            }
            StmtKind::Break => out.push_str("break;"),
            StmtKind::Continue => out.push_str("continue;"),
            StmtKind::Return(None) => out.push_str("return;"),
            StmtKind::Return(Some(e)) => {
                out.push_str("return ");
                self.expr(out, e);
                out.push(';');
            }
            StmtKind::Barrier => out.push_str("sync_threads();"),
            StmtKind::WarpBarrier => out.push_str("sync_warp();"),
            StmtKind::MemFence(FenceScope::Block) => out.push_str("fence_block();"),
            StmtKind::MemFence(FenceScope::Device) => out.push_str("fence_device();"),
            StmtKind::Expr(e) => {
                self.expr(out, e);
                out.push(';');
            }
            StmtKind::Pragma { hints, body } => {
                let _ = write!(out, "#[pragma({})]", hints.join(", "));
                if body.is_empty() {
                    out.push_str(" {}");
                } else {
                    out.push_str(" {\n");
                    self.block_body(out, depth + 1, body);
                    Self::indent(out, depth);
                    out.push('}');
                }
            }
        }
    }

    fn params(&self, out: &mut String, params: &[Param], vars: &[VarDecl]) {
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let binding_mut = vars.get(p.var.0 as usize).is_some_and(|v| v.mutable);
            if p.is_buffer() {
                self.var(out, p.var);
                out.push_str(": ");
                if p.mutable {
                    out.push_str("mut ");
                }
            } else {
                if p.mutable || binding_mut {
                    out.push_str("mut ");
                }
                self.var(out, p.var);
                out.push_str(": ");
            }
            let _ = write!(out, "{}", p.ty);
        }
    }
}

fn record(out: &mut String, r: &RecordDef) {
    let _ = write!(out, "record {}", r.name);
    if r.fields.is_empty() {
        out.push_str(" {}\n");
        return;
    }
    out.push_str(" {\n");
    for f in &r.fields {
        let _ = writeln!(out, "{INDENT}{}: {},", f.name, f.ty);
    }
    out.push_str("}\n");
}

fn variant(out: &mut String, v: &VariantDef) {
    let _ = write!(out, "variant {}", v.name);
    if v.cases.is_empty() {
        out.push_str(" {}\n");
        return;
    }
    out.push_str(" {\n");
    for c in &v.cases {
        out.push_str(INDENT);
        out.push_str(&c.name);
        if !c.payload.is_empty() {
            out.push('(');
            for (i, t) in c.payload.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{t}");
            }
            out.push(')');
        }
        out.push_str(",\n");
    }
    out.push_str("}\n");
}

fn function(out: &mut String, f: &Function, records: &[RecordDef]) {
    let p = Printer::new(&f.vars, records);
    let _ = write!(out, "fn {}(", f.name);
    p.params(out, &f.params, &f.vars);
    out.push(')');
    if f.ret != Type::Unit {
        let _ = write!(out, " -> {}", f.ret);
    }
    p.braced(out, 0, &f.body);
    out.push('\n');
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        for r in &self.records {
            record(&mut out, r);
            out.push('\n');
        }
        for v in &self.variants {
            variant(&mut out, v);
            out.push('\n');
        }
        for func in &self.functions {
            function(&mut out, func, &self.records);
            out.push('\n');
        }
        let p = Printer::new(&self.vars, &self.records);
        let _ = write!(out, "kernel {}(", self.name);
        p.params(&mut out, &self.params, &self.vars);
        out.push(')');
        if self.body.is_empty() && self.shared.is_empty() {
            out.push_str(" {}\n");
        } else {
            out.push_str(" {\n");
            for s in &self.shared {
                out.push_str(INDENT);
                out.push_str("shared ");
                p.var(&mut out, s.var);
                let _ = match s.len {
                    Some(n) => writeln!(out, ": [{}; {n}];", s.elem),
                    None => writeln!(out, ": [{}]; // sized at launch", s.elem),
                };
            }
            p.block_body(&mut out, 1, &self.body);
            out.push_str("}\n");
        }
        f.write_str(&out)
    }
}

/// A helper function on its own; record literals print their fields by position, since the
/// record definitions live in the kernel.
impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        function(&mut out, self, &[]);
        f.write_str(&out)
    }
}

/// An expression on its own: variables print as `$v<index>` (use [`expr_to_string`] for names).
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Printer::bare().render(|p, out| p.expr(out, self)))
    }
}

/// A statement on its own: variables print as `$v<index>` (use [`stmt_to_string`] for names).
impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Printer::bare().render(|p, out| p.stmt(out, 0, self)))
    }
}

/// A pattern on its own: bindings print as `$v<index>`.
impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Printer::bare().render(|p, out| p.pattern(out, self)))
    }
}

/// A place on its own: variables print as `$v<index>`.
impl fmt::Display for LValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Printer::bare().render(|p, out| p.lvalue(out, self)))
    }
}
