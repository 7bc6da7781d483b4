//! Statements: `let`, assignment, `if`, loops (`while`, counted `for` without overflow),
//! `match`, jumps, barriers and fences.

use super::expr::int_lit;
use super::func::{Fb, R};
use super::types::unsigned_of;
use crate::Target;
use naga::{Barrier, BinaryOperator as Bo, ScalarKind, Statement};
use spoc_ir::{Block, Const, ExprKind, ForDir, ForLoop, ScalarType, Stmt, StmtKind};

impl Fb<'_, '_> {
    /// Lowers a function body.
    pub fn body(&mut self, b: &Block) -> R<()> {
        self.block(b)
    }

    /// Lowers the statements of `b` into the current block, stopping after a jump.
    fn block(&mut self, b: &[Stmt]) -> R<()> {
        for s in b {
            if self.terminated() {
                break;
            }
            let outer = self.loc;
            if let Some(l) = s.loc {
                self.loc = (l.line, l.column);
            }
            let r = self.statement(s);
            self.loc = outer;
            r?;
        }
        Ok(())
    }

    /// Lowers `b` into a new naga block.
    fn sub_block(&mut self, b: &[Stmt]) -> R<naga::Block> {
        self.open();
        let r = self.block(b);
        let blk = self.close();
        r.map(|_| blk)
    }

    fn statement(&mut self, s: &Stmt) -> R<()> {
        match &s.kind {
            StmtKind::Let { var, init } => {
                let v = match init {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                let local = self.declare_local(*var)?;
                if let Some(v) = v {
                    let p = self.local_ptr(local);
                    self.store(p, v);
                }
            }
            StmtKind::Assign { target, value } => {
                // Rust evaluates the assigned value first, then the place.
                let v = self.expr(value)?;
                let mut checks = Vec::new();
                if self.checked() {
                    self.place_checks(target, &mut checks)?;
                }
                if checks.is_empty() {
                    let (p, _) = self.lvalue_ptr(target)?;
                    self.store(p, v);
                } else {
                    self.guarded(None, checks, |fb| {
                        let (p, _) = fb.lvalue_ptr(target)?;
                        fb.store(p, v);
                        Ok(None)
                    })?;
                }
            }
            StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => self.block(b)?,
            StmtKind::If { cond, then, els } => {
                let c = self.expr(cond)?;
                let accept = self.sub_block(then)?;
                let reject = match els {
                    Some(e) => self.sub_block(e)?,
                    None => naga::Block::new(),
                };
                self.if_stmt(c, accept, reject);
            }
            StmtKind::While { cond, body } => {
                self.open();
                if !matches!(cond.kind, ExprKind::Const(Const::Bool(true))) {
                    let c = self.expr(cond)?;
                    let brk = naga::Block::from_vec(vec![Statement::Break]);
                    self.if_stmt(c, naga::Block::new(), brk);
                }
                let r = self.block(body);
                let body = self.close();
                r?;
                self.stmt(Statement::Loop {
                    body,
                    continuing: naga::Block::new(),
                    break_if: None,
                });
            }
            StmtKind::For(l) => self.for_loop(l)?,
            StmtKind::Match { scrutinee, arms } => {
                self.match_chain(scrutinee, arms, &mut |fb, b: &Block| fb.block(b))?;
            }
            StmtKind::Break => self.stmt(Statement::Break),
            StmtKind::Continue => self.stmt(Statement::Continue),
            StmtKind::Return(v) => {
                let value = match v {
                    Some(e) => self.expr_opt(e)?,
                    None => None,
                };
                if self.func_index == 0 {
                    // The kernel ends here: the invocation's fault goes to the record now.
                    self.flush_pending_fault();
                }
                self.stmt(Statement::Return { value });
            }
            StmtKind::Barrier => self.stmt(Statement::ControlBarrier(
                Barrier::WORK_GROUP | Barrier::STORAGE,
            )),
            StmtKind::WarpBarrier => {
                self.g.require(
                    naga::valid::Capabilities::SUBGROUP_BARRIER,
                    "`sync_warp()` (a warp barrier)",
                    "subgroup barriers (caps.subgroups)",
                )?;
                self.stmt(Statement::ControlBarrier(Barrier::SUB_GROUP));
            }
            StmtKind::MemFence(scope) => {
                let why = match self.g.target {
                    Target::WebGpu => Some("WGSL has only control barriers"),
                    Target::Metal => Some(
                        "naga's MSL writer turns fences into `threadgroup_barrier`, which every \
                         thread of the group must reach",
                    ),
                    _ => None,
                };
                if let Some(why) = why {
                    return Err(self.g.unsupported(
                        &format!("a memory fence ({scope:?})"),
                        &format!("a memory-only fence ({why})"),
                    ));
                }
                self.stmt(Statement::MemoryBarrier(
                    Barrier::WORK_GROUP | Barrier::STORAGE,
                ));
            }
            StmtKind::Expr(e) => {
                self.expr_opt(e)?;
            }
        }
        Ok(())
    }

    /// A counted loop that never overflows its variable:
    ///
    /// ```text
    /// if start < end {
    ///     v = start            // Down: end - 1
    ///     loop {
    ///         body
    ///         continuing {
    ///             rem = (end - v) as unsigned     // Down: v - start
    ///             done = rem <= step || step == 0 // Down: rem < step || step == 0
    ///             v = v + step                    // Down: v - step (wraps only when done)
    ///         } break if done                     // (`done` is a local variable)
    ///     }
    /// }
    /// ```
    fn for_loop(&mut self, l: &ForLoop) -> R<()> {
        let (var, dir) = (l.var, l.dir);
        let (start, end, step, body) = (&l.start, &l.end, &l.step, &l.body);
        let st = self.scalar_of(&self.decl(var)?.ty)?;
        let ut = unsigned_of(st);
        let s = self.expr(start)?;
        let e = self.expr(end)?;
        let stp = self.expr(step)?;
        let step_u = if ut == ScalarType::U64 {
            self.emit_as(stp, ScalarKind::Uint, Some(8))
        } else {
            stp
        };
        let step_v = if st.is_signed() {
            self.emit_as(step_u, ScalarKind::Sint, None)
        } else {
            step_u
        };
        let nonempty = self.bin(Bo::Less, s, e);
        if self.checked() && !matches!(step.kind, ExprKind::Const(Const::U32(n)) if n != 0) {
            let zero = self.lit(int_lit(ut, 0));
            let no_step = self.bin(Bo::Equal, step_u, zero);
            let run = self.bin(Bo::LogicalAnd, nonempty, no_step);
            self.fault_if(run, crate::checked::FAULT_ZERO_STEP);
        }
        let local = self.declare_local(var)?;
        let vp = self.local_ptr(local);
        let done_var = self.temp(&spoc_ir::Type::BOOL)?;
        let dp = self.local_ptr(done_var);

        self.open();
        let first = match dir {
            ForDir::Up => s,
            ForDir::Down => {
                let one = self.lit(int_lit(st, 1));
                self.bin(Bo::Subtract, e, one)
            }
        };
        self.store(vp, first);
        let lbody = self.sub_block(body)?;
        self.open();
        let cur = self.load(vp);
        let diff = match dir {
            ForDir::Up => self.bin(Bo::Subtract, e, cur),
            ForDir::Down => self.bin(Bo::Subtract, cur, s),
        };
        let rem = if st.is_signed() {
            self.emit_as(diff, ScalarKind::Uint, None)
        } else {
            diff
        };
        let past = match dir {
            ForDir::Up => self.bin(Bo::LessEqual, rem, step_u),
            ForDir::Down => self.bin(Bo::Less, rem, step_u),
        };
        let zero = self.lit(int_lit(ut, 0));
        let no_step = self.bin(Bo::Equal, step_u, zero);
        let done = self.bin(Bo::LogicalOr, past, no_step);
        self.store(dp, done);
        let next = match dir {
            ForDir::Up => self.bin(Bo::Add, cur, step_v),
            ForDir::Down => self.bin(Bo::Subtract, cur, step_v),
        };
        self.store(vp, next);
        // `break if` reads the flag back: naga's MSL writer forgets the continuing block's
        // named values before it prints the condition, and would re-read `v` after the step.
        let done = self.load(dp);
        let continuing = self.close();
        self.stmt(Statement::Loop {
            body: lbody,
            continuing,
            break_if: Some(done),
        });
        let accept = self.close();
        self.if_stmt(nonempty, accept, naga::Block::new());
        Ok(())
    }
}
