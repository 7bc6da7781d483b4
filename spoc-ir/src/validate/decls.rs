//! Declarations: names, type definitions, parameters, variable tables, shared arrays.

use crate::{Function, Kernel, MemSpace, Param, ScalarType, Type, VarDecl, VarKind};
use std::collections::HashSet;

/// True if `s` is an identifier (`[A-Za-z_][A-Za-z0-9_]*`), as every target language accepts.
pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How a value of a buffer parameter's type is spelled in the kernel language (`&[f32]`,
/// `&mut [Point]`).
pub(super) fn rust_buffer(elem: &Type, mutable: bool) -> String {
    format!("&{}[{elem}]", if mutable { "mut " } else { "" })
}

/// True for scalars, records and vectors: what buffers, shared arrays, record fields and variant
/// payloads hold.
pub(super) fn is_plain_data(ty: &Type) -> bool {
    matches!(ty, Type::Scalar(_) | Type::Record(_) | Type::Vector { .. })
}

/// Checks that `ty` refers only to defined records and variants and has a sensible shape; `what`
/// names where it occurs.
pub(super) fn check_type(kernel: &Kernel, ty: &Type, what: &str) -> Result<(), String> {
    match ty {
        Type::Unit | Type::Scalar(_) => Ok(()),
        Type::Pending(p) => Err(format!(
            "{what} has the unresolved type `{p}` (a placeholder the kernel's loader resolves)"
        )),
        Type::Record(n) => {
            if kernel.record(n).is_some() {
                Ok(())
            } else if kernel.variant(n).is_some() {
                Err(format!(
                    "{what} has record type `{n}`, but `{n}` is a variant (enum) type"
                ))
            } else {
                Err(format!(
                    "{what} has type `{n}`, but no record `{n}` is defined in the kernel"
                ))
            }
        }
        Type::Variant(n) => {
            if kernel.variant(n).is_some() {
                Ok(())
            } else if kernel.record(n).is_some() {
                Err(format!(
                    "{what} has variant type `{n}`, but `{n}` is a record (struct) type"
                ))
            } else {
                Err(format!(
                    "{what} has type `{n}`, but no variant (enum) `{n}` is defined in the kernel"
                ))
            }
        }
        Type::Vector { elem, lanes } => {
            if !(2..=4).contains(lanes) {
                Err(format!(
                    "{what} has type `{ty}`: vectors have 2, 3 or 4 lanes, not {lanes}"
                ))
            } else if *elem == ScalarType::Bool {
                Err(format!(
                    "{what} has type `{ty}`: vectors of `bool` are not supported"
                ))
            } else {
                Ok(())
            }
        }
        Type::Array { elem, space, len } => {
            if *len == Some(0) {
                return Err(format!(
                    "{what} has type `{ty}`: arrays of length 0 are not supported"
                ));
            }
            if **elem == Type::Unit {
                return Err(format!("{what} has type `{ty}`: an array of `()`"));
            }
            if *space == MemSpace::Local && len.is_none() {
                return Err(format!(
                    "{what} has type `{ty}`: a local array needs a length known at compile time"
                ));
            }
            match &**elem {
                Type::Array {
                    space: MemSpace::Local,
                    len: Some(_),
                    ..
                } if *space == MemSpace::Local => {}
                Type::Array { .. } => {
                    return Err(format!(
                        "{what} has type `{ty}`: only local arrays may hold arrays, and only \
                         local arrays of fixed length"
                    ))
                }
                _ => {}
            }
            check_type(kernel, elem, what)
        }
    }
}

/// Kernel-wide declarations: the kernel's name, the type definitions, helper names, the kernel's
/// parameters, variables and shared arrays.
pub(super) fn check_kernel_decls(kernel: &Kernel) -> Result<(), String> {
    if !is_identifier(&kernel.name) {
        return Err(format!(
            "the kernel's name `{}` is not an identifier (letters, digits and `_`, not starting \
             with a digit)",
            kernel.name
        ));
    }
    check_type_defs(kernel)?;

    let mut names = HashSet::new();
    for f in &kernel.functions {
        if !is_identifier(&f.name) {
            return Err(format!(
                "helper function name `{}` is not an identifier",
                f.name
            ));
        }
        if !names.insert(f.name.as_str()) {
            return Err(format!("helper function `{}` is defined twice", f.name));
        }
        if f.name == kernel.name {
            return Err(format!(
                "helper function `{}` has the kernel's own name",
                f.name
            ));
        }
    }

    check_params(kernel, &kernel.params, &kernel.vars, "the kernel", true)?;
    check_vars(kernel, &kernel.vars, true)?;
    check_shared(kernel)
}

/// A helper's signature and variable table.
pub(super) fn check_function_decls(kernel: &Kernel, f: &Function) -> Result<(), String> {
    check_params(kernel, &f.params, &f.vars, "the helper", false)?;
    check_type(kernel, &f.ret, "the return type")?;
    if matches!(f.ret, Type::Array { .. }) {
        return Err(format!(
            "returns `{}`: helper functions cannot return arrays",
            f.ret
        ));
    }
    check_vars(kernel, &f.vars, false)
}

fn check_type_defs(kernel: &Kernel) -> Result<(), String> {
    let mut names = HashSet::new();
    let type_names = kernel
        .records
        .iter()
        .map(|r| &r.name)
        .chain(kernel.variants.iter().map(|v| &v.name));
    for n in type_names {
        if !is_identifier(n) {
            return Err(format!("type name `{n}` is not an identifier"));
        }
        if !names.insert(n.as_str()) {
            return Err(format!(
                "type `{n}` is defined twice (records and variants share one namespace)"
            ));
        }
    }
    for r in &kernel.records {
        let mut fields = HashSet::new();
        for f in &r.fields {
            member_name(
                &mut fields,
                &f.name,
                &format!("record `{}`", r.name),
                "field",
            )?;
            let what = format!("field `{}.{}`", r.name, f.name);
            check_type(kernel, &f.ty, &what)?;
            if !is_plain_data(&f.ty) {
                return Err(format!(
                    "{what} has type `{}`: record fields must be scalars, vectors or records",
                    f.ty
                ));
            }
        }
    }
    for v in &kernel.variants {
        let mut cases = HashSet::new();
        for c in &v.cases {
            member_name(
                &mut cases,
                &c.name,
                &format!("variant `{}`", v.name),
                "case",
            )?;
            for (i, t) in c.payload.iter().enumerate() {
                let what = format!("payload {i} of `{}::{}`", v.name, c.name);
                check_type(kernel, t, &what)?;
                if !is_plain_data(t) {
                    return Err(format!(
                        "{what} has type `{t}`: variant payloads must be scalars, vectors or \
                         records"
                    ));
                }
            }
        }
    }
    check_record_cycles(kernel)
}

/// Records are stored by value: one that contains itself has no finite size.
fn check_record_cycles(kernel: &Kernel) -> Result<(), String> {
    // 0 = unvisited, 1 = on the current path, 2 = done.
    let mut state = vec![0u8; kernel.records.len()];
    let index = |n: &str| kernel.records.iter().position(|r| r.name == n);
    fn visit(
        kernel: &Kernel,
        i: usize,
        state: &mut [u8],
        path: &mut Vec<usize>,
        index: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<(), String> {
        state[i] = 1;
        path.push(i);
        for f in &kernel.records[i].fields {
            if let Type::Record(n) = &f.ty {
                let Some(j) = index(n) else { continue };
                if state[j] == 1 {
                    let start = path.iter().position(|&p| p == j).unwrap_or(0);
                    let mut names: Vec<&str> = path[start..]
                        .iter()
                        .map(|&p| kernel.records[p].name.as_str())
                        .collect();
                    names.push(&kernel.records[j].name);
                    return Err(format!(
                        "record `{}` contains itself ({}); records are stored by value, so it \
                         would have no finite size",
                        kernel.records[j].name,
                        names
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(" -> ")
                    ));
                }
                if state[j] == 0 {
                    visit(kernel, j, state, path, index)?;
                }
            }
        }
        path.pop();
        state[i] = 2;
        Ok(())
    }
    for i in 0..kernel.records.len() {
        if state[i] == 0 {
            visit(kernel, i, &mut state, &mut Vec::new(), &index)?;
        }
    }
    Ok(())
}

fn check_params(
    kernel: &Kernel,
    params: &[Param],
    vars: &[VarDecl],
    owner: &str,
    is_kernel: bool,
) -> Result<(), String> {
    let mut names = HashSet::new();
    let mut ids = HashSet::new();
    for p in params {
        if !is_identifier(&p.name) {
            return Err(format!("parameter name `{}` is not an identifier", p.name));
        }
        if !names.insert(p.name.as_str()) {
            return Err(format!("two parameters are named `{}`", p.name));
        }
        let Some(decl) = vars.get(p.var.0 as usize) else {
            return Err(format!(
                "parameter `{}` refers to variable #{}, but {owner} has {} variables",
                p.name,
                p.var.0,
                vars.len()
            ));
        };
        if !ids.insert(p.var) {
            return Err(format!(
                "parameter `{}` refers to variable #{}, which another parameter already uses",
                p.name, p.var.0
            ));
        }
        if decl.kind != VarKind::Param {
            return Err(format!(
                "parameter `{}` refers to variable #{} (`{}`), which is declared as a {} variable, \
                 not a parameter",
                p.name,
                p.var.0,
                decl.name,
                kind_word(decl.kind)
            ));
        }
        if decl.name != p.name {
            return Err(format!(
                "parameter `{}` refers to variable #{}, which is named `{}`",
                p.name, p.var.0, decl.name
            ));
        }
        if decl.ty != p.ty {
            return Err(format!(
                "parameter `{}` has type `{}`, but its variable is declared `{}`",
                p.name, p.ty, decl.ty
            ));
        }
        let what = format!("parameter `{}`", p.name);
        check_type(kernel, &p.ty, &what)?;
        match &p.ty {
            Type::Unit => return Err(format!("{what} has type `()`")),
            Type::Array { elem, space, len } if is_kernel => {
                if *space != MemSpace::Global || len.is_some() {
                    return Err(format!(
                        "{what} has type `{}`: a kernel's array parameters are buffers \
                         (`global` arrays without length, `&[T]` or `&mut [T]`)",
                        p.ty
                    ));
                }
                if !is_plain_data(elem) {
                    return Err(format!(
                        "{what} is a buffer of `{elem}`: buffers hold scalars, vectors or records"
                    ));
                }
            }
            Type::Variant(n) if is_kernel => {
                return Err(format!(
                    "{what} has variant type `{n}`: variants cannot be kernel parameters"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn kind_word(k: VarKind) -> &'static str {
    match k {
        VarKind::Param => "parameter",
        VarKind::Local => "local",
        VarKind::Shared => "shared",
    }
}

fn check_vars(kernel: &Kernel, vars: &[VarDecl], is_kernel: bool) -> Result<(), String> {
    for (i, v) in vars.iter().enumerate() {
        let what = format!("variable `{}` (#{i})", v.name);
        check_type(kernel, &v.ty, &what)?;
        match v.kind {
            VarKind::Param => {}
            VarKind::Local => match &v.ty {
                Type::Unit => return Err(format!("{what} has type `()`")),
                Type::Array { space, .. } if *space != MemSpace::Local => {
                    return Err(format!(
                        "local {what} has type `{}`: local variables hold only local arrays \
                         (buffers and shared arrays are used through their own names)",
                        v.ty
                    ))
                }
                _ => {}
            },
            VarKind::Shared => {
                if !is_kernel {
                    return Err(format!(
                        "{what} is a shared array: helper functions cannot declare shared \
                         arrays (declare it in the kernel and pass it as an argument)"
                    ));
                }
                match &v.ty {
                    Type::Array {
                        elem,
                        space: MemSpace::Shared,
                        ..
                    } if is_plain_data(elem) => {}
                    _ => {
                        return Err(format!(
                            "shared {what} has type `{}`, not a `shared` array of scalars, \
                             vectors or records",
                            v.ty
                        ))
                    }
                }
            }
        }
    }
    Ok(())
}

fn check_shared(kernel: &Kernel) -> Result<(), String> {
    let mut seen = HashSet::new();
    let mut dynamic: Option<&str> = None;
    for s in &kernel.shared {
        let Some(decl) = kernel.vars.get(s.var.0 as usize) else {
            return Err(format!(
                "a shared array declaration refers to variable #{}, but the kernel has {} \
                 variables",
                s.var.0,
                kernel.vars.len()
            ));
        };
        if decl.kind != VarKind::Shared {
            return Err(format!(
                "shared array declaration of `{}` (#{}), which is declared as a {} variable",
                decl.name,
                s.var.0,
                kind_word(decl.kind)
            ));
        }
        if !seen.insert(s.var) {
            return Err(format!(
                "shared array `{}` (#{}) is declared twice",
                decl.name, s.var.0
            ));
        }
        let expected = Type::Array {
            elem: std::sync::Arc::new(s.elem.clone()),
            space: MemSpace::Shared,
            len: s.len,
        };
        if decl.ty != expected {
            return Err(format!(
                "shared array `{}` is declared as `{expected}`, but its variable has type `{}`",
                decl.name, decl.ty
            ));
        }
        if s.len.is_none() {
            if let Some(other) = dynamic {
                return Err(format!(
                    "shared arrays `{other}` and `{}` are both sized at launch; only one shared \
                     array may be (they would share the same memory)",
                    decl.name
                ));
            }
            dynamic = Some(&decl.name);
        }
    }
    for (i, v) in kernel.vars.iter().enumerate() {
        if v.kind == VarKind::Shared && !seen.contains(&crate::VarId(i as u32)) {
            return Err(format!(
                "shared variable `{}` (#{i}) has no shared array declaration",
                v.name
            ));
        }
    }
    Ok(())
}

/// Checks member `name` (a `kind`: field or case) of `owner` (``record `R` ``): an identifier,
/// not already in `seen`; records it there.
fn member_name<'a>(
    seen: &mut HashSet<&'a str>,
    name: &'a str,
    owner: &str,
    kind: &str,
) -> Result<(), String> {
    if !is_identifier(name) {
        return Err(format!(
            "{owner}: {kind} name `{name}` is not an identifier"
        ));
    }
    if !seen.insert(name) {
        return Err(format!("{owner} has two {kind}s named `{name}`"));
    }
    Ok(())
}
