//! Checked mode ([`crate::checked`]) in the naga module: the fault record (a storage buffer
//! bound after the buffer parameters), the `spoc_record_fault` function, and the bounds and
//! division tests.
//!
//! An access is lowered as `if (i0 < n0 && i1 < n1 …) { access } else { record the first failing
//! test; a read gives the type's zero }`: the indices are evaluated before the test (once: the
//! access reuses them), and the pointer to the element is formed only inside the branch, so an
//! out-of-range `OpAccessChain` is never dereferenced (SPIR-V 1.5 §2.16.1 leaves that
//! undefined).

use super::build::{Builtin, Gen};
use super::func::{Fb, Slot, R};
use crate::checked::{self, array_id, NO_ARRAY};
use naga::{
    AddressSpace, BinaryOperator as Bo, Expression, Handle, Literal, MemoryDecorations,
    ResourceBinding, Span, Statement, StorageAccess,
};
use spoc_ir::{Axis, Expr, ExprKind, LValue, ScalarType, Type, VarId};

type H = Handle<Expression>;

/// Words of an invocation's pending fault: code, array, index, length, line, column, function.
const PENDING_WORDS: u32 = 7;

/// One bounds test: `ok` is `index < len`.
pub(super) struct Check {
    ok: H,
    index: H,
    len: H,
    array: u32,
}

impl Check {
    pub(super) fn new(ok: H, index: H, len: H, array: u32) -> Check {
        Check {
            ok,
            index,
            len,
            array,
        }
    }
}

impl Gen<'_> {
    /// Declares the fault record (`array<atomic<u32>, 16>` at `binding`) and the function that
    /// writes it.
    pub(super) fn declare_fault_record(&mut self, binding: u32) -> R<()> {
        let word = self.elem_ty(&Type::U32, true)?;
        let ty = self.array_ty(word, Some(checked::RECORD_WORDS as u32), 4);
        let h = self.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("spoc_fault".into()),
                space: AddressSpace::Storage {
                    access: StorageAccess::LOAD | StorageAccess::STORE,
                },
                binding: Some(ResourceBinding { group: 0, binding }),
                ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            Span::UNDEFINED,
        );
        self.bindings.push((binding, true));
        self.fault_record = Some(h);
        let u32t = self.scalar_ty(ScalarType::U32)?;
        let pending_ty = self.array_ty(u32t, Some(PENDING_WORDS), 4);
        self.pending_fault = Some(self.module.global_variables.append(
            naga::GlobalVariable {
                name: Some("spoc_pending_fault".into()),
                space: AddressSpace::Private,
                binding: None,
                ty: pending_ty,
                init: None,
                memory_decorations: MemoryDecorations::empty(),
            },
            Span::UNDEFINED,
        ));
        let f = fault_function(self, h)?;
        self.fault_fn = Some(self.module.functions.append(f, Span::UNDEFINED));
        Ok(())
    }
}

/// `spoc_record_fault(code, array, index, len, line, column, function)`: the first thread to
/// move word 0 from 0 to `code` (a strong compare-and-swap, `OpAtomicCompareExchange`) writes
/// the other words, its `LocalInvocationId` and `WorkgroupId` included.
fn fault_function(g: &mut Gen<'_>, record: Handle<naga::GlobalVariable>) -> R<naga::Function> {
    let u32t = g.scalar_ty(ScalarType::U32)?;
    let mut fb = Fb::new(g, &[], Vec::new());
    let args: Vec<H> = (0..7)
        .map(|k| fb.emit(Expression::FunctionArgument(k)))
        .collect();
    let rec = fb.global_ptr(record);
    let word = |fb: &mut Fb, w: usize| {
        fb.emit(Expression::AccessIndex {
            base: rec,
            index: w as u32,
        })
    };
    let p0 = word(&mut fb, checked::W_CODE);
    let zero = fb.lit(Literal::U32(0));
    let old = fb.compare_exchange(p0, zero, args[0], ScalarType::U32)?;
    let won = fb.bin(Bo::Equal, old, zero);
    fb.open();
    let mut values = vec![
        (checked::W_ARRAY, args[1]),
        (checked::W_INDEX, args[2]),
        (checked::W_LEN, args[3]),
    ];
    for (k, axis) in [Axis::X, Axis::Y, Axis::Z].into_iter().enumerate() {
        let t = fb.builtin_axis(Builtin::LocalId, axis)?;
        let b = fb.builtin_axis(Builtin::GroupId, axis)?;
        values.push((checked::W_THREAD + k, t));
        values.push((checked::W_BLOCK + k, b));
    }
    values.push((checked::W_LINE, args[4]));
    values.push((checked::W_COLUMN, args[5]));
    values.push((checked::W_FUNCTION, args[6]));
    for (w, v) in values {
        let p = word(&mut fb, w);
        fb.store(p, v);
    }
    let accept = fb.close();
    fb.if_stmt(won, accept, naga::Block::new());
    let mut f = fb.finish()?;
    f.name = Some("spoc_record_fault".into());
    f.arguments = [
        "code", "array", "index", "len", "line", "column", "function",
    ]
    .iter()
    .map(|n| naga::FunctionArgument {
        name: Some(n.to_string()),
        ty: u32t,
        binding: None,
    })
    .collect();
    Ok(f)
}

impl Fb<'_, '_> {
    /// True in checked mode.
    pub fn checked(&self) -> bool {
        self.g.fault_fn.is_some()
    }

    /// The value of index expression `index`: the one computed for its bounds test, if any.
    pub fn index_value(&mut self, index: &Expr) -> R<H> {
        match self.index_cache.remove(&(index as *const Expr as usize)) {
            Some(h) => Ok(h),
            None => self.expr(index),
        }
    }

    /// Notes fault `code` for `array` at `index` of `len`, at the current statement, as the
    /// invocation's pending fault unless it has one already ([`Fb::flush_pending_fault`] writes
    /// it to the record when the kernel ends). Selects and private stores only: a call of the
    /// recorder (a compare-and-swap loop) in every access's failure branch made lavapipe's
    /// checked kernels up to 10 times slower than unchecked ones, even with no fault.
    pub fn record_fault(&mut self, code: u32, array: u32, index: H, len: H) {
        let Some(pending) = self.g.pending_fault else {
            return;
        };
        let (line, col) = self.loc;
        let values = [
            self.lit(Literal::U32(code)),
            self.lit(Literal::U32(array)),
            index,
            len,
            self.lit(Literal::U32(line)),
            self.lit(Literal::U32(col)),
            self.lit(Literal::U32(self.func_index as u32)),
        ];
        let p = self.global_ptr(pending);
        let w0 = self.emit(Expression::AccessIndex { base: p, index: 0 });
        let first = self.load(w0);
        let zero = self.lit(Literal::U32(0));
        let fresh = self.bin(Bo::Equal, first, zero);
        for (k, v) in values.into_iter().enumerate() {
            let wp = self.emit(Expression::AccessIndex {
                base: p,
                index: k as u32,
            });
            let old = self.load(wp);
            let new = self.sel(fresh, v, old);
            self.store(wp, new);
        }
    }

    /// Zeroes the invocation's pending fault (first thing in a checked kernel).
    pub fn clear_pending_fault(&mut self) -> R<()> {
        let Some(pending) = self.g.pending_fault else {
            return Ok(());
        };
        let ty = self.g.module.global_variables[pending].ty;
        let z = self.emit(Expression::ZeroValue(ty));
        let p = self.global_ptr(pending);
        self.store(p, z);
        Ok(())
    }

    /// `if pending[0] != 0 { spoc_record_fault(pending…) }`, where the kernel ends.
    pub fn flush_pending_fault(&mut self) {
        let (Some(pending), Some(function)) = (self.g.pending_fault, self.g.fault_fn) else {
            return;
        };
        let p = self.global_ptr(pending);
        let mut words = Vec::new();
        for k in 0..PENDING_WORDS {
            let wp = self.emit(Expression::AccessIndex { base: p, index: k });
            words.push(self.load(wp));
        }
        let zero = self.lit(Literal::U32(0));
        let faulted = self.bin(Bo::NotEqual, words[0], zero);
        self.open();
        self.stmt(Statement::Call {
            function,
            arguments: words,
            result: None,
        });
        let accept = self.close();
        self.if_stmt(faulted, accept, naga::Block::new());
    }

    /// `if cond { record fault code }` (for faults that concern no array).
    pub fn fault_if(&mut self, cond: H, code: u32) {
        if !self.checked() {
            return;
        }
        self.open();
        let zero = self.lit(Literal::U32(0));
        self.record_fault(code, NO_ARRAY, zero, zero);
        let accept = self.close();
        self.if_stmt(cond, accept, naga::Block::new());
    }

    /// The fault-record identifier of variable `v` of this function: buffers and shared
    /// arrays are named by the kernel's variable (helpers are specialised per array).
    fn array_of_var(&self, v: VarId) -> u32 {
        match self.slots.get(v.0 as usize) {
            Some(Slot::Global(g)) => self
                .g
                .kernel_globals
                .iter()
                .find(|(_, &i)| i == *g)
                .map_or(NO_ARRAY, |(var, _)| array_id(0, *var)),
            _ => array_id(self.func_index, v),
        }
    }

    /// The fault-record identifier of the array `e` reads from (its root variable).
    pub fn array_of_expr(&self, e: &Expr) -> u32 {
        self.array_of(e)
    }

    fn array_of(&self, e: &Expr) -> u32 {
        spoc_ir::visit::expr_root(e).map_or(NO_ARRAY, |v| self.array_of_var(v))
    }

    /// Evaluates the indices of the element `e` reads (remembered for the access) and returns
    /// their bounds tests, outermost first.
    pub fn read_checks(&mut self, e: &Expr, out: &mut Vec<Check>) -> R<()> {
        match &e.kind {
            ExprKind::Index { array, index } => {
                self.read_checks(array, out)?;
                let i = self.expr(index)?;
                self.index_cache.insert(&**index as *const Expr as usize, i);
                let len = self.len(array)?;
                let ok = self.bin(Bo::Less, i, len);
                let array = self.array_of(array);
                out.push(Check {
                    ok,
                    index: i,
                    len,
                    array,
                });
            }
            ExprKind::Field { base, .. } => self.read_checks(base, out)?,
            _ => {}
        }
        Ok(())
    }

    /// [`Fb::read_checks`] for a place.
    pub fn place_checks(&mut self, l: &LValue, out: &mut Vec<Check>) -> R<Type> {
        Ok(match l {
            LValue::Var(v) => self.decl(*v)?.ty.clone(),
            LValue::Index { base, index } => {
                let bt = self.place_checks(base, out)?;
                let i = self.expr(index)?;
                self.index_cache.insert(index as *const Expr as usize, i);
                let len = match (&**base, &bt) {
                    (LValue::Var(v), _) if matches!(self.slot(*v)?, Slot::Global(_)) => {
                        let ty = self.decl(*v)?.ty.clone();
                        self.len(&Expr::var(*v, ty))?
                    }
                    (_, Type::Array { len: Some(n), .. }) => self.lit(Literal::U32(*n)),
                    _ => return Err(self.g.bug(format!("a bounds check on a `{bt}` place"))),
                };
                let ok = self.bin(Bo::Less, i, len);
                let root = lvalue_root(base);
                let array = self.array_of_var(root);
                out.push(Check {
                    ok,
                    index: i,
                    len,
                    array,
                });
                match bt {
                    Type::Array { elem, .. } => std::sync::Arc::unwrap_or_clone(elem),
                    t => return Err(self.g.bug(format!("indexing a `{t}` place"))),
                }
            }
            LValue::Field { base, field } => {
                let bt = self.place_checks(base, out)?;
                self.field_type(&bt, field)?
            }
        })
    }

    /// Runs `access` only when every test of `checks` passes; otherwise records the first
    /// failing test. With `ty`, the access's value is kept in a temporary, which holds the
    /// type's zero after a fault, and that is the result.
    pub fn guarded(
        &mut self,
        ty: Option<&Type>,
        checks: Vec<Check>,
        access: impl FnOnce(&mut Self) -> R<Option<H>>,
    ) -> R<Option<H>> {
        let mut all = checks[0].ok;
        for c in &checks[1..] {
            all = self.bin(Bo::LogicalAnd, all, c.ok);
        }
        let tmp = ty.map(|t| self.temp(t)).transpose()?;
        self.open();
        let v = access(self)?;
        if let (Some(t), Some(v)) = (tmp, v) {
            let p = self.local_ptr(t);
            self.store(p, v);
        }
        let accept = self.close();
        self.open();
        self.fault_chain(&checks);
        if let (Some(t), Some(ty)) = (tmp, ty) {
            let nt = self.g.value_ty(ty)?;
            let z = self.emit(Expression::ZeroValue(nt));
            let p = self.local_ptr(t);
            self.store(p, z);
        }
        let reject = self.close();
        self.if_stmt(all, accept, reject);
        Ok(tmp.map(|t| {
            let p = self.local_ptr(t);
            self.load(p)
        }))
    }

    /// `if !ok0 { record 0 } else if !ok1 { record 1 } … else { record the last }`.
    fn fault_chain(&mut self, checks: &[Check]) {
        let Some((last, first)) = checks.split_last() else {
            return;
        };
        if first.is_empty() {
            self.record_fault(
                checked::FAULT_OUT_OF_BOUNDS,
                last.array,
                last.index,
                last.len,
            );
            return;
        }
        let c = &checks[0];
        self.open();
        self.record_fault(checked::FAULT_OUT_OF_BOUNDS, c.array, c.index, c.len);
        let accept = self.close();
        self.open();
        self.fault_chain(&checks[1..]);
        let reject = self.close();
        let bad = self.not(c.ok);
        self.if_stmt(bad, accept, reject);
    }
}

/// The variable a place starts from.
fn lvalue_root(l: &LValue) -> VarId {
    match l {
        LValue::Var(v) => *v,
        LValue::Index { base, .. } | LValue::Field { base, .. } => lvalue_root(base),
    }
}
