//! Running generated kernels on devices and comparing: drawing a kernel whose oracle result is
//! defined ([`draw`]), lowering it at run time ([`lower`]), running it on a device
//! ([`run_on`]), comparing results ([`compare`]) and deciding whether a device disagrees
//! ([`Verdict`]).

use crate::ast::*;
use crate::gen::{self, Config, Stats};
use crate::oracle::{self, Excl, Fault, Inputs, Memory};
use crate::print;
use crate::rng::Rng;
use crate::visit::uses;
use spoc::{dims1d, Arg, Buffer, Device, Error, KernelDef};
use std::cell::Cell;
use std::collections::BTreeMap;

/// A named buffer's contents (outputs `o_T` and accumulators `acc{k}`, in parameter order).
pub type Buffers = Vec<(String, Vec<Val>)>;

/// A kernel drawn for a run: its AST, inputs and the oracle's result.
#[derive(Clone, Debug)]
pub struct Drawn {
    /// Index in the run.
    pub index: u64,
    /// The seed the kernel and its inputs were generated from.
    pub subseed: u64,
    /// The kernel.
    pub kernel: Kernel,
    /// Its inputs.
    pub inputs: Inputs,
    /// The oracle's final memory.
    pub want: Memory,
    /// What the generator did (exclusions).
    pub stats: Stats,
    /// Why earlier attempts for this index were drawn again (reason → count).
    pub redrawn: BTreeMap<String, u64>,
}

/// The oracle's exclusions for a generator configuration.
pub fn excl_of(cfg: &Config) -> Excl {
    cfg.excl()
}

/// Draws kernel `index` of a run with `seed`: generated again (from derived seeds) until the
/// oracle's result is defined, so the same `(seed, index)` always gives the same kernel.
///
/// # Panics
/// If 64 attempts in a row fail, which would be a generator bug.
pub fn draw(seed: u64, index: u64, name: &str, cfg: &Config) -> Drawn {
    let base = Rng::derive(seed, index);
    let mut redrawn = BTreeMap::new();
    for attempt in 0..64u64 {
        match draw_from(Rng::derive(base, attempt), index, name, cfg) {
            Ok(d) => return Drawn { redrawn, ..d },
            Err(f) => *redrawn.entry(fault_class(&f)).or_default() += 1,
        }
    }
    panic!("64 kernels in a row for index {index} of seed {seed} had no defined result");
}

/// A short class for a fault, for counting (`unspecified: min/max of ±0`, …).
pub fn fault_class(f: &Fault) -> String {
    match f {
        Fault::Unspecified(s) if s.contains("opposite signs") => {
            "unspecified: min/max of zeros of opposite signs".into()
        }
        Fault::Unspecified(s) => format!("unspecified: {s}"),
        Fault::Known(k) => format!("known bug {k}"),
        Fault::Invalid(s) => format!("generator produced an invalid kernel: {s}"),
    }
}

/// Draws from a known sub-seed (as the build script recorded it for a compiled kernel).
pub fn draw_from(subseed: u64, index: u64, name: &str, cfg: &Config) -> Result<Drawn, Fault> {
    let (kernel, stats) = gen::generate(subseed, name, cfg);
    let inputs = gen::inputs(&kernel, subseed);
    let want = oracle::run(&kernel, &inputs, excl_of(cfg))?;
    Ok(Drawn {
        index,
        subseed,
        kernel,
        inputs,
        want,
        stats,
        redrawn: BTreeMap::new(),
    })
}

thread_local! {
    static CURRENT: Cell<Option<&'static spoc::ir::ValidKernel>> = const { Cell::new(None) };
}

/// The IR accessor of run-time-lowered kernels: the kernel this thread is running.
fn current_ir() -> Result<&'static spoc::ir::ValidKernel, spoc::ir::IrError> {
    CURRENT
        .with(|c| c.get())
        .ok_or_else(|| spoc::ir::IrError::Invalid {
            kernel: "?".into(),
            function: None,
            message: "spoc-difftest: no run-time-lowered kernel is current on this thread".into(),
        })
}

/// A kernel ready to run: its definition and, for run-time-lowered kernels, its IR.
#[derive(Clone, Copy, Debug)]
pub struct Runnable {
    /// The definition handed to `spoc::run`.
    pub def: &'static KernelDef,
    /// For run-time-lowered kernels: the IR `def`'s accessor returns while this one runs.
    pub ir: Option<&'static spoc::ir::ValidKernel>,
}

/// Lowers `k` at run time (`spoc_frontend::lower_kernel_source`) and validates the IR. The IR
/// and its definition are leaked: the runtime keys its caches by the IR's address, so it must
/// never be reused by another kernel.
///
/// # Errors
/// The front end's messages, or the validator's, as text.
pub fn lower(k: &Kernel) -> Result<Runnable, String> {
    let src = print::kernel_fn(k, false);
    let ir = spoc_frontend::lower_kernel_source(&src).map_err(|es| {
        es.iter()
            .map(|e| format!("{}:{}: {}", e.line, e.column, e.message))
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    let ir = spoc::ir::ValidKernel::new(ir).map_err(|e| format!("invalid IR: {e}"))?;
    let ir: &'static spoc::ir::ValidKernel = Box::leak(Box::new(ir));
    let name: &'static str = Box::leak(k.name.clone().into_boxed_str());
    let def: &'static KernelDef = Box::leak(Box::new(KernelDef {
        name,
        ir: current_ir,
        native: None,
    }));
    Ok(Runnable { def, ir: Some(ir) })
}

/// What running a kernel on a device gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// It ran: the outputs and accumulators it uses, downloaded.
    Ran(Buffers),
    /// The backend refused it with `Error::FeatureNotSupported` (the reason).
    Skipped(String),
    /// Any other error (its variant, its message).
    Failed(String, String),
}

enum DevBuf {
    I32(Buffer<i32>),
    U32(Buffer<u32>),
    I64(Buffer<i64>),
    U64(Buffer<u64>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
}

fn upload(dev: &Device, ty: Ty, vals: &[Val]) -> spoc::Result<DevBuf> {
    macro_rules! up {
        ($V:ident, $t:ty) => {
            DevBuf::$V(
                dev.upload(
                    &vals
                        .iter()
                        .map(|v| match v {
                            Val::$V(x) => *x,
                            other => <$t>::from_bits_of(other.bits()),
                        })
                        .collect::<Vec<$t>>(),
                )?,
            )
        };
    }
    Ok(match ty {
        Ty::I32 => up!(I32, i32),
        Ty::U32 => up!(U32, u32),
        Ty::I64 => up!(I64, i64),
        Ty::U64 => up!(U64, u64),
        Ty::F32 => up!(F32, f32),
        _ => up!(F64, f64),
    })
}

/// Builds a buffer element from bits (only reached for a mistyped value: never in practice).
trait FromBitsOf {
    fn from_bits_of(b: u64) -> Self;
}
impl FromBitsOf for i32 {
    fn from_bits_of(b: u64) -> Self {
        b as i32
    }
}
impl FromBitsOf for u32 {
    fn from_bits_of(b: u64) -> Self {
        b as u32
    }
}
impl FromBitsOf for i64 {
    fn from_bits_of(b: u64) -> Self {
        b as i64
    }
}
impl FromBitsOf for u64 {
    fn from_bits_of(b: u64) -> Self {
        b
    }
}
impl FromBitsOf for f32 {
    fn from_bits_of(b: u64) -> Self {
        f32::from_bits(b as u32)
    }
}
impl FromBitsOf for f64 {
    fn from_bits_of(b: u64) -> Self {
        f64::from_bits(b)
    }
}

impl DevBuf {
    fn arg(&mut self, writable: bool) -> Arg<'_> {
        macro_rules! a {
            ($b:expr) => {
                if writable {
                    Arg::BufferMut($b.raw_mut())
                } else {
                    Arg::Buffer($b.raw())
                }
            };
        }
        match self {
            DevBuf::I32(b) => a!(b),
            DevBuf::U32(b) => a!(b),
            DevBuf::I64(b) => a!(b),
            DevBuf::U64(b) => a!(b),
            DevBuf::F32(b) => a!(b),
            DevBuf::F64(b) => a!(b),
        }
    }
    fn download(&self) -> spoc::Result<Vec<Val>> {
        Ok(match self {
            DevBuf::I32(b) => b.to_vec()?.into_iter().map(Val::I32).collect(),
            DevBuf::U32(b) => b.to_vec()?.into_iter().map(Val::U32).collect(),
            DevBuf::I64(b) => b.to_vec()?.into_iter().map(Val::I64).collect(),
            DevBuf::U64(b) => b.to_vec()?.into_iter().map(Val::U64).collect(),
            DevBuf::F32(b) => b.to_vec()?.into_iter().map(Val::F32).collect(),
            DevBuf::F64(b) => b.to_vec()?.into_iter().map(Val::F64).collect(),
        })
    }
}

fn scalar_arg(v: Val) -> Arg<'static> {
    match v {
        Val::Bool(x) => Arg::Bool(x),
        Val::I32(x) => Arg::I32(x),
        Val::U32(x) => Arg::U32(x),
        Val::I64(x) => Arg::I64(x),
        Val::U64(x) => Arg::U64(x),
        Val::F32(x) => Arg::F32(x),
        Val::F64(x) => Arg::F64(x),
        Val::Usize(x) => Arg::Usize(x as usize),
    }
}

/// A refusal's reason without what varies between kernels (the kernel's name, the arguments of
/// a construct named in backquotes), so that equal reasons are counted together.
fn skip_reason(msg: &str, k: &Kernel) -> String {
    let msg = msg.replace(&format!("`{}`", k.name), "`…`");
    let mut out = String::new();
    for (i, part) in msg.split('`').enumerate() {
        if i % 2 == 1 {
            out.push('`');
            match part.find('(') {
                Some(p) if p > 0 => out.push_str(&part[..p]),
                _ => out.push_str(part),
            }
            out.push('`');
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The variant name of an error (`Compile`, `KernelFault`, …).
pub fn error_class(e: &Error) -> String {
    let d = format!("{e:?}");
    d.split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or("")
        .to_string()
}

/// Runs `r` (kernel `k`) on `dev` with `inputs`: buffers bound in the printed parameter order,
/// [`GRID`] blocks of [`BLOCK`] threads; downloads the outputs and accumulators it uses.
pub fn run_on(dev: &Device, k: &Kernel, inputs: &Inputs, r: Runnable) -> Outcome {
    let go = || -> spoc::Result<Buffers> {
        let u = uses(k);
        // (name, written, buffer) in the printed parameter order.
        let mut bufs: Vec<(String, bool, DevBuf)> = vec![];
        for (written, types, data) in [
            (false, &u.inputs, &inputs.inputs),
            (true, &u.outputs, &inputs.outputs),
        ] {
            for &t in types {
                let b = t.buf_index().expect("a buffer type");
                let name = format!("{}_{}", if written { "o" } else { "x" }, t.name());
                bufs.push((name, written, upload(dev, t, &data[b])?));
            }
        }
        for &a in &u.accs {
            let ty = k.accs[a].ty;
            bufs.push((format!("acc{a}"), true, upload(dev, ty, &inputs.accs[a])?));
        }
        let mut args: Vec<Arg<'_>> = vec![];
        for &p in &u.params {
            args.push(scalar_arg(inputs.params[k.param_index(p)]));
        }
        for (_, w, b) in bufs.iter_mut() {
            args.push(b.arg(*w));
        }
        CURRENT.with(|c| c.set(r.ir));
        let res = spoc::run(dev, r.def, args, dims1d(GRID), dims1d(BLOCK), 0);
        CURRENT.with(|c| c.set(None));
        res?;
        let mut out = vec![];
        for (name, w, b) in &bufs {
            if *w {
                out.push((name.clone(), b.download()?));
            }
        }
        Ok(out)
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(go)) {
        Ok(Ok(b)) => Outcome::Ran(b),
        Ok(Err(Error::FeatureNotSupported { backend, feature })) => Outcome::Skipped(skip_reason(
            &format!("{backend} does not support {feature}"),
            k,
        )),
        Ok(Err(e)) => Outcome::Failed(error_class(&e), e.to_string()),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Outcome::Failed("Panic".into(), msg)
        }
    }
}

/// The oracle's memory in the shape [`run_on`] returns: the used outputs and accumulators.
pub fn expected(k: &Kernel, m: &Memory) -> Buffers {
    let u = uses(k);
    let mut out = vec![];
    for &t in &u.outputs {
        let b = t.buf_index().expect("a buffer type");
        out.push((format!("o_{}", t.name()), m.outputs[b].clone()));
    }
    for &a in &u.accs {
        out.push((format!("acc{a}"), m.accs[a].clone()));
    }
    out
}

/// Compares results: equal bits everywhere, except that any NaN equals any NaN. The error
/// names the first differing elements (with the thread and slot of output elements).
pub fn compare(want: &Buffers, got: &Buffers) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!("{} buffers, want {}", got.len(), want.len()));
    }
    let mut bad = vec![];
    let mut count = 0usize;
    for ((wn, w), (gn, g)) in want.iter().zip(got) {
        if wn != gn || w.len() != g.len() {
            return Err(format!(
                "buffer {gn} of {} elements, want {wn} of {}",
                g.len(),
                w.len()
            ));
        }
        for (i, (a, b)) in w.iter().zip(g).enumerate() {
            if !a.same(*b) {
                count += 1;
                if bad.len() < 4 {
                    let at = if wn.starts_with("o_") {
                        let (t, s) = (i as u32 / SLOTS, i as u32 % SLOTS);
                        format!("{wn}[{i}] (thread {t}, slot {s})")
                    } else {
                        format!("{wn}[{i}]")
                    };
                    bad.push(format!("{at}: got {}, want {}", show(*b), show(*a)));
                }
            }
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("{count} element(s) differ: {}", bad.join("; ")))
    }
}

/// A value for a report: the literal, and the bits of floats.
pub fn show(v: Val) -> String {
    match v {
        Val::F32(x) => format!("{} (0x{:08x})", print::lit(v), x.to_bits()),
        Val::F64(x) => format!("{} (0x{:016x})", print::lit(v), x.to_bits()),
        _ => print::lit(v),
    }
}

/// How a device's run compares with its reference.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Same results.
    Agree,
    /// Refused with `FeatureNotSupported` (the reason).
    Skipped(String),
    /// Different results, or an error where the reference ran.
    Disagree(Disagreement),
}

/// What kind of disagreement (kept while shrinking).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Different values.
    Values,
    /// An error where the reference ran: its variant and [`error_signature`].
    Error(String),
}

/// The part of an error message that identifies the problem: for a compiler's log, the first
/// `error:` line without its file and position; otherwise the message with digits dropped.
pub fn error_signature(msg: &str) -> String {
    if let Some(line) = msg.lines().find(|l| l.contains("error")) {
        let tail = line.rsplit(": ").next().unwrap_or(line);
        if line.contains(':') && tail.len() < line.len() {
            return tail.trim().to_string();
        }
    }
    msg.chars()
        .filter(|c| !c.is_ascii_digit())
        .take(120)
        .collect()
}

/// A disagreement: its kind and a description.
#[derive(Clone, Debug, PartialEq)]
pub struct Disagreement {
    /// The kind.
    pub kind: Kind,
    /// What differs (elements, or the error message).
    pub detail: String,
}

/// Judges `got` against `want`.
pub fn judge(want: &Buffers, got: &Outcome) -> Verdict {
    match got {
        Outcome::Skipped(why) => Verdict::Skipped(why.clone()),
        Outcome::Failed(class, msg) => Verdict::Disagree(Disagreement {
            kind: Kind::Error(format!("{class}: {}", error_signature(msg))),
            detail: format!("{class}: {msg}"),
        }),
        Outcome::Ran(g) => match compare(want, g) {
            Ok(()) => Verdict::Agree,
            Err(d) => Verdict::Disagree(Disagreement {
                kind: Kind::Values,
                detail: d,
            }),
        },
    }
}

/// A buffer's values as a Rust array expression (`[v; n]` when all are equal).
fn show_buf(vals: &[Val]) -> String {
    match vals.first() {
        Some(v) if vals.iter().all(|x| x.same(*v)) => {
            format!("[{}; {}]", print::lit(*v), vals.len())
        }
        _ => format!(
            "[{}]",
            vals.iter()
                .map(|v| print::lit(*v))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The inputs a kernel uses, as text for a report (parameters, then input buffers).
pub fn show_inputs(k: &Kernel, inputs: &Inputs) -> String {
    let u = uses(k);
    let mut s = String::new();
    for &p in &u.params {
        let i = k.param_index(p);
        s.push_str(&format!(
            "  {} = {}\n",
            k.var_name(p),
            print::lit(inputs.params[i])
        ));
    }
    for &t in &u.inputs {
        let b = t.buf_index().expect("a buffer type");
        s.push_str(&format!(
            "  x_{} = {}\n",
            t.name(),
            show_buf(&inputs.inputs[b])
        ));
    }
    for &t in &u.outputs {
        let b = t.buf_index().expect("a buffer type");
        let vals: Vec<String> = inputs.outputs[b].iter().map(|v| print::lit(*v)).collect();
        s.push_str(&format!(
            "  o_{} (before) = [{}]\n",
            t.name(),
            vals.join(", ")
        ));
    }
    for &a in &u.accs {
        s.push_str(&format!(
            "  acc{a} (before) = {}\n",
            show_buf(&inputs.accs[a])
        ));
    }
    s
}
