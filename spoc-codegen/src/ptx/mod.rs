//! # PTX code generator
//!
//! Writes PTX text directly from the IR (no NVRTC, no LLVM): one module with one
//! `.visible .entry`, PTX ISA 7.8 (so `ptxas` 11.8 assembles it), `.address_size 64`.
//!
//! ## Target
//!
//! `.target sm_XY` is the newest target PTX 7.8 knows that is not newer than
//! `caps.compute_capability` (`sm_50` … `sm_90`; `None` means `sm_70`; anything newer than 9.0
//! gets `sm_90`, which the driver JIT-compiles forward). Capabilities below 5.0 are refused.
//!
//! ## Parameter ABI (what the CUDA backend binds)
//!
//! The entry's parameters follow the IR parameters in order:
//!
//! | IR parameter | PTX parameters |
//! | --- | --- |
//! | scalar `i32`/`u32`/`i64`/`u64`/`f32`/`f64` `name` | `.param .s32/.u32/.s64/.u64/.f32/.f64 name` |
//! | `bool` `name` | `.param .u8 name` (one byte, as Rust's `bool`; nonzero is `true`) |
//! | record or vector `name` (by value) | `.param .align A .b8 name[S]` (`#[repr(C)]` bytes) |
//! | buffer `&[T]`/`&mut [T]` `name` | `.param .u64 name_ptr` (device address), then `.param .u32 name_len` (elements) |
//! | SoA record buffer `name` (in `soa_params`) | one `.param .u64 name__soa_<field>` per field in declaration order, then one `.param .u32 name__soa_len` |
//!
//! Dynamic shared memory (a shared array without length) is
//! `.extern .shared .align 16 .b8 spoc_dyn_smem[]`; its length in elements is
//! `%dynamic_smem_size / sizeof(T)`.
//!
//! Records in buffers and shared arrays use the `#[repr(C)]` layout (fields in order, each at a
//! multiple of its alignment); `bool` is one byte, vectors are packed lanes, 2- and 4-lane ones
//! aligned to their size (3-lane ones to the lane).
//! A Structure-of-Arrays buffer must hold a flat record of scalars (nested records and vectors
//! are refused with [`CodegenError::Unsupported`]); `p[i].x` is then a load from
//! `p__soa_x + i * sizeof(x)`. An empty `soa_params` gives exactly the AoS output.
//!
//! ## Code shape
//!
//! - Registers are typed virtual registers: `%p` (`.pred`, `bool`), `%rs` (`.b16`, `f16`),
//!   `%r` (`.b32`, `i32`/`u32`), `%rd` (`.b64`, `i64`/`u64`/addresses), `%f` (`.f32`), `%fd`
//!   (`.f64`). Variables get named registers after their source name (`%f_acc`, `%r_i`; records
//!   one per field, `%f_p_x`), temporaries are numbered; a comment block at the top of the entry
//!   maps every variable to its registers, and each statement is preceded by a comment showing
//!   it (with its source line when known).
//! - Control flow is labels and predicated branches (`@!%p bra $L_else`); `break`/`continue`
//!   jump to the loop's end / next-iteration labels; `return` in the kernel is `ret`.
//! - `&&`/`||` short-circuit with branches. Pure operands (constants, variables,
//!   arithmetic other than integer division and float `%`, casts, comparisons, thread indices;
//!   never memory reads, calls, atomics or warp operations) may be evaluated eagerly: for them
//!   `&&`/`||` become `and.pred`/`or.pred` and `if c { a } else { b }` becomes `selp`.
//!   Everything else runs only on the taken branch.
//! - Helper functions are inlined at each call site (their variables get registers named
//!   `<helper><n>_<var>`); `return` in a helper jumps to the end of the inlined body.
//! - Global loads are `ld.global` (`ld.global.nc` for read-only buffers) at
//!   `base + (u64)index * sizeof(T)` (`mul.wide.u32`); shared arrays are
//!   `.shared .align A .<type> $smem_<name>[N]`, local arrays
//!   `.local .align A .b8 $local_<name>[bytes]`.
//! - A whole 2- or 4-lane vector (not `bool`) moves with one vector instruction per 16 bytes:
//!   `ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd5]`, `st.shared.v2.u32 [..], {..}`
//!   (`f64x4`/`i64x4` as two `.v2` halves); 3-lane vectors move lane by lane. Lane `v.x`/`.y`/
//!   `.z`/`.w` is register `i` of a vector value, or the lane's own scalar `ld`/`st` at
//!   `offset + i * sizeof(lane)` in memory.
//!
//! ## Semantics (DESIGN §2 and the IR's documentation)
//!
//! - Integers: `add/sub/mul.lo` wrap. Signed `/` and `%` select `-a` (wrapping) and `0` when the
//!   divisor is `-1`, so `MIN / -1 == MIN` and `MIN % -1 == 0` whatever `div.s32` does on
//!   overflow. Division by zero is not checked (its value is the hardware's). Shift amounts are
//!   taken modulo the width (`and.b32 amt, amt, 31`) before `shl/shr`, because PTX clamps them.
//! - Floats: `add/sub/mul/div/sqrt.rn`, never contracted; `fma.rn` only for `mul_add`.
//!   `recip` is `rcp.rn` (correctly rounded), `rsqrt` is `sqrt.rn` then `rcp.rn` (the same two
//!   roundings as `1.0 / x.sqrt()`). `min`/`max` are `min/max.f32/f64`, which return the non-NaN
//!   operand as Rust does. `floor`/`ceil`/`trunc` are `cvt.rmi/rpi/rzi`; `round` is half away
//!   from zero (`t = trunc(x)`, plus `copysign(1, x)` when `|x - t| >= 0.5`). `powi` repeats
//!   compiler-rt's binary powering, so it matches Rust bit for bit.
//! - Transcendentals (`exp exp2 ln log2 log10 sin cos tan asin acos atan atan2 sinh cosh tanh
//!   powf hypot`) are `f64` routines of the `math` submodule (no `.approx` instructions); `f32`
//!   calls them on the exactly widened argument and rounds once. Measured on an H200 against
//!   numpy/glibc over random and special arguments (`tests/ptx_device/run_on_gpu.py`): every
//!   `f32` function equals the correctly rounded value (0 ULP; at most 1 ULP by construction);
//!   `f64` functions are within 3 ULP, `powf` within 14 ULP (its `ln` is carried in
//!   double-double; the worst case is `|y ln x|` near 700). `sin`/`cos`/`tan` reduce with
//!   Cody–Waite below 2^26 and Payne–Hanek (a 1408-bit table of 2/π) above. Float `%` is exact
//!   (long division of the significands). Special values (±0, ±inf, NaN, subnormals) follow
//!   C99/Rust; NaN *payloads* are not preserved (NVIDIA arithmetic returns the canonical NaN).
//! - Casts: float→int `cvt.rzi` saturates; NaN is forced to 0 (PTX gives `1 << (bits-1)` for
//!   `f64` sources and 64-bit destinations); int→float `cvt.rn`; widening `cvt.s64.s32` /
//!   `cvt.u64.u32` by the source's signedness; narrowing `cvt.u32.u64`; `bool` to integers 0/1.
//! - Atomics: `atom.global/.shared.<op>`; `sub` adds the negation; `f32` add on global memory
//!   flushes subnormals (a hardware property). Warp operations outside any conditional region
//!   name every lane that entered the kernel (`activemask` at the body's start, sm_70+), so the
//!   warp meets there even when a branch before left it apart; inside one, the lanes active at
//!   the call (`activemask`); shuffles follow CUDA (source lane and deltas modulo
//!   32, out-of-range lanes read their own value), 64-bit values shuffle as two halves.
//! - A `for` step of 0 executes `trap` (Rust panics; looping forever is not an option).

mod asm;
mod checks;
mod expr;
mod gen;
mod intrin;
mod layout;
pub(crate) mod math;
mod ops;
mod value;

use crate::{Code, CodegenError, Options, Source, Target};
use asm::{Class, Opd};
use gen::{Frame, Gen};
use spoc_ir::{Kernel, RecordDef, ScalarType, Type, VariantDef};
use std::fmt::Write as _;
use value::{Addr, ArrRef, Base, Len, SoaLeaf, Space, Store, Val};

const TARGET: &str = "CUDA/PTX";

/// Targets PTX ISA 7.8 knows, as `major * 10 + minor`.
const KNOWN_TARGETS: [u32; 14] = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];

/// Kernel-wide facts the generator consults.
pub(crate) struct Ctx<'k> {
    pub kernel: &'k Kernel,
    pub opts: &'k Options<'k>,
    /// The chosen target, `major * 10 + minor`.
    pub sm: u32,
}

impl<'k> Ctx<'k> {
    /// An `Unsupported` error for `node`, which needs `capability`.
    pub(crate) fn unsupported(
        &self,
        node: impl Into<String>,
        capability: impl Into<String>,
    ) -> CodegenError {
        CodegenError::Unsupported {
            kernel: self.kernel.name.clone(),
            target: TARGET,
            node: node.into(),
            capability: capability.into(),
        }
    }

    pub(crate) fn record(&self, name: &str) -> Result<&'k RecordDef, CodegenError> {
        self.kernel
            .record(name)
            .ok_or_else(|| self.unsupported(format!("record type `{name}`"), "a defined record"))
    }

    pub(crate) fn variant(&self, name: &str) -> Result<&'k VariantDef, CodegenError> {
        self.kernel
            .variant(name)
            .ok_or_else(|| self.unsupported(format!("variant type `{name}`"), "a defined variant"))
    }
}

/// The `sm_XY` number for a compute capability.
fn target_sm(kernel: &Kernel, cc: Option<(u32, u32)>) -> Result<u32, CodegenError> {
    let Some((major, minor)) = cc else {
        return Ok(70);
    };
    let want = major.saturating_mul(10).saturating_add(minor.min(9));
    KNOWN_TARGETS
        .iter()
        .copied()
        .filter(|t| *t <= want)
        .max()
        .ok_or_else(|| CodegenError::Unsupported {
            kernel: kernel.name.clone(),
            target: TARGET,
            node: format!("the device's compute capability {major}.{minor}"),
            capability: "compute capability 5.0 or newer".into(),
        })
}

/// Generates PTX for `kernel` (already validated).
///
/// # Errors
/// - [`CodegenError::Unsupported`] for a node PTX cannot express with the given capabilities
///   (e.g. `f64` atomics below sm_60, a variant stored in memory, a nested record in a
///   Structure-of-Arrays parameter), naming the node and the missing capability;
/// - [`CodegenError::FeatureNotSupported`] for a `soa_params` entry that is not a record-buffer
///   parameter of the kernel, or generated parameter names that collide.
pub fn generate(kernel: &Kernel, opts: &Options<'_>) -> Result<Source, CodegenError> {
    let sm = target_sm(kernel, opts.caps.compute_capability)?;
    let cx = Ctx { kernel, opts, sm };
    check_soa(&cx)?;
    let text = module(&cx)?;
    Ok(Source {
        target: Target::CudaPtx,
        entry: kernel.name.clone(),
        code: Code::Text(text),
        abi: crate::abi::describe(Target::CudaPtx, kernel, opts)?,
    })
}

/// Checks `soa_params`: each names a buffer parameter of records of scalars.
fn check_soa(cx: &Ctx<'_>) -> Result<(), CodegenError> {
    for name in cx.opts.soa_params {
        let Some(p) = cx.kernel.params.iter().find(|p| p.name == *name) else {
            return Err(CodegenError::FeatureNotSupported {
                backend: TARGET.into(),
                feature: format!(
                    "Structure-of-Arrays lowering of `{name}`: kernel `{}` has no parameter `{name}`",
                    cx.kernel.name
                ),
            });
        };
        let rec = match &p.ty {
            Type::Array { elem, .. } => match &**elem {
                Type::Record(r) => r,
                other => {
                    return Err(CodegenError::FeatureNotSupported {
                        backend: TARGET.into(),
                        feature: format!(
                            "Structure-of-Arrays lowering of `{name}`: it is a buffer of `{other}`, not of records"
                        ),
                    })
                }
            },
            other => {
                return Err(CodegenError::FeatureNotSupported {
                    backend: TARGET.into(),
                    feature: format!(
                        "Structure-of-Arrays lowering of `{name}`: it is a `{other}`, not a record buffer"
                    ),
                })
            }
        };
        let def = cx.record(rec)?;
        for f in &def.fields {
            if f.ty.as_scalar().is_none() {
                return Err(cx.unsupported(
                    format!(
                        "Structure-of-Arrays parameter `{name}`: field `{}` of `{rec}` is a `{}`",
                        f.name, f.ty
                    ),
                    "flat records (scalar fields only) for Structure-of-Arrays parameters",
                ));
            }
        }
    }
    Ok(())
}

/// The whole PTX module.
fn module(cx: &Ctx<'_>) -> Result<String, CodegenError> {
    let k = cx.kernel;
    let mut g = Gen::new(cx);
    let names = spoc_ir::print::var_names(&k.vars);
    // The names are the identifiers unless one is reserved somewhere (then both are kept).
    let idents = crate::names::renamed_idents(&names);
    let param_idents: Vec<String> = k
        .params
        .iter()
        .map(|p| idents.as_ref().unwrap_or(&names)[p.var.0 as usize].clone())
        .collect();
    g.frames.push(Frame {
        func: None,
        vars: &k.vars,
        idents,
        vals: vec![None; k.vars.len()],
        loops: Vec::new(),
        ret: None,
        show: spoc_ir::print::Show::with_names(k, None, names),
        early_return: false,
    });

    // Parameters.
    let mut params: Vec<String> = Vec::new();
    let mut param_names: Vec<String> = Vec::new();
    for (p, id) in k.params.iter().zip(&param_idents) {
        let val = match &p.ty {
            Type::Scalar(t) => {
                let r = g.a.named(Class::of(*t), id);
                params.push(format!(".param {} {}", expr::mem_type(*t), p.name));
                param_names.push(p.name.clone());
                if *t == ScalarType::Bool {
                    let b = g.a.tmp(Class::B32);
                    g.a.ins(format_args!("ld.param.u8 {b}, [{}]", p.name));
                    g.a.ins(format_args!("setp.ne.u32 {r}, {b}, 0"));
                } else {
                    g.a.ins(format_args!(
                        "ld.param{} {r}, [{}]",
                        expr::mem_type(*t),
                        p.name
                    ));
                }
                Val::Scalar(r, *t)
            }
            Type::Record(_) | Type::Vector { .. } => {
                let l = cx.layout(&p.ty)?;
                params.push(format!(
                    ".param .align {} .b8 {}[{}]",
                    l.align,
                    p.name,
                    l.size.max(1)
                ));
                param_names.push(p.name.clone());
                let v = g.fresh_val(&p.ty, Some(id))?;
                let loaded = load_param_value(&mut g, &p.name, &p.ty)?;
                g.assign_val(&v, &loaded)?;
                v
            }
            Type::Array { elem, .. } => {
                let readonly = !p.mutable;
                if cx.opts.soa_params.contains(&p.name.as_str()) {
                    let Type::Record(rec) = &**elem else {
                        unreachable!("checked by check_soa")
                    };
                    let def = cx.record(rec)?;
                    let mut leaves = Vec::new();
                    for f in &def.fields {
                        let pname = format!("{}__soa_{}", p.name, f.name);
                        params.push(format!(".param .u64 {pname}"));
                        param_names.push(pname.clone());
                        let raw = g.a.tmp(Class::B64);
                        g.a.ins(format_args!("ld.param.u64 {raw}, [{pname}]"));
                        let base = g.a.named(Class::B64, &format!("{id}_{}", f.name));
                        g.a.ins(format_args!("cvta.to.global.u64 {base}, {raw}"));
                        leaves.push(SoaLeaf {
                            field: f.name.clone(),
                            ty: f.ty.as_scalar().unwrap_or(ScalarType::U32),
                            base,
                            readonly,
                        });
                    }
                    let lname = format!("{}__soa_len", p.name);
                    params.push(format!(".param .u32 {lname}"));
                    param_names.push(lname.clone());
                    let len = g.a.named(Class::B32, &format!("{id}_len"));
                    g.a.ins(format_args!("ld.param.u32 {len}, [{lname}]"));
                    Val::Array(ArrRef {
                        elem: (**elem).clone(),
                        len: Len::Reg(len),
                        store: Store::Soa(leaves),
                        id: crate::checked::array_id(0, p.var),
                    })
                } else {
                    let pn = format!("{}_ptr", p.name);
                    let ln = format!("{}_len", p.name);
                    params.push(format!(".param .u64 {pn}"));
                    params.push(format!(".param .u32 {ln}"));
                    param_names.push(pn.clone());
                    param_names.push(ln.clone());
                    let raw = g.a.tmp(Class::B64);
                    g.a.ins(format_args!("ld.param.u64 {raw}, [{pn}]"));
                    let base = g.a.named(Class::B64, id);
                    g.a.ins(format_args!("cvta.to.global.u64 {base}, {raw}"));
                    let len = g.a.named(Class::B32, &format!("{id}_len"));
                    g.a.ins(format_args!("ld.param.u32 {len}, [{ln}]"));
                    Val::Array(ArrRef {
                        elem: (**elem).clone(),
                        len: Len::Reg(len),
                        id: crate::checked::array_id(0, p.var),
                        store: Store::Mem(Addr {
                            space: Space::Global { readonly },
                            base: Base::Reg(base),
                            offset: 0,
                            guard: None,
                            array: crate::checked::NO_ARRAY,
                        }),
                    })
                }
            }
            other => {
                return Err(cx.unsupported(
                    format!("kernel parameter `{}` of type `{other}`", p.name),
                    "scalar, record, vector or buffer parameters",
                ))
            }
        };
        let mut regs = Vec::new();
        val.regs(&mut regs);
        let shown = match &val {
            Val::Array(ArrRef {
                store: Store::Soa(ls),
                len: Len::Reg(l),
                ..
            }) => format!(
                "{} (len {l})",
                ls.iter()
                    .map(|l| l.base.text.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Val::Array(ArrRef {
                store: Store::Mem(a),
                len: Len::Reg(l),
                ..
            }) => format!("{} (len {l})", a.operand()),
            _ => regs.join(", "),
        };
        let _ = writeln!(g.var_map, "\t//   {}: {} -> {shown}", p.name, p.ty);
        g.bind(p.var, val);
    }
    if cx.opts.checked {
        // The fault record, after every parameter ([`crate::checked`]).
        params.push(format!(".param .u64 {}", checks::PARAM));
        param_names.push(checks::PARAM.to_string());
        let raw = g.a.tmp(Class::B64);
        g.a.ins(format_args!("ld.param.u64 {raw}, [{}]", checks::PARAM));
        let rec = g.a.named(Class::B64, "spoc_fault");
        g.a.ins(format_args!("cvta.to.global.u64 {rec}, {raw}"));
        g.fault = Some(rec);
    }
    let mut seen = std::collections::HashSet::new();
    for n in &param_names {
        if !seen.insert(n.as_str()) {
            return Err(CodegenError::FeatureNotSupported {
                backend: TARGET.into(),
                feature: format!(
                    "kernel `{}`: the PTX parameter name `{n}` is generated twice (a parameter's \
                     name collides with another's `_ptr`/`_len`/`__soa_` names); rename one",
                    k.name
                ),
            });
        }
    }

    // Shared arrays.
    let mut shared_decls = String::new();
    for s in &k.shared {
        let id = g.frames[0].ident(s.var).to_string();
        let l = cx.layout(&s.elem)?;
        let (sym, len) = match s.len {
            Some(n) => {
                let sym = format!("$smem_{id}");
                let decl = match s.elem {
                    Type::Scalar(t) if t != ScalarType::Bool => format!(
                        ".shared .align {} {} {sym}[{n}];",
                        l.align,
                        expr::mem_type(t).replace(".s", ".u")
                    ),
                    _ => format!(
                        ".shared .align {} .b8 {sym}[{}];",
                        l.align.max(1),
                        l.size * n as u64
                    ),
                };
                let _ = writeln!(shared_decls, "\t{decl}");
                (sym, Len::Const(n))
            }
            None => ("spoc_dyn_smem".to_string(), Len::DynShared),
        };
        let _ = writeln!(
            g.var_map,
            "\t//   {}: shared [{}; {}] -> {sym}",
            k.vars[s.var.0 as usize].name,
            s.elem,
            s.len
                .map(|n| n.to_string())
                .unwrap_or_else(|| "launch size".into())
        );
        g.bind(
            s.var,
            Val::Array(ArrRef {
                elem: s.elem.clone(),
                len,
                id: crate::checked::array_id(0, s.var),
                store: Store::Mem(Addr {
                    space: Space::Shared,
                    base: Base::Sym(sym),
                    offset: 0,
                    guard: None,
                    array: crate::checked::NO_ARRAY,
                }),
            }),
        );
    }
    let dynamic = k.shared.iter().any(|s| s.len.is_none());

    // Room for the body up front (about a line of comment and two of instructions per
    // statement), so that the buffer of a large kernel is not copied as it grows.
    let mut statements = 0;
    spoc_ir::visit::for_each_stmt(&k.body, &mut |_| statements += 1);
    g.a.reserve(statements * 128);
    g.body_start = g.a.mark();
    g.block(&k.body)?;
    g.a.ins("ret");

    // Assemble the module.
    let mut out = String::new();
    let _ = writeln!(out, "//");
    let _ = writeln!(
        out,
        "// Generated by spoc-codegen (PTX) for kernel `{}`",
        k.name
    );
    let _ = writeln!(out, "//");
    let _ = writeln!(out);
    let _ = writeln!(out, ".version 7.8");
    let _ = writeln!(out, ".target sm_{}", cx.sm);
    let _ = writeln!(out, ".address_size 64");
    let _ = writeln!(out);
    if dynamic {
        let _ = writeln!(out, ".extern .shared .align 16 .b8 spoc_dyn_smem[];");
        let _ = writeln!(out);
    }
    if cx.opts.checked {
        out.push_str(&checks::record_function());
        out.push('\n');
    }
    out.push_str(&math::prelude(&g.routines));
    for r in &g.routines {
        out.push_str(&math::emit(*r));
        out.push('\n');
    }
    let _ = writeln!(out, ".visible .entry {}(", k.name);
    for (i, p) in params.iter().enumerate() {
        let sep = if i + 1 < params.len() { "," } else { "" };
        let _ = writeln!(out, "\t{p}{sep}");
    }
    let _ = writeln!(out, ")");
    let _ = writeln!(out, "{{");
    if !g.var_map.is_empty() {
        let _ = writeln!(out, "\t// variables:");
        out.push_str(&g.var_map);
    }
    out.push_str(&g.a.decls("\t"));
    out.push_str(&shared_decls);
    for (name, l) in &g.locals {
        let _ = writeln!(
            out,
            "\t.local .align {} .b8 {name}[{}];",
            l.align.max(1),
            l.size.max(1)
        );
    }
    let _ = writeln!(out);
    // The header goes in front of the body, in the body's own buffer: the body is most of the
    // module (the unrolled SGEMM's is some 400 KB), and copying it into a fresh one costs more.
    let mut text = g.a.take_body();
    text.insert_str(0, &out);
    let _ = writeln!(text, "}}");
    Ok(text)
}

/// Loads a record/vector parameter passed by value (`.param .b8 name[S]`) leaf by leaf.
fn load_param_value(g: &mut Gen<'_, '_>, name: &str, ty: &Type) -> Result<Val, CodegenError> {
    fn go(g: &mut Gen<'_, '_>, name: &str, ty: &Type, off: u64) -> Result<Val, CodegenError> {
        Ok(match ty {
            Type::Scalar(t) => {
                let at = if off == 0 {
                    format!("[{name}]")
                } else {
                    format!("[{name}+{off}]")
                };
                if *t == ScalarType::Bool {
                    let b = g.a.tmp(Class::B32);
                    g.a.ins(format_args!("ld.param.u8 {b}, {at}"));
                    let p = g.a.tmp(Class::Pred);
                    g.a.ins(format_args!("setp.ne.u32 {p}, {b}, 0"));
                    Val::Scalar(p, *t)
                } else {
                    let r = g.a.tmp(Class::of(*t));
                    g.a.ins(format_args!("ld.param{} {r}, {at}", expr::mem_type(*t)));
                    Val::Scalar(r, *t)
                }
            }
            Type::Vector { elem, lanes } => {
                let mut ls: Vec<Opd> = Vec::new();
                for l in 0..*lanes as u64 {
                    let v = go(
                        g,
                        name,
                        &Type::Scalar(*elem),
                        off + l * elem.size_bytes() as u64,
                    )?;
                    if let Val::Scalar(o, _) = v {
                        ls.push(o);
                    }
                }
                Val::Vector(*elem, ls)
            }
            Type::Record(r) => {
                let def = g.cx.record(r)?;
                let mut fs = Vec::new();
                for f in &def.fields {
                    let (fo, fty) = g.cx.field_offset(r, &f.name)?;
                    fs.push(go(g, name, &fty, off + fo)?);
                }
                Val::Record(r.clone(), fs)
            }
            other => {
                return Err(g.cx.unsupported(
                    format!("a by-value parameter of type `{other}`"),
                    "scalars, vectors and records",
                ))
            }
        })
    }
    go(g, name, ty, 0)
}
