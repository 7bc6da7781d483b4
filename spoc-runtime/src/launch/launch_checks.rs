//! The checks every launch passes before anything runs.

use crate::args::Arg;
use crate::buffer::{ElemInfo, RawBuffer};
pub(crate) use crate::dims::check_dims;
use crate::error::{Error, LaunchProblem, Result};
use crate::ir_scan::{layout, scalar_type_id};
use crate::soa::RawSoaBuffer;
use spoc_ir::{Kernel, Param, ScalarType, Type};
use std::any::TypeId;

/// How a parameter is written in the kernel (`&mut [f32]`, `u32`, …).
fn param_desc(p: &Param) -> String {
    match &p.ty {
        Type::Array { elem, .. } if p.mutable => format!("&mut [{elem}]"),
        Type::Array { elem, .. } => format!("&[{elem}]"),
        Type::Scalar(ScalarType::U32) => "u32 (or usize)".into(),
        other => other.to_string(),
    }
}

/// The last path segment of a Rust type name, without generics.
fn short_type_name(full: &str) -> &str {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Does a buffer of `info` elements fit a buffer parameter of `elem`?
fn elem_matches(kernel: &Kernel, elem: &Type, info: &ElemInfo) -> bool {
    let size_ok = || layout(kernel, elem).is_some_and(|(size, _)| size == info.size);
    match (elem, info.type_id) {
        (Type::Scalar(s), Some(id)) => match scalar_type_id(*s) {
            Some(want) => want == id,
            None => info.size == s.size_bytes(),
        },
        (Type::Record(name), Some(_)) => {
            size_ok() && short_type_name(info.type_name) == short_type_name(name)
        }
        // Untyped buffers and other element types (vectors, fixed arrays) match by size.
        _ => size_ok(),
    }
}

fn scalar_matches(s: ScalarType, arg: &Arg<'_>) -> bool {
    matches!(
        (s, arg),
        (ScalarType::Bool, Arg::Bool(_))
            | (ScalarType::I32, Arg::I32(_))
            | (ScalarType::I64, Arg::I64(_))
            | (ScalarType::U32, Arg::U32(_))
            | (ScalarType::U64, Arg::U64(_))
            | (ScalarType::F32, Arg::F32(_))
            | (ScalarType::F64, Arg::F64(_))
    )
}

/// A Structure-of-Arrays buffer against a record-buffer parameter of element `elem`: the
/// same record, the same fields (names and scalar types, in order) as the kernel's definition,
/// every field array `len` elements long.
fn check_soa(kernel: &Kernel, elem: &Type, soa: &RawSoaBuffer) -> Option<String> {
    let Type::Record(rec) = elem else {
        return Some(format!(
            "the parameter is a buffer of `{elem}`, not of records"
        ));
    };
    if short_type_name(rec) != soa.record_name() {
        return Some(format!(
            "the buffer holds `{}`, the parameter `{rec}`",
            soa.record_name()
        ));
    }
    let Some(def) = kernel.record(rec) else {
        return Some(format!("the kernel has no definition of record `{rec}`"));
    };
    if def.fields.len() != soa.fields().len() {
        return Some(format!(
            "`{rec}` has {} field(s) in the kernel, the buffer {}",
            def.fields.len(),
            soa.fields().len()
        ));
    }
    for (f, a) in def.fields.iter().zip(soa.fields()) {
        if f.name != a.name() || f.ty != Type::Scalar(a.scalar()) {
            return Some(format!(
                "field `{}: {}` of `{rec}` in the kernel, `{}: {}` in the buffer",
                f.name,
                f.ty,
                a.name(),
                a.scalar()
            ));
        }
        if a.buffer().len() != soa.len() || a.buffer().elem_size() != a.scalar().size_bytes() {
            return Some(format!(
                "field array `{}` has {} elements of {} bytes, the buffer {} of {}",
                a.name(),
                a.buffer().len(),
                a.buffer().elem_size(),
                soa.len(),
                a.scalar().size_bytes()
            ));
        }
    }
    None
}

/// What is wrong with a buffer of `len` elements on `device` for parameter `param` of a launch on
/// `launch_device`: another device, or more elements than a `u32` index reaches.
fn placement(
    param: &str,
    device: &crate::Device,
    len: usize,
    launch_device: &crate::Device,
) -> Option<LaunchProblem> {
    if !device.same_hardware(launch_device) {
        return Some(LaunchProblem::WrongDevice {
            param: param.to_string(),
            buffer_device: device.id,
            device: launch_device.id,
        });
    }
    if len > u32::MAX as usize {
        return Some(LaunchProblem::BufferTooLong {
            param: param.to_string(),
            len,
        });
    }
    None
}

/// Arguments against the kernel's parameters, in this order: count; each argument's kind and
/// type (turning `Usize` into the parameter's integer type), device and length (for a
/// Structure-of-Arrays argument: its record and fields against the kernel's record, and the
/// parameter listed in `soa_params`, the options the kernel was compiled with); one buffer on
/// two parameters of which one is `&mut`; a shared borrow on a `&mut` parameter.
pub(crate) fn check_args(
    kernel: &Kernel,
    name: &str,
    launch_device: &crate::Device,
    args: &mut [Arg<'_>],
    soa_params: &[String],
) -> Result<()> {
    let bad = |problem| Err(Error::invalid_launch(name, problem));
    let params = &kernel.params;
    if params.len() != args.len() {
        return bad(LaunchProblem::ArgCount {
            expected: params.len(),
            got: args.len(),
        });
    }
    for (index, (p, arg)) in params.iter().zip(args.iter_mut()).enumerate() {
        let mismatch = |arg: &Arg<'_>| {
            bad(LaunchProblem::ArgType {
                index,
                param: p.name.clone(),
                expected: param_desc(p),
                got: arg.describe(),
            })
        };
        let compiled_soa = soa_params.contains(&p.name);
        if let Some(soa) = arg.soa() {
            let Type::Array { elem, .. } = &p.ty else {
                return mismatch(arg);
            };
            if let Some(message) = check_soa(kernel, elem, soa) {
                return bad(LaunchProblem::SoaMismatch {
                    param: p.name.clone(),
                    message,
                });
            }
            if !compiled_soa {
                return bad(LaunchProblem::SoaMismatch {
                    param: p.name.clone(),
                    message: "the kernel was compiled with this parameter as an array of \
                              structures (not in CompileOptions::soa_params)"
                        .into(),
                });
            }
            if let Some(problem) = placement(&p.name, soa.device(), soa.len(), launch_device) {
                return bad(problem);
            }
            continue;
        }
        if compiled_soa {
            return bad(LaunchProblem::SoaMismatch {
                param: p.name.clone(),
                message: format!(
                    "the kernel was compiled with this parameter as a structure of arrays \
                     (CompileOptions::soa_params), but got {}",
                    arg.describe()
                ),
            });
        }
        if let Some(b) = arg.buffer() {
            let Type::Array { elem, .. } = &p.ty else {
                return mismatch(arg);
            };
            if !elem_matches(kernel, elem, &b.elem) {
                return mismatch(arg);
            }
            if let Some(problem) = placement(&p.name, b.device(), b.len(), launch_device) {
                return bad(problem);
            }
            continue;
        }
        match (&p.ty, &*arg) {
            (Type::Scalar(s), Arg::Usize(v)) => {
                let v = *v;
                *arg = match s {
                    ScalarType::U32 => match u32::try_from(v) {
                        Ok(v) => Arg::U32(v),
                        Err(_) => {
                            return bad(LaunchProblem::UsizeOverflow {
                                index,
                                param: p.name.clone(),
                                value: v as u64,
                            })
                        }
                    },
                    ScalarType::U64 => Arg::U64(v as u64),
                    _ => return mismatch(arg),
                };
            }
            (Type::Scalar(s), a) if scalar_matches(*s, a) => {}
            _ => return mismatch(arg),
        }
    }
    // Aliasing, then mutability: (&x, &x) on (&[T], &mut [T]) reports the aliasing.
    let identity = |a: &Arg<'_>| {
        a.buffer()
            .map(RawBuffer::allocation_id)
            .or_else(|| a.soa().map(RawSoaBuffer::allocation_id))
    };
    for i in 0..args.len() {
        let Some(a) = identity(&args[i]) else {
            continue;
        };
        for j in i + 1..args.len() {
            let Some(b) = identity(&args[j]) else {
                continue;
            };
            if a == b && (params[i].mutable || params[j].mutable) {
                let mutable = if params[i].mutable { i } else { j };
                return bad(LaunchProblem::AliasedBuffer {
                    first: params[i].name.clone(),
                    second: params[j].name.clone(),
                    mutable: params[mutable].name.clone(),
                });
            }
        }
    }
    for (p, arg) in params.iter().zip(args.iter()) {
        if p.mutable && matches!(arg, Arg::Buffer(_) | Arg::Soa(_)) {
            return bad(LaunchProblem::ReadOnlyBuffer {
                param: p.name.clone(),
            });
        }
    }
    Ok(())
}

/// What one parameter takes, resolved once per compiled kernel from its signature alone, so
/// that a launch checks its arguments without walking the IR's types ([`args_accepted`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ParamCheck {
    /// A scalar of this type (or a host `usize`, for `u32` and `u64`).
    Scalar(ScalarType),
    /// A buffer: `mutable` for a `&mut [T]` parameter; `elem` the Rust type of a scalar
    /// element (`None`: the element is checked as [`check_args`] does).
    Buffer { mutable: bool, elem: Option<TypeId> },
    /// A parameter no argument fits: left to [`check_args`] to report.
    Other,
}

/// The parameter checks of `kernel` compiled with `soa_params`: `None` when launches of it
/// always take [`check_args`] (parameters compiled as Structure-of-Arrays).
pub(crate) fn param_checks(kernel: &Kernel, soa_params: &[String]) -> Option<Box<[ParamCheck]>> {
    if !soa_params.is_empty() {
        return None;
    }
    Some(
        kernel
            .params
            .iter()
            .map(|p| match &p.ty {
                Type::Scalar(s) => ParamCheck::Scalar(*s),
                Type::Array { elem, .. } => ParamCheck::Buffer {
                    mutable: p.mutable,
                    elem: match elem.as_ref() {
                        Type::Scalar(s) => scalar_type_id(*s),
                        _ => None,
                    },
                },
                _ => ParamCheck::Other,
            })
            .collect(),
    )
}

/// The common case of [`check_args`], from the kernel's [`param_checks`]: true if every
/// argument is accepted (each [`Arg::Usize`] is then turned into its parameter's type, as
/// [`check_args`] does). False accepts nothing and changes nothing: the launch then goes
/// through [`check_args`], which decides and names the problem. It accepts exactly what
/// [`check_args`] accepts of a kernel without Structure-of-Arrays parameters, never more.
pub(crate) fn args_accepted(
    kernel: &Kernel,
    checks: &[ParamCheck],
    launch_device: &crate::Device,
    args: &mut [Arg<'_>],
) -> bool {
    let n = args.len();
    if checks.len() != n || kernel.params.len() != n {
        return false;
    }
    // (Indexed loops over `0..n`, not zipped iterators: this runs on every typed launch, and
    // the iterator adapters cost more than the checks themselves.)
    let (mut usizes, mut buffers, mut writes) = (false, 0usize, false);
    // The first few buffer arguments and whether their parameter is `&mut`, for the aliasing
    // check (more take the pairwise loop over every argument below).
    let mut seen: [Option<(&RawBuffer, bool)>; SEEN_BUFFERS] = [None; SEEN_BUFFERS];
    for i in 0..n {
        let fits = match (&checks[i], &args[i]) {
            (&ParamCheck::Scalar(s), &Arg::Usize(v)) => {
                usizes = true;
                match s {
                    ScalarType::U32 => u32::try_from(v).is_ok(),
                    ScalarType::U64 => true,
                    _ => false,
                }
            }
            (&ParamCheck::Scalar(s), a) => scalar_matches(s, a),
            // Not a shared borrow on a `&mut` parameter.
            (&ParamCheck::Buffer { mutable, elem }, &Arg::Buffer(b)) if !mutable => {
                if let Some(s) = seen.get_mut(buffers) {
                    *s = Some((b, false));
                }
                buffers += 1;
                buffer_fits(kernel, i, elem, b, launch_device)
            }
            (&ParamCheck::Buffer { mutable, elem }, Arg::BufferMut(b)) => {
                if let Some(s) = seen.get_mut(buffers) {
                    *s = Some((b, mutable));
                }
                buffers += 1;
                writes |= mutable;
                buffer_fits(kernel, i, elem, b, launch_device)
            }
            _ => false,
        };
        if !fits {
            return false;
        }
    }
    // One allocation on two parameters of which one is `&mut`.
    if buffers > 1 && writes && buffers <= SEEN_BUFFERS {
        for (i, a) in seen[..buffers].iter().enumerate() {
            let Some((a, m)) = *a else { continue };
            for (b, m2) in seen[i + 1..buffers].iter().flatten() {
                if (m || *m2) && a.same_allocation(b) {
                    return false;
                }
            }
        }
    } else if buffers > 1 && writes {
        for i in 0..n {
            let Some((m, a)) = buffer(&checks[i], &args[i]) else {
                continue;
            };
            for j in i + 1..n {
                let Some((m2, b)) = buffer(&checks[j], &args[j]) else {
                    continue;
                };
                if (m || m2) && a.same_allocation(b) {
                    return false;
                }
            }
        }
    }
    if usizes {
        for i in 0..n {
            if let (&ParamCheck::Scalar(s), &Arg::Usize(v)) = (&checks[i], &args[i]) {
                args[i] = match s {
                    ScalarType::U32 => Arg::U32(v as u32),
                    _ => Arg::U64(v as u64),
                };
            }
        }
    }
    true
}

/// How many buffer arguments [`args_accepted`] checks for aliasing without walking every
/// argument again.
const SEEN_BUFFERS: usize = 8;

/// Buffer `b` on buffer parameter `i` of element type `elem` (its Rust type for a scalar
/// element): the element type, the device and the length `check_args` accepts.
#[inline(always)]
fn buffer_fits(
    kernel: &Kernel,
    i: usize,
    elem: Option<TypeId>,
    b: &RawBuffer,
    launch_device: &crate::Device,
) -> bool {
    (elem.is_some_and(|id| b.elem.type_id == Some(id)) || elem_fits(kernel, i, b))
        && b.device().same_hardware(launch_device)
        && b.len() <= u32::MAX as usize
}

/// A buffer argument on a buffer parameter: whether the parameter is `&mut`, and the buffer.
fn buffer<'a>(c: &ParamCheck, a: &'a Arg<'_>) -> Option<(bool, &'a RawBuffer)> {
    match (*c, a.buffer()) {
        (ParamCheck::Buffer { mutable, .. }, Some(b)) => Some((mutable, b)),
        _ => None,
    }
}

/// Does buffer `b` fit parameter `i`'s element type, as [`check_args`] decides?
#[cold]
fn elem_fits(kernel: &Kernel, i: usize, b: &RawBuffer) -> bool {
    match &kernel.params[i].ty {
        Type::Array { elem, .. } => elem_matches(kernel, elem, &b.elem),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_names() {
        assert_eq!(short_type_name("my_crate::geo::Point"), "Point");
        assert_eq!(short_type_name("Point"), "Point");
        assert_eq!(short_type_name("a::Pair<b::X, c::Y>"), "Pair");
    }
}
