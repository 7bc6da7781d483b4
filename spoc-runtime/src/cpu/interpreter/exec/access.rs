//! Memory access: places (locals, buffer elements) read, written and updated atomically, each
//! access bounds-checked and, when the sanitizer is on, recorded.

use super::super::compile::{CExpr, CPath, Step, MAX_INDICES};
use super::super::error::{
    invalid, unsupported, AccessKind, Fault, InterpErrorKind, MemorySpace, RaceAccess,
};
use super::super::layout::Layout;
use super::super::sanitize::{cells_per_element, Finding};
use super::super::value::Value;
use super::report::*;
use super::{BufView, Launch, Shadow, Thread};
use spoc_ir::{AtomicOp, ScalarType};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::SeqCst};

/// `threadIdx` of linear index `i` in a block of `dim`.
pub(super) fn coords(i: u64, dim: [u32; 3]) -> [u32; 3] {
    let [dx, dy, _] = dim.map(u64::from);
    [
        (i % dx) as u32,
        ((i / dx) % dy) as u32,
        (i / (dx * dy).max(1)) as u32,
    ]
}

/// Where a place lives.
pub(super) enum Loc<'v> {
    Local(&'v Value),
    /// Byte offset `off` in `buf`.
    Global(&'v BufView, usize),
}

/// An atomic read-modify-write at `p`; returns the previous value.
///
/// # Safety
/// `p` is aligned to and valid for a `s`.
pub(super) unsafe fn atomic_rmw(
    op: AtomicOp,
    s: ScalarType,
    p: *mut u8,
    a: Value,
    b: Option<Value>,
) -> Result<Value, Fault> {
    let mismatch = || {
        invalid(format!(
            "`{}` operands do not match a buffer of {s}",
            op.name()
        ))
    };
    macro_rules! int {
        ($atomic:ty, $variant:ident) => {{
            let x = match a {
                Value::$variant(x) => x,
                _ => return Err(mismatch()),
            };
            let at = <$atomic>::from_ptr(p.cast());
            Value::$variant(match op {
                AtomicOp::Add => at.fetch_add(x, SeqCst),
                AtomicOp::Sub => at.fetch_sub(x, SeqCst),
                AtomicOp::Min => at.fetch_min(x, SeqCst),
                AtomicOp::Max => at.fetch_max(x, SeqCst),
                AtomicOp::Exchange => at.swap(x, SeqCst),
                AtomicOp::And => at.fetch_and(x, SeqCst),
                AtomicOp::Or => at.fetch_or(x, SeqCst),
                AtomicOp::Xor => at.fetch_xor(x, SeqCst),
                AtomicOp::CompareExchange => {
                    let n = match b {
                        Some(Value::$variant(n)) => n,
                        _ => return Err(mismatch()),
                    };
                    match at.compare_exchange(x, n, SeqCst, SeqCst) {
                        Ok(v) | Err(v) => v,
                    }
                }
            })
        }};
    }
    macro_rules! float {
        ($atomic:ty, $variant:ident, $f:ty) => {{
            let x: $f = match a {
                Value::$variant(x) => x,
                _ => return Err(mismatch()),
            };
            let at = <$atomic>::from_ptr(p.cast());
            let update = |g: fn($f, $f) -> $f| match at.fetch_update(SeqCst, SeqCst, |bits| {
                Some(g(<$f>::from_bits(bits), x).to_bits())
            }) {
                Ok(v) | Err(v) => v,
            };
            let prev = match op {
                AtomicOp::Add => update(|old, x| old + x),
                AtomicOp::Sub => update(|old, x| old - x),
                AtomicOp::Min => update(<$f>::min),
                AtomicOp::Max => update(<$f>::max),
                AtomicOp::Exchange => at.swap(x.to_bits(), SeqCst),
                // Compares bit patterns, as CUDA's atomicCAS does.
                AtomicOp::CompareExchange => {
                    let n: $f = match b {
                        Some(Value::$variant(n)) => n,
                        _ => return Err(mismatch()),
                    };
                    match at.compare_exchange(x.to_bits(), n.to_bits(), SeqCst, SeqCst) {
                        Ok(v) | Err(v) => v,
                    }
                }
                AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => return Err(mismatch()),
            };
            Value::$variant(<$f>::from_bits(prev))
        }};
    }
    Ok(match s {
        ScalarType::I32 => int!(AtomicI32, I32),
        ScalarType::U32 => int!(AtomicU32, U32),
        ScalarType::I64 => int!(AtomicI64, I64),
        ScalarType::U64 => int!(AtomicU64, U64),
        ScalarType::F32 => float!(AtomicU32, F32, f32),
        ScalarType::F64 => float!(AtomicU64, F64, f64),
        _ => return Err(mismatch()),
    })
}

impl Launch<'_> {
    /// Checks and records an access to element `i` (in bounds) of `buf` at statement `loc`,
    /// when `buf` is checked.
    #[inline(always)]
    pub(super) fn note(
        &self,
        buf: &BufView,
        i: u32,
        kind: AccessKind,
        loc: u32,
        th: &Thread,
    ) -> Result<(), Fault> {
        self.note_part(buf, i, 0..buf.elem_size, kind, loc, th)
    }

    /// [`Launch::note`] for the bytes `bytes` of element `i` (a lane of a vector, a field of a
    /// record): only their shadow cells are checked, so that threads writing different lanes
    /// of one element do not race.
    #[inline(always)]
    pub(super) fn note_part(
        &self,
        buf: &BufView,
        i: u32,
        bytes: std::ops::Range<usize>,
        kind: AccessKind,
        loc: u32,
        th: &Thread,
    ) -> Result<(), Fault> {
        if buf.shadow == Shadow::None {
            return Ok(());
        }
        self.note_checked(buf, i, bytes, kind, loc, th)
    }

    #[inline(never)]
    pub(super) fn note_checked(
        &self,
        buf: &BufView,
        i: u32,
        bytes: std::ops::Range<usize>,
        kind: AccessKind,
        loc: u32,
        th: &Thread,
    ) -> Result<(), Fault> {
        let per = cells_per_element(buf.elem_size);
        let first = i as usize * per + bytes.start / 4;
        let cells = first..(i as usize * per + bytes.end.div_ceil(4)).max(first + 1);
        let found = cells.into_iter().try_for_each(|c| match buf.shadow {
            Shadow::None => Ok(()),
            Shadow::Shared(k) => match th.bcheck {
                Some(ch) => ch.access(k as usize, c, &th.me, kind, loc),
                None => Ok(()),
            },
            Shadow::Global(k) => match &self.gcheck {
                Some(g) => {
                    let wep_of = |u: u32| th.bcheck.map_or(0, |ch| ch.wep_of(u));
                    g.access(k as usize, c, &th.me, kind, loc, &wep_of)
                }
                None => Ok(()),
            },
        });
        let Err(finding) = found else { return Ok(()) };
        let (space, len) = (
            if buf.shared {
                MemorySpace::Shared
            } else {
                MemorySpace::Global
            },
            buf.len as u64,
        );
        Err(Box::new(match finding {
            Finding::Uninit => InterpErrorKind::UninitializedShared {
                array: buf.name.to_string(),
                index: i as u64,
                len,
            },
            Finding::Race {
                thread,
                kind: first_kind,
                loc: first_loc,
            } => {
                let (first_block, first_thread) = match buf.shadow {
                    Shadow::Global(_) => {
                        let tpb = self.gcheck.as_ref().map_or(1, |g| g.threads_per_block());
                        (
                            coords(thread / tpb, th.ctx.grid_dim),
                            coords(thread % tpb, th.ctx.block_dim),
                        )
                    }
                    _ => (th.ctx.block, coords(thread, th.ctx.block_dim)),
                };
                InterpErrorKind::DataRace {
                    space,
                    array: buf.name.to_string(),
                    index: i as u64,
                    len,
                    first: RaceAccess {
                        block: first_block,
                        thread: first_thread,
                        kind: first_kind,
                        loc: self.loc(first_loc),
                    },
                    second: RaceAccess {
                        block: th.ctx.block,
                        thread: th.ctx.thread,
                        kind,
                        loc: self.loc(loc),
                    },
                }
            }
        }))
    }

    /// Walks `p` from its root value, bounds-checking each index.
    pub(super) fn locate<'v>(
        &'v self,
        p: &CPath,
        idx: &[u32],
        bufs: &'v [BufView],
        root: &'v Value,
    ) -> Result<Loc<'v>, Fault> {
        let mut cur = Loc::Local(root);
        let mut k = 0;
        for s in p.steps.iter() {
            cur = match (s, cur) {
                (Step::Index(_), Loc::Local(Value::Buffer(b))) => {
                    let buf = self.view(bufs, *b);
                    if Some(buf.elem) != p.elem {
                        return Err(invalid("buffer element type mismatch"));
                    }
                    let i = idx[k];
                    k += 1;
                    if (i as usize) < buf.len {
                        Loc::Global(buf, i as usize * buf.elem_size)
                    } else {
                        return Err(oob_buf(buf, i));
                    }
                }
                (Step::Index(_), Loc::Local(v)) => {
                    let a = v
                        .as_array()
                        .ok_or_else(|| invalid(format!("indexing a {}", v.type_name())))?;
                    let i = idx[k];
                    k += 1;
                    match a.get(i as usize) {
                        Some(v) => Loc::Local(v),
                        None => return Err(oob(MemorySpace::Local, &p.name, i, a.len())),
                    }
                }
                (Step::Field { index, .. }, Loc::Local(v)) => {
                    match v.as_record().and_then(|fs| fs.get(*index as usize)) {
                        Some(x) => Loc::Local(x),
                        None => return Err(invalid(format!("field of a {}", v.type_name()))),
                    }
                }
                (Step::Field { offset, .. }, Loc::Global(buf, off)) => {
                    Loc::Global(buf, off + offset)
                }
                (Step::Index(_), Loc::Global(..)) => {
                    return Err(invalid("indexing an element of a buffer"))
                }
            };
        }
        Ok(cur)
    }

    pub(super) fn read_path(&self, p: &CPath, th: &mut Thread) -> Result<Value, Fault> {
        let mut idx = [0u32; MAX_INDICES];
        self.eval_indices(p, th, &mut idx)?;
        match self.locate(p, &idx, th.bufs, &th.stack[th.base + p.root as usize])? {
            Loc::Local(v) => Ok(v.clone()),
            Loc::Global(buf, off) => {
                let leaf = p
                    .leaf
                    .as_ref()
                    .ok_or_else(|| invalid("global place without layout"))?;
                let size = buf.elem_size.max(1);
                let (i, within) = ((off / size) as u32, off % size);
                self.note_part(
                    buf,
                    i,
                    within..within + leaf.size(),
                    AccessKind::Read,
                    p.loc,
                    th,
                )?;
                // SAFETY: `off` is an element start plus static field offsets of the buffer's
                // own element layout (checked in `locate`), so it is in bounds and aligned.
                Ok(unsafe { leaf.load(buf.ptr.add(off)) })
            }
        }
    }

    pub(super) fn write_path(&self, p: &CPath, th: &mut Thread, v: Value) -> Result<(), Fault> {
        let mut idx = [0u32; MAX_INDICES];
        self.eval_indices(p, th, &mut idx)?;
        if let (Value::Buffer(b), Some(Step::Index(_))) =
            (&th.stack[th.base + p.root as usize], p.steps.first())
        {
            let buf = self.view(th.bufs, *b);
            return self.store_global(p, buf, idx[0], &p.steps[1..], &v, th);
        }
        let mut cur: &mut Value = &mut th.stack[th.base + p.root as usize];
        let mut k = 0;
        for s in p.steps.iter() {
            let ty = cur.type_name();
            match s {
                Step::Index(_) => {
                    if let Value::Buffer(_) = *cur {
                        return Err(invalid("indexing an element of a buffer"));
                    }
                    let i = idx[k];
                    k += 1;
                    let a = cur
                        .as_array_mut()
                        .ok_or_else(|| invalid(format!("assignment into an element of a {ty}")))?;
                    let len = a.len();
                    cur = a
                        .get_mut(i as usize)
                        .ok_or_else(|| oob(MemorySpace::Local, &p.name, i, len))?;
                }
                Step::Field { index, .. } => {
                    cur = cur
                        .as_record_mut()
                        .and_then(|fs| fs.get_mut(*index as usize))
                        .ok_or_else(|| invalid(format!("assignment into a field of a {ty}")))?;
                }
            }
        }
        *cur = v;
        Ok(())
    }

    /// Stores `v` into element `i` of buffer `buf`, then through the field steps `rest`.
    pub(super) fn store_global(
        &self,
        p: &CPath,
        buf: &BufView,
        i: u32,
        rest: &[Step],
        v: &Value,
        th: &Thread,
    ) -> Result<(), Fault> {
        if Some(buf.elem) != p.elem {
            return Err(invalid("buffer element type mismatch"));
        }
        if !buf.mutable {
            return Err(invalid(format!("write to read-only buffer `{}`", buf.name)));
        }
        if i as usize >= buf.len {
            return Err(oob_buf(buf, i));
        }
        let mut within = 0;
        for s in rest {
            match s {
                Step::Field { offset, .. } => within += offset,
                Step::Index(_) => return Err(invalid("indexing an element of a buffer")),
            }
        }
        let leaf = p
            .leaf
            .as_ref()
            .ok_or_else(|| invalid("global place without layout"))?;
        self.note_part(
            buf,
            i,
            within..within + leaf.size(),
            AccessKind::Write,
            p.loc,
            th,
        )?;
        let off = i as usize * buf.elem_size + within;
        // SAFETY: `off` is an element start plus static field offsets of the buffer's own
        // element layout (checked above), so it is in bounds and aligned.
        unsafe { leaf.store(buf.ptr.add(off), v) }
    }

    pub(super) fn atomic(
        &self,
        op: AtomicOp,
        p: &CPath,
        operands: &[CExpr],
        th: &mut Thread,
    ) -> Result<Value, Fault> {
        let mut idx = [0u32; MAX_INDICES];
        self.eval_indices(p, th, &mut idx)?;
        let a = self.eval(&operands[0], th)?;
        let b = match operands.get(1) {
            Some(e) => Some(self.eval(e, th)?),
            None => None,
        };
        let (buf, off) =
            match self.locate(p, &idx, th.bufs, &th.stack[th.base + p.root as usize])? {
                Loc::Global(buf, off) => (buf, off),
                Loc::Local(_) => return Err(unsupported("atomics on a local array")),
            };
        if !buf.mutable {
            return Err(invalid(format!(
                "atomic on read-only buffer `{}`",
                buf.name
            )));
        }
        let s = match p.leaf {
            Some(Layout::Scalar(s)) => s,
            _ => return Err(invalid("atomic on a non-scalar element")),
        };
        let size = buf.elem_size.max(1);
        let (i, within) = ((off / size) as u32, off % size);
        let bytes = within..within + s.size_bytes() as usize;
        self.note_part(buf, i, bytes, AccessKind::Atomic, p.loc, th)?;
        // SAFETY: in bounds and aligned (see `read_path`).
        unsafe { atomic_rmw(op, s, buf.ptr.add(off), a, b) }
    }
}
