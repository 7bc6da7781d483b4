//! Binding: the launch's arguments checked against the kernel's parameters and bound as
//! buffer views and scalar values.

use super::super::compile::{ParamKind, Program};
use super::super::error::InterpErrorKind;
use super::super::sanitize::Checks;
use super::super::value::Value;
use super::{BufView, Launch, Shadow};
use crate::native::abi::{NativeArg, ScalarArg};
use spoc_ir::ScalarType;

pub(super) fn bad_arg(param: &str, expected: impl Into<String>) -> InterpErrorKind {
    InterpErrorKind::BadArgument {
        param: param.to_string(),
        expected: expected.into(),
    }
}

pub(super) fn scalar_arg(s: ScalarType, a: ScalarArg) -> Option<Value> {
    Some(match (s, a) {
        (ScalarType::Bool, ScalarArg::Bool(v)) => Value::Bool(v),
        (ScalarType::I32, ScalarArg::I32(v)) => Value::I32(v),
        (ScalarType::I64, ScalarArg::I64(v)) => Value::I64(v),
        (ScalarType::U32, ScalarArg::U32(v)) => Value::U32(v),
        (ScalarType::U64, ScalarArg::U64(v)) => Value::U64(v),
        (ScalarType::F32, ScalarArg::F32(v)) => Value::F32(v),
        (ScalarType::F64, ScalarArg::F64(v)) => Value::F64(v),
        _ => return None,
    })
}

/// Checks the arguments against the kernel's parameters and binds them.
pub(super) fn bind<'a>(
    prog: &'a Program,
    args: &[NativeArg],
) -> Result<Launch<'a>, InterpErrorKind> {
    if args.len() != prog.params.len() {
        return Err(bad_arg(
            "(argument list)",
            format!("{} arguments, got {}", prog.params.len(), args.len()),
        ));
    }
    let mut bufs = Vec::new();
    let mut params = Vec::with_capacity(args.len());
    for (p, a) in prog.params.iter().zip(args) {
        let v = match (&p.kind, *a) {
            (ParamKind::Scalar(s), NativeArg::Scalar(v)) => {
                scalar_arg(*s, v).ok_or_else(|| bad_arg(&p.name, format!("a {s}, got {v:?}")))?
            }
            (
                ParamKind::Buffer { elem, mutable },
                NativeArg::Buffer {
                    ptr,
                    len,
                    elem_bytes,
                },
            ) => {
                let l = &prog.layouts[*elem as usize];
                if elem_bytes != l.size() {
                    return Err(bad_arg(
                        &p.name,
                        format!(
                            "a buffer of {}-byte elements, got {elem_bytes}-byte elements",
                            l.size()
                        ),
                    ));
                }
                if !(ptr as usize).is_multiple_of(l.align()) {
                    return Err(bad_arg(
                        &p.name,
                        format!("a buffer aligned to {} bytes", l.align()),
                    ));
                }
                if len > u32::MAX as usize {
                    return Err(bad_arg(&p.name, "a buffer of at most 2^32 - 1 elements"));
                }
                bufs.push(BufView {
                    ptr,
                    len,
                    elem_size: elem_bytes,
                    elem: *elem,
                    mutable: *mutable,
                    name: p.name.as_str().into(),
                    shared: false,
                    shadow: Shadow::None,
                });
                Value::Buffer((bufs.len() - 1) as u32)
            }
            (
                ParamKind::Record(l),
                NativeArg::Buffer {
                    ptr,
                    len,
                    elem_bytes,
                },
            ) => {
                if len < 1 || elem_bytes != l.size() || !(ptr as usize).is_multiple_of(l.align()) {
                    return Err(bad_arg(
                        &p.name,
                        format!(
                            "a record or vector by value: one element of {} bytes aligned to {}",
                            l.size(),
                            l.align()
                        ),
                    ));
                }
                // SAFETY: checked size and alignment of a buffer the launch borrows.
                unsafe { l.load(ptr) }
            }
            (ParamKind::Scalar(s), NativeArg::Buffer { .. }) => {
                return Err(bad_arg(&p.name, format!("a {s}, got a buffer")))
            }
            (_, NativeArg::Scalar(v)) => {
                return Err(bad_arg(&p.name, format!("a buffer, got {v:?}")))
            }
        };
        params.push((p.slot as usize, v));
    }
    for (k, s) in prog.shared.iter().enumerate() {
        params.push((s.slot as usize, Value::Buffer((bufs.len() + k) as u32)));
    }
    Ok(Launch {
        prog,
        bufs,
        params,
        checks: Checks::NONE,
        gcheck: None,
    })
}
