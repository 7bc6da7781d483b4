//! The emitter of one function body (the kernel's or a helper's): identifiers, output lines,
//! temporaries, and the signatures.

use super::ctx::Ctx;
use super::dialect::{Storage, BUILTINS};
use super::scan;
use crate::names::var_idents;
use crate::CodegenError;
use spoc_ir::idmap::IdSet;
use spoc_ir::{Expr, Function, MemSpace, Param, Type, VarDecl, VarId};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// C operator precedence levels (higher binds tighter).
pub(crate) mod prec {
    pub const PRIMARY: u8 = 16;
    pub const UNARY: u8 = 15;
    pub const MUL: u8 = 13;
    pub const ADD: u8 = 12;
    pub const SHIFT: u8 = 11;
    pub const REL: u8 = 10;
    pub const EQ: u8 = 9;
    pub const BAND: u8 = 8;
    pub const BXOR: u8 = 7;
    pub const BOR: u8 = 6;
    pub const LAND: u8 = 5;
    pub const LOR: u8 = 4;
    pub const COND: u8 = 3;
}

/// An emitted C expression and the precedence of its outermost operator.
#[derive(Clone, Debug)]
pub(crate) struct Code {
    pub text: String,
    pub prec: u8,
}

impl Code {
    pub(crate) fn new(text: impl Into<String>, prec: u8) -> Code {
        Code {
            text: text.into(),
            prec,
        }
    }
    pub(crate) fn primary(text: impl Into<String>) -> Code {
        Code::new(text, prec::PRIMARY)
    }
    /// The text, parenthesised unless it binds at least as tightly as `min` (borrowed when it
    /// needs no parentheses).
    pub(crate) fn at(&self, min: u8) -> Cow<'_, str> {
        if self.prec >= min {
            Cow::Borrowed(&self.text)
        } else {
            Cow::Owned(cat(&["(", &self.text, ")"]))
        }
    }
}

/// The concatenation of `parts`, allocated once: the emitter's hot paths build their text with
/// it rather than `format!`.
pub(crate) fn cat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}

pub(crate) type R<T> = Result<T, CodegenError>;

const INDENT: &str = "    ";

/// The emitter of one body.
pub(crate) struct Body<'c, 'k> {
    pub ctx: &'c mut Ctx<'k>,
    /// `None` for the kernel.
    pub func: Option<&'k Function>,
    pub vars: &'k [VarDecl],
    pub params: &'k [Param],
    /// The C identifier of each variable.
    pub idents: Vec<String>,
    /// The length parameter of each buffer parameter (and of the launch-sized shared array).
    pub len_idents: HashMap<VarId, String>,
    /// Every identifier in use in this body, so that temporaries are fresh.
    taken: HashSet<String>,
    /// Variables some assignment writes.
    pub assigned: IdSet<VarId>,
    /// Whether some expression of the body may write memory ([`scan::effectful`]): when none
    /// does, no expression of it needs the scan.
    effects: bool,
    /// Local-array parameters passed by value that the body modifies: (variable, name of the
    /// C parameter it is copied from).
    pub copies: Vec<(VarId, String)>,
    /// Output lines, indented.
    pub lines: Vec<String>,
    pub indent: usize,
    /// Checked mode ([`crate::checked`]): the identifier of the fault-record parameter.
    pub fault: Option<String>,
    /// This function's index for [`crate::checked::array_id`] (0: the kernel, `k + 1`: helper
    /// `k` of [`spoc_ir::Kernel::functions`]).
    pub func_index: usize,
    /// The (line, column) of the statement being emitted (0, 0 when unknown).
    pub loc: (u32, u32),
}

impl<'c, 'k> Body<'c, 'k> {
    pub(crate) fn new(ctx: &'c mut Ctx<'k>, func: Option<&'k Function>) -> Body<'c, 'k> {
        let kernel = ctx.kernel;
        let (vars, params, body) = match func {
            Some(f) => (&f.vars[..], &f.params[..], &f.body),
            None => (&kernel.vars[..], &kernel.params[..], &kernel.body),
        };
        let mut idents = var_idents(vars);
        let mut taken: HashSet<String> = idents.iter().cloned().collect();
        for id in idents.iter_mut() {
            if BUILTINS.contains(&id.as_str()) || id.starts_with("spoc_") {
                let mut cand = format!("v_{id}");
                while taken.contains(&cand) {
                    cand.insert(0, 'v');
                }
                taken.insert(cand.clone());
                *id = cand;
            }
        }
        let effects =
            spoc_ir::visit::block_any_expr(body, &mut |e| scan::effectful_node(e, &ctx.impure));
        let mut b = Body {
            ctx,
            func,
            vars,
            params,
            idents,
            len_idents: HashMap::new(),
            taken,
            assigned: scan::assigned_vars(body),
            effects,
            copies: Vec::new(),
            lines: Vec::new(),
            indent: 1,
            fault: None,
            func_index: func
                .and_then(|f| kernel.functions.iter().position(|g| g.name == f.name))
                .map_or(0, |k| k + 1),
            loc: (0, 0),
        };
        if b.ctx.checked {
            b.fault = Some(b.fresh("spoc_fault"));
        }
        let mut sized: Vec<VarId> = params
            .iter()
            .filter(|p| matches!(p.ty, Type::Array { len: None, .. }))
            .map(|p| p.var)
            .collect();
        if func.is_none() {
            sized.extend(
                kernel
                    .shared
                    .iter()
                    .filter(|s| s.len.is_none())
                    .map(|s| s.var),
            );
        }
        for v in sized {
            let name = b.fresh(&format!("{}_len", b.idents[v.0 as usize]));
            b.len_idents.insert(v, name);
        }
        b
    }

    /// A fresh identifier starting with `base`.
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let mut cand = base.to_string();
        let mut k = 2;
        while self.taken.contains(&cand) || BUILTINS.contains(&cand.as_str()) {
            cand = format!("{base}{k}");
            k += 1;
        }
        self.taken.insert(cand.clone());
        cand
    }

    /// Makes `name` (a loop counter whose loop has ended) available again.
    pub(crate) fn release(&mut self, name: &str) {
        self.taken.remove(name);
    }

    /// The identifier of variable `v`.
    pub(crate) fn ident(&self, v: VarId) -> &str {
        &self.idents[v.0 as usize]
    }

    /// Appends a line at the current indentation.
    pub(crate) fn line(&mut self, text: impl AsRef<str>) {
        self.line_of(&[text.as_ref()]);
    }

    /// Appends a line made of `parts` at the current indentation.
    pub(crate) fn line_of(&mut self, parts: &[&str]) {
        let len = parts.iter().map(|p| p.len()).sum::<usize>();
        let mut l = String::with_capacity(INDENT.len() * self.indent + len);
        for _ in 0..self.indent {
            l.push_str(INDENT);
        }
        for p in parts {
            l.push_str(p);
        }
        self.lines.push(l);
    }

    /// Removes and returns the lines emitted since `mark`.
    pub(crate) fn take_since(&mut self, mark: usize) -> Vec<String> {
        self.lines.split_off(mark)
    }

    /// Re-emits captured lines one level deeper.
    pub(crate) fn put_nested(&mut self, lines: Vec<String>) {
        for l in lines {
            self.lines.push(format!("{INDENT}{l}"));
        }
    }

    /// True if `e` may write memory ([`scan::effectful`]).
    pub(crate) fn effectful(&self, e: &Expr) -> bool {
        self.effects && scan::effectful(e, &self.ctx.impure)
    }

    /// True if `e`'s value may change when memory is written ([`scan::memory_dependent`]).
    pub(crate) fn memory_dependent(&self, e: &Expr) -> bool {
        scan::memory_dependent(e, &self.ctx.impure)
    }

    /// The IR text of `e`, for error messages.
    pub(crate) fn show(&self, e: &Expr) -> String {
        spoc_ir::print::expr_to_string(self.ctx.kernel, self.func, e)
    }

    /// The parameter list of the function, in the ABI documented in the module docs.
    pub(crate) fn param_list(&mut self) -> Vec<String> {
        let is_kernel = self.func.is_none();
        let u32t = self.ctx.d.scalar(spoc_ir::ScalarType::U32, Storage::Value);
        let mut out = Vec::new();
        for p in self.params {
            let id = self.ident(p.var).to_string();
            match &p.ty {
                Type::Array { elem, space, len } => match (space, len) {
                    (MemSpace::Local, _) => {
                        let name = if p.mutable || self.assigned.contains(&p.var) {
                            let arg = self.fresh(&format!("{id}_arg"));
                            self.copies.push((p.var, arg.clone()));
                            arg
                        } else {
                            id.clone()
                        };
                        out.push(self.ctx.decl(&p.ty, &name, Storage::Value));
                    }
                    (_, None) => {
                        let ptr = self.ctx.pointer(elem, *space, p.mutable);
                        out.push(format!("{ptr} {id}"));
                        let len = self.len_idents[&p.var].clone();
                        out.push(format!("{u32t} {len}"));
                    }
                    (_, Some(_)) => {
                        let ptr = self.ctx.pointer(elem, *space, true);
                        out.push(format!("{ptr} {id}"));
                    }
                },
                ty => {
                    let storage = if is_kernel {
                        Storage::Memory
                    } else {
                        Storage::Value
                    };
                    out.push(self.ctx.decl(ty, &id, storage));
                }
            }
        }
        if is_kernel {
            let kernel = self.ctx.kernel;
            if let Some(s) = kernel.shared.iter().find(|s| s.len.is_none()) {
                let len = self.len_idents[&s.var].clone();
                if self.ctx.d.is_opencl() {
                    let ptr = self.ctx.pointer(&s.elem, MemSpace::Shared, true);
                    out.push(format!("{ptr} {}", self.ident(s.var)));
                }
                out.push(format!("{u32t} {len}"));
            }
        }
        if let Some(f) = &self.fault {
            out.push(format!("{} {f}", super::prelude::fault_ptr(self.ctx.d)));
        }
        out
    }

    /// `name(params)`, on one line when short, else one parameter per line.
    pub(crate) fn signature(head: &str, params: &[String]) -> String {
        let one = format!("{head}({})", params.join(", "));
        if one.len() <= 100 {
            return one;
        }
        let mut s = format!("{head}(\n");
        for (i, p) in params.iter().enumerate() {
            let comma = if i + 1 < params.len() { "," } else { "" };
            s.push_str(&format!("{INDENT}{p}{comma}\n"));
        }
        s.push(')');
        s
    }

    /// The body text emitted so far.
    pub(crate) fn text(&self) -> String {
        let mut s = String::with_capacity(self.lines.iter().map(|l| l.len() + 1).sum());
        for l in &self.lines {
            s.push_str(l.trim_end());
            s.push('\n');
        }
        s
    }
}
