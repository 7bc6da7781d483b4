//! The function builder: expression arena with `Emit` bookkeeping, nested statement blocks,
//! local variables and the IR variable table.

use super::build::Gen;
use crate::CodegenError;
use naga::{Expression, Handle, LocalVariable, Span, Statement};
use spoc_ir::{Type, VarDecl, VarId};
use std::collections::HashMap;

/// Where an IR variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// Not declared yet (its `let` / `for` / pattern declares it).
    Unset,
    /// A naga local variable.
    Local(Handle<LocalVariable>),
    /// A buffer or shared array: `Gen::globals[index]`.
    Global(usize),
}

pub(super) type R<T> = Result<T, CodegenError>;

/// Builds one naga function from an IR body.
pub(super) struct Fb<'a, 'k> {
    pub g: &'a mut Gen<'k>,
    pub f: naga::Function,
    blocks: Vec<naga::Block>,
    pub slots: Vec<Slot>,
    decls: &'k [VarDecl],
    idents: Vec<String>,
    local_ptrs: HashMap<Handle<LocalVariable>, Handle<Expression>>,
    global_ptrs: HashMap<Handle<naga::GlobalVariable>, Handle<Expression>>,
    /// This function's index for [`crate::checked::array_id`] (0: the kernel, `k + 1`: helper
    /// `k`).
    pub func_index: usize,
    /// The (line, column) of the statement being lowered (0, 0 when unknown).
    pub loc: (u32, u32),
    /// Checked mode: index expressions already evaluated for their bounds test, by address.
    pub index_cache: HashMap<usize, Handle<Expression>>,
}

impl<'a, 'k> Fb<'a, 'k> {
    pub fn new(g: &'a mut Gen<'k>, decls: &'k [VarDecl], slots: Vec<Slot>) -> Fb<'a, 'k> {
        Fb {
            g,
            f: naga::Function::default(),
            blocks: vec![naga::Block::new()],
            slots,
            decls,
            idents: crate::names::var_idents(decls),
            local_ptrs: HashMap::new(),
            global_ptrs: HashMap::new(),
            func_index: 0,
            loc: (0, 0),
            index_cache: HashMap::new(),
        }
    }

    /// The finished function (name, arguments and result are the caller's to set).
    pub fn finish(mut self) -> R<naga::Function> {
        if self.blocks.len() != 1 {
            return Err(self.g.bug("unbalanced statement blocks".into()));
        }
        self.f.body = self.blocks.pop().unwrap_or_default();
        Ok(self.f)
    }

    /// Appends `expr as kind`: a conversion to `convert` bytes, or with `None` the same bits
    /// reinterpreted.
    pub fn emit_as(
        &mut self,
        expr: Handle<Expression>,
        kind: naga::ScalarKind,
        convert: Option<u8>,
    ) -> Handle<Expression> {
        self.emit(Expression::As {
            expr,
            kind,
            convert,
        })
    }

    /// Appends `e`; expressions that need it are covered by an `Emit` in the current block
    /// (extending the block's trailing `Emit` when it ends just before `e`).
    pub fn emit(&mut self, e: Expression) -> Handle<Expression> {
        let needs_emit = !e.needs_pre_emit()
            && !matches!(
                e,
                Expression::CallResult(_)
                    | Expression::AtomicResult { .. }
                    | Expression::SubgroupBallotResult
                    | Expression::SubgroupOperationResult { .. }
            );
        let h = self.f.expressions.append(e, Span::UNDEFINED);
        if needs_emit {
            let block = self.blocks.last_mut().expect("a current block");
            if let Some(Statement::Emit(range)) = block.last_mut() {
                if let Some((first, last)) = range.first_and_last() {
                    if last.index() + 1 == h.index() {
                        *range = naga::Range::new_from_bounds(first, h);
                        return h;
                    }
                }
            }
            block.push(
                Statement::Emit(naga::Range::new_from_bounds(h, h)),
                Span::UNDEFINED,
            );
        }
        h
    }

    /// Pushes a statement onto the current block.
    pub fn stmt(&mut self, s: Statement) {
        self.blocks
            .last_mut()
            .expect("a current block")
            .push(s, Span::UNDEFINED);
    }

    /// Starts a nested block (the branch of an `if`, a loop body, …).
    pub fn open(&mut self) {
        self.blocks.push(naga::Block::new());
    }

    /// Ends the block started by the matching [`Fb::open`].
    pub fn close(&mut self) -> naga::Block {
        self.blocks.pop().unwrap_or_default()
    }

    /// True if the current block ends with `break`, `continue` or `return`: what follows is
    /// unreachable and is not generated.
    pub fn terminated(&self) -> bool {
        matches!(
            self.blocks.last().and_then(|b| b.last()),
            Some(Statement::Break | Statement::Continue | Statement::Return { .. })
        )
    }

    /// A literal. When the device folds float arithmetic as if NaN, infinities and signed
    /// zeros did not exist (`Capabilities::float_controls_ignored`, lavapipe), a float literal
    /// is its bits XOR a zero the driver cannot know, reinterpreted: no float constant is left
    /// for `x * 0.0 -> 0.0`, `x + 0.0 -> x` or `0.0 - x -> -x` to match.
    pub fn lit(&mut self, l: naga::Literal) -> Handle<Expression> {
        if self.g.opaque_zero.is_none() {
            return self.emit(Expression::Literal(l));
        }
        let (bits, wide) = match l {
            naga::Literal::F32(v) => (Expression::Literal(naga::Literal::U32(v.to_bits())), false),
            naga::Literal::F64(v) => (Expression::Literal(naga::Literal::U64(v.to_bits())), true),
            _ => return self.emit(Expression::Literal(l)),
        };
        let bits = self.emit(bits);
        self.hidden_bits(bits, wide, naga::ScalarKind::Float)
    }

    /// With `hide_float_constants` (once the kernel's opaque zero is set): integer `v` XOR the
    /// zero the driver cannot know, so that nothing computed from it, a float converted from
    /// it included, is a constant to the driver (`(0u32 as f32) * x` is not folded to `0.0`,
    /// nor `(p ^ p) as f64 + x` to `x`). `v` itself otherwise.
    pub fn hide_int(
        &mut self,
        v: Handle<Expression>,
        st: spoc_ir::ScalarType,
    ) -> Handle<Expression> {
        if self.g.opaque_zero.is_none() || !st.is_integer() {
            return v;
        }
        let bits = self.emit_as(v, naga::ScalarKind::Uint, None);
        self.hidden_bits(bits, st.size_bytes() == 8, super::build::Gen::kind(st))
    }

    /// Unsigned `bits` (64-bit when `wide`) XOR the opaque zero, reinterpreted as `kind`.
    fn hidden_bits(
        &mut self,
        bits: Handle<Expression>,
        wide: bool,
        kind: naga::ScalarKind,
    ) -> Handle<Expression> {
        let Some(zero) = self.g.opaque_zero else {
            return bits;
        };
        let zp = self.global_ptr(zero);
        let mut z = self.load(zp);
        if wide {
            z = self.emit_as(z, naga::ScalarKind::Uint, Some(8));
        }
        let x = self.emit(Expression::Binary {
            op: naga::BinaryOperator::ExclusiveOr,
            left: bits,
            right: z,
        });
        if kind == naga::ScalarKind::Uint {
            return x;
        }
        self.emit_as(x, kind, None)
    }

    /// With `hide_float_constants`: stores a zero the driver cannot know into a private global,
    /// first thing in the kernel, and makes [`Fb::lit`] use it. The zero is
    /// `arrayLength(first buffer) == u32::MAX`: a buffer's length in elements of at least two
    /// bytes is below 2^31 (`maxStorageBufferRange` is a `u32`), but the driver cannot know
    /// the length. A kernel without buffer parameters has no observable result and keeps its
    /// constants.
    pub fn set_opaque_zero(&mut self) {
        if !self.g.hide_float_constants {
            return;
        }
        let Some(buf) = self
            .g
            .globals
            .iter()
            .find(|a| a.space == spoc_ir::MemSpace::Global)
            .map(|a| a.handle)
        else {
            return;
        };
        let Ok(u32t) = self.g.scalar_ty(spoc_ir::ScalarType::U32) else {
            return;
        };
        let g = self.g.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("spoc_opaque_zero".into()),
                space: naga::AddressSpace::Private,
                binding: None,
                ty: u32t,
                init: None,
                memory_decorations: naga::MemoryDecorations::empty(),
            },
            Span::UNDEFINED,
        );
        let bp = self.global_ptr(buf);
        let len = self.emit(Expression::ArrayLength(bp));
        let max = self.lit(naga::Literal::U32(u32::MAX));
        let is_max = self.emit(Expression::Binary {
            op: naga::BinaryOperator::Equal,
            left: len,
            right: max,
        });
        let one = self.lit(naga::Literal::U32(1));
        let zero = self.lit(naga::Literal::U32(0));
        let z = self.emit(Expression::Select {
            condition: is_max,
            accept: one,
            reject: zero,
        });
        let zp = self.global_ptr(g);
        self.store(zp, z);
        self.g.opaque_zero = Some(g);
    }

    /// A pointer to local `v` (one expression per function).
    pub fn local_ptr(&mut self, v: Handle<LocalVariable>) -> Handle<Expression> {
        if let Some(h) = self.local_ptrs.get(&v) {
            return *h;
        }
        let h = self.emit(Expression::LocalVariable(v));
        self.local_ptrs.insert(v, h);
        h
    }

    /// A pointer to global `v` (one expression per function).
    pub fn global_ptr(&mut self, v: Handle<naga::GlobalVariable>) -> Handle<Expression> {
        if let Some(h) = self.global_ptrs.get(&v) {
            return *h;
        }
        let h = self.emit(Expression::GlobalVariable(v));
        self.global_ptrs.insert(v, h);
        h
    }

    pub fn load(&mut self, pointer: Handle<Expression>) -> Handle<Expression> {
        self.emit(Expression::Load { pointer })
    }

    pub fn store(&mut self, pointer: Handle<Expression>, value: Handle<Expression>) {
        self.stmt(Statement::Store { pointer, value });
    }

    /// A new naga local of naga type `ty`.
    pub fn new_local(&mut self, name: &str, ty: Handle<naga::Type>) -> Handle<LocalVariable> {
        self.f.local_variables.append(
            LocalVariable {
                name: Some(name.to_string()),
                ty,
                init: None,
            },
            Span::UNDEFINED,
        )
    }

    /// A compiler temporary of IR type `ty`.
    pub fn temp(&mut self, ty: &Type) -> R<Handle<LocalVariable>> {
        let t = self.g.value_ty(ty)?;
        Ok(self.new_local("spoc_tmp", t))
    }

    /// Declares IR variable `v` as a naga local (its `let`, `for` or binding), named after it.
    /// A variable declared twice (never, in validated IR) reuses its local.
    pub fn declare_local(&mut self, v: VarId) -> R<Handle<LocalVariable>> {
        let i = v.0 as usize;
        match self.slots.get(i) {
            Some(Slot::Local(h)) => return Ok(*h),
            Some(Slot::Global(_)) => {
                return Err(self
                    .g
                    .bug(format!("variable #{i} is a global array, not a local")))
            }
            Some(Slot::Unset) => {}
            None => return Err(self.g.bug(format!("variable #{i} is out of the table"))),
        }
        let ty = self.g.value_ty(&self.decls[i].ty)?;
        let name = self.idents[i].clone();
        let h = self.new_local(&name, ty);
        self.slots[i] = Slot::Local(h);
        Ok(h)
    }

    /// The declaration of IR variable `v`.
    pub fn decl(&self, v: VarId) -> R<&'k VarDecl> {
        self.decls
            .get(v.0 as usize)
            .ok_or_else(|| self.g.bug(format!("variable #{} is out of the table", v.0)))
    }

    /// The slot of IR variable `v`.
    pub fn slot(&self, v: VarId) -> R<Slot> {
        match self.slots.get(v.0 as usize) {
            Some(Slot::Unset) | None => Err(self.g.bug(format!(
                "variable `{}` (#{}) is used before its declaration",
                self.decls
                    .get(v.0 as usize)
                    .map_or("?", |d| d.name.as_str()),
                v.0
            ))),
            Some(s) => Ok(*s),
        }
    }

    /// Pushes `if cond { accept } else { reject }`.
    pub fn if_stmt(
        &mut self,
        condition: Handle<Expression>,
        accept: naga::Block,
        reject: naga::Block,
    ) {
        self.stmt(Statement::If {
            condition,
            accept,
            reject,
        });
    }
}
