//! CUDA C (for NVRTC), HIP C (for hiprtc) and OpenCL C 1.2: one emitter, three dialects.
//!
//! # Kernel ABI
//!
//! The generated kernel is named [`Source::entry`] (the kernel's own name, or
//! `spoc_kernel_<name>` when a target language reserves it) and takes, for each IR parameter in
//! order:
//! - a scalar, record or vector parameter: its value (a record or vector by value, laid out as
//!   `#[repr(C)]`; a vector `T×N` is `struct { T x, y[, z[, w]]; }`, i.e. `[T; N]`, not an
//!   OpenCL/CUDA built-in vector type; `bool` is one byte, `uchar` in OpenCL);
//! - a buffer (`&[T]` / `&mut [T]`): a pointer to its first element (`const T*` for `&[T]`,
//!   `__global` in OpenCL) followed by its length in elements as a 32-bit unsigned integer
//!   (`unsigned int <name>_len`), which `x.len()` reads.
//!
//! After the parameters, if the kernel declares a shared array sized at launch:
//! - OpenCL: `__local T* <name>` (bind it with `clSetKernelArg(k, i, bytes, NULL)`), then
//!   `uint <name>_len`, its length in elements;
//! - CUDA/HIP: `unsigned int <name>_len` only; the array itself is the launch's dynamic shared
//!   memory (`extern __shared__ T <name>[]`).
//!
//! `f16` values are their IEEE binary16 bits (`unsigned short`), converted in software.
//!
//! # Semantics kept exactly
//!
//! - Signed `+ - *` and negation are computed in the unsigned type of the same width and cast
//!   back (C's signed overflow is undefined; the IR wraps). Unsigned-to-signed casts wrap on
//!   every compiler these sources are meant for (two's complement; defined in C++20).
//! - Signed `abs` is `(x ^ s) - s` in the unsigned type (`s` all ones for negative `x`), so
//!   `i32::MIN.abs()` is `i32::MIN`. NVVM still takes that for a non-negative `abs`, so CUDA C
//!   (and OpenCL C on NVIDIA, [`crate::Capabilities::inline_ptx`]) writes signed `abs` and
//!   integer `min`/`max` as inline PTX compare-and-select (difftest/FINDINGS.md F9, F13).
//! - Integer `/` and `%` go through helpers that give `MIN / -1 = MIN`, `MIN % -1 = 0` and 0 for
//!   a zero divisor, in every dialect: C leaves each of these undefined (C11 §6.5.5), a compiler
//!   may assume they do not happen (and delete the kernel's later tests of the divisor), and on
//!   CPU devices such as PoCL the division would trap and kill the host process. The checked
//!   mode (see below) reports a zero divisor instead.
//! - Shift amounts are masked to the width (`a << (b & 31u)`); `<<` on signed values shifts the
//!   unsigned bits; `>>` is arithmetic on signed types.
//! - Float-to-integer casts saturate and map NaN to 0 (helpers); `f16` conversions round once.
//! - Operands are evaluated left to right where it matters: an operand that reads memory is
//!   stored in a temporary before a later operand with side effects (a helper call, an atomic).
//!   An assignment evaluates its value before its place.
//! - `match` expressions, `[v; n]`, and `if`/`&&`/`||` whose branches need statements become
//!   statements assigning a temporary, run only when the IR would evaluate them.
//! - `for` loops never overflow: the plain C loop is used only for step 1 with bounds that
//!   cannot change; otherwise the trip count is computed once in the unsigned type of the
//!   variable's width.
//! - No contraction of `a * b + c` into an FMA: OpenCL gets `#pragma OPENCL FP_CONTRACT OFF`,
//!   HIP `#pragma clang fp contract(off)`; for CUDA, NVRTC must be given `--fmad=false` (its
//!   defaults `--prec-div=true --prec-sqrt=true` make `/` and `sqrtf` correctly rounded).
//!   OpenCL 1.2's single-precision `/` and `sqrt` are correctly rounded only with the build
//!   option `-cl-fp32-correctly-rounded-divide-sqrt`, which the OpenCL backend must pass.
//!   hiprtc: pass `-ffp-contract=off` as well (belt and braces).
//!
//! # Dialect notes
//!
//! - Warp operations. CUDA uses the `_sync` forms: shuffles with the full mask
//!   `0xffffffff` (all 32 lanes must reach them), votes and ballot with `__activemask()`. HIP
//!   uses `__shfl*`, `__any`, `__all`, `__ballot` over the hardware wavefront, which is 64 lanes
//!   wide on most AMD GPUs: `warp_size()` says so, and `ballot` returns the low 32 lanes only.
//!   OpenCL needs `caps.subgroups` and OpenCL C 2.0 (build with `-cl-std=CL2.0`; OpenCL C 1.2
//!   has no subgroup functions): votes, lane id and size come from `cl_khr_subgroups` (enabled
//!   by a pragma), shuffles from `cl_khr_subgroup_shuffle` / `cl_khr_subgroup_shuffle_relative`,
//!   ballot from `cl_khr_subgroup_ballot` (function-only extensions, named in a comment); the
//!   device must report each one the source uses.
//! - `sync_warp()`: CUDA `__syncwarp()`, HIP `__builtin_amdgcn_wave_barrier()` (a wavefront
//!   runs in lockstep), OpenCL `sub_group_barrier` (subgroups required).
//! - Fences: a device-scope fence in OpenCL 1.2 is `mem_fence(CLK_GLOBAL_MEM_FENCE)`, the
//!   strongest fence the version has.
//! - Atomics: 64-bit integer atomics need `caps.int64_atomics` (OpenCL:
//!   `cl_khr_int64_base_atomics`, and `cl_khr_int64_extended_atomics` for min/max/and/or/xor).
//!   Float atomic add is native on CUDA/HIP when `caps.float_atomic_add`, else (and always on
//!   OpenCL) a compare-and-swap loop on the bits; signed 64-bit min/max on CUDA/HIP are
//!   compare-and-swap loops too.
//! - `f64` needs `caps.fp64` (OpenCL: `cl_khr_fp64`, enabled only when used).
//!
//! Unsupported constructs give [`CodegenError::Unsupported`], never wrong code.

mod body;
mod checks;
mod ctx;
mod dialect;
mod expr;
mod intrinsics;
mod prelude;
mod scan;
mod stmt;

use crate::names::{function_ident, is_reserved};
use crate::{Code as SourceCode, CodegenError, Options, Source, Target};
use body::Body;
use ctx::Ctx;
use dialect::{Dialect, Storage};
use spoc_ir::{Function, Kernel, ScalarType, Type};

/// Generates C-family source for `kernel` (already validated).
///
/// # Errors
/// [`CodegenError::Unsupported`] when the device lacks a capability the kernel needs (f64,
/// 64-bit atomics, subgroups) or the target cannot express a node;
/// [`CodegenError::FeatureNotSupported`] if `target` is not CUDA C, HIP or OpenCL.
pub fn generate(
    target: Target,
    kernel: &Kernel,
    opts: &Options<'_>,
) -> Result<Source, CodegenError> {
    let Some(d) = Dialect::of(target) else {
        return Err(CodegenError::FeatureNotSupported {
            backend: target.backend_name().into(),
            feature: "C-family code generation".into(),
        });
    };
    let mut ctx = Ctx::new(d, target, kernel, &opts.caps);
    ctx.checked = opts.checked;
    let uses_f64 = check_f64(&ctx)?;
    ctx.ext.fp64 = uses_f64 && d.is_opencl();

    let mut functions = String::new();
    for f in callees_first(kernel) {
        functions.push_str(&emit_function(&mut ctx, f)?);
        functions.push('\n');
    }
    let entry = if is_reserved(&kernel.name) || kernel.name.starts_with("spoc_") {
        format!("spoc_kernel_{}", kernel.name)
    } else {
        kernel.name.clone()
    };
    let kernel_text = emit_kernel(&mut ctx, &entry)?;

    let mut out = format!(
        "/* Generated by spoc-codegen from kernel `{}`: {}. */\n",
        kernel.name,
        match d {
            Dialect::Cuda => "CUDA C for NVRTC (compile with --fmad=false)",
            Dialect::Hip => "HIP C for hiprtc (compile with -ffp-contract=off)",
            Dialect::OpenCl if ctx.ext.subgroups => {
                "OpenCL C 2.0 with subgroups (build with -cl-std=CL2.0 \
                 -cl-fp32-correctly-rounded-divide-sqrt)"
            }
            Dialect::OpenCl => "OpenCL C 1.2 (build with -cl-fp32-correctly-rounded-divide-sqrt)",
        }
    );
    match d {
        Dialect::OpenCl => {
            out.push_str("#pragma OPENCL FP_CONTRACT OFF\n");
            let e = ctx.ext;
            let exts = [
                (e.fp64, "cl_khr_fp64"),
                (e.int64_base_atomics, "cl_khr_int64_base_atomics"),
                (e.int64_extended_atomics, "cl_khr_int64_extended_atomics"),
                (e.subgroups, "cl_khr_subgroups"),
            ];
            for (on, name) in exts {
                if on {
                    out.push_str(&format!("#pragma OPENCL EXTENSION {name} : enable\n"));
                }
            }
            // These extensions only add functions: no pragma, but the device must have them.
            let needs: Vec<&str> = [
                (e.subgroup_shuffle, "cl_khr_subgroup_shuffle"),
                (
                    e.subgroup_shuffle_relative,
                    "cl_khr_subgroup_shuffle_relative",
                ),
                (e.subgroup_ballot, "cl_khr_subgroup_ballot"),
            ]
            .into_iter()
            .filter_map(|(on, n)| on.then_some(n))
            .collect();
            if !needs.is_empty() {
                out.push_str(&format!(
                    "/* The device must support {}. */\n",
                    needs.join(", ")
                ));
            }
        }
        Dialect::Hip => out.push_str("#pragma clang fp contract(off)\n"),
        Dialect::Cuda => {}
    }
    out.push('\n');
    let types = ctx.type_section();
    out.push_str(&types);
    // The fault recorder first: the checked helpers call it.
    let (first, rest): (Vec<_>, Vec<_>) = ctx
        .helpers
        .iter()
        .partition(|(n, _)| n.as_str() == "spoc_record_fault");
    for (_, h) in first.into_iter().chain(rest) {
        out.push_str(h);
        out.push('\n');
    }
    out.push_str(&functions);
    out.push_str(&kernel_text);
    Ok(Source {
        target,
        entry,
        code: SourceCode::Text(out),
        abi: crate::abi::describe(target, kernel, opts)?,
    })
}

/// Refuses `f64` on a device without it; returns whether the kernel uses `f64` at all.
fn check_f64(ctx: &Ctx) -> Result<bool, CodegenError> {
    let kernel = ctx.kernel;
    let has = |t: &Type| scan::type_has(kernel, t, ScalarType::F64);
    let mut first: Option<String> = None;
    let bodies = std::iter::once((None, &kernel.vars, &kernel.body))
        .chain(kernel.functions.iter().map(|f| (Some(f), &f.vars, &f.body)));
    for (func, vars, body) in bodies {
        if let Some(v) = vars.iter().find(|v| has(&v.ty)) {
            first.get_or_insert_with(|| format!("variable `{}: {}`", v.name, v.ty));
        }
        if let Some(f) = func.filter(|f| has(&f.ret)) {
            first.get_or_insert_with(|| format!("helper `{}` returning `{}`", f.name, f.ret));
        }
        scan::for_each_expr(body, &mut |e| {
            if first.is_none() && has(&e.ty) {
                first = Some(format!(
                    "`{}`",
                    spoc_ir::print::expr_to_string(kernel, func, e)
                ));
            }
        });
    }
    let Some(node) = first else {
        return Ok(false);
    };
    if !ctx.caps.fp64 {
        let cap = if ctx.d.is_opencl() {
            "fp64 (cl_khr_fp64)"
        } else {
            "fp64"
        };
        return Err(ctx.unsupported(format!("f64 arithmetic in {node}"), cap));
    }
    Ok(true)
}

/// The helper functions, each after the helpers it calls.
fn callees_first(kernel: &Kernel) -> Vec<&Function> {
    fn visit<'k>(
        k: &'k Kernel,
        f: &'k Function,
        done: &mut Vec<&'k str>,
        out: &mut Vec<&'k Function>,
    ) {
        if done.contains(&f.name.as_str()) {
            return;
        }
        done.push(&f.name);
        let mut callees = Vec::new();
        scan::for_each_expr(&f.body, &mut |e| {
            if let spoc_ir::ExprKind::Call { func, .. } = &e.kind {
                callees.push(func.clone());
            }
        });
        for c in callees {
            if let Some(g) = k.function(&c) {
                visit(k, g, done, out);
            }
        }
        out.push(f);
    }
    let mut done = Vec::new();
    let mut out = Vec::new();
    for f in &kernel.functions {
        visit(kernel, f, &mut done, &mut out);
    }
    out
}

fn emit_function<'k>(ctx: &mut Ctx<'k>, f: &'k Function) -> Result<String, CodegenError> {
    let mut b = Body::new(ctx, Some(f));
    let params = b.param_list();
    let ret = b.ctx.ty(&f.ret, Storage::Value);
    let head = format!("{} {ret} {}", b.ctx.d.device_fn(), function_ident(&f.name));
    let params = if params.is_empty() {
        vec!["void".to_string()]
    } else {
        params
    };
    let sig = Body::signature(&head, &params);
    for (v, arg) in b.copies.clone() {
        let ty = f.var(v).ty.clone();
        let id = b.ident(v).to_string();
        let decl = b.ctx.decl(&ty, &id, Storage::Value);
        b.line(format!("{decl};"));
        b.copy_array(&id, &arg, &ty);
    }
    b.block(&f.body)?;
    Ok(format!("{sig} {{\n{}}}\n", b.text()))
}

fn emit_kernel(ctx: &mut Ctx, entry: &str) -> Result<String, CodegenError> {
    let kernel = ctx.kernel;
    let mut b = Body::new(ctx, None);
    let params = b.param_list();
    let head = format!("{} {entry}", b.ctx.d.kernel_fn());
    let params = if params.is_empty() {
        vec!["void".to_string()]
    } else {
        params
    };
    let sig = Body::signature(&head, &params);
    let d = b.ctx.d;
    for s in &kernel.shared {
        let id = b.ident(s.var).to_string();
        let elem = b.ctx.ty(&s.elem, Storage::Memory);
        match (s.len, d) {
            (Some(n), Dialect::OpenCl) => b.line(format!("__local {elem} {id}[{n}];")),
            (Some(n), _) => b.line(format!("__shared__ {elem} {id}[{n}];")),
            (None, Dialect::OpenCl) => {} // a kernel parameter
            (None, _) => b.line(format!("extern __shared__ {elem} {id}[];")),
        }
    }
    b.block(&kernel.body)?;
    Ok(format!("{sig} {{\n{}}}\n", b.text()))
}
