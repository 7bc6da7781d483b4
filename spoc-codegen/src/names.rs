//! Identifiers for generated code: the kernel's own names where possible.

use spoc_ir::VarDecl;

/// Words no generated identifier may be: the reserved words of C/C++, OpenCL C, CUDA, HIP, MSL,
/// WGSL and GLSL that a Rust identifier could spell.
const RESERVED: &[&str] = &[
    "auto",
    "bool",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "half",
    "kernel",
    "global",
    "local",
    "constant",
    "private",
    "image2d_t",
    "sampler_t",
    "class",
    "namespace",
    "template",
    "this",
    "new",
    "delete",
    "operator",
    "private",
    "public",
    "protected",
    "virtual",
    "friend",
    "true",
    "false",
    "uint",
    "ulong",
    "uchar",
    "ushort",
    "size_t",
    "ptrdiff_t",
    "min",
    "max",
    "abs",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "pow",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fma",
    "var",
    "let",
    "fn",
    "loop",
    "vec2",
    "vec3",
    "vec4",
    "mat2",
    "mat3",
    "mat4",
    "ptr",
    "array",
    "atomic",
    "texture",
    "sampler",
    "bitcast",
    "override",
    "workgroup",
    "storage",
    "uniform",
    "in",
    "out",
    "inout",
    "main",
    "device",
    "thread",
    "threadgroup",
    "select",
    "all",
    "any",
    "mix",
    "step",
    "clamp",
    "dot",
    "length",
    "distance",
    "normalize",
    "i32",
    "u32",
    "f32",
    "f16",
    "f64",
    "i64",
    "u64",
    "asm",
    "export",
    "import",
    "module",
    "requires",
    "concept",
    "using",
    "typename",
    "mutable",
    "explicit",
    "noexcept",
    "nullptr",
    "static_assert",
    "thread_local",
    "alignas",
    "alignof",
    "decltype",
    "constexpr",
    "wchar_t",
    "char16_t",
    "char32_t",
    "int2",
    "int3",
    "int4",
    "float2",
    "float3",
    "float4",
    "dim3",
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
];

/// True if `name` may not be used as an identifier in generated code.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || name.starts_with("__") || name.starts_with("gl_")
}

/// Identifiers for every variable of a table, indexed like it: the source name where it is free
/// (shadowed names get `_1`, `_2`, … as [`spoc_ir::print::var_names`] gives them), with a `v_`
/// prefix where the name is reserved in some target language. Distinct and deterministic.
pub fn var_idents(vars: &[VarDecl]) -> Vec<String> {
    idents_of_names(spoc_ir::print::var_names(vars))
}

/// [`var_idents`] from the table's [`spoc_ir::print::var_names`], computed already.
pub fn idents_of_names(names: Vec<String>) -> Vec<String> {
    renamed_idents(&names).unwrap_or(names)
}

/// [`idents_of_names`] without taking the names: `None` where every name is its own identifier
/// (none is reserved), so that a caller keeping the names needs no copy of them.
pub fn renamed_idents(names: &[String]) -> Option<Vec<String>> {
    if !names.iter().any(|n| is_reserved(n)) {
        return None;
    }
    let taken: std::collections::HashSet<&str> = names.iter().map(String::as_str).collect();
    Some(
        names
            .iter()
            .map(|n| {
                if !is_reserved(n) {
                    return n.clone();
                }
                let mut cand = format!("v_{n}");
                while taken.contains(cand.as_str()) {
                    cand.insert(0, 'v');
                }
                cand
            })
            .collect(),
    )
}

/// Appends the decimal digits of `v` to `out` without the formatting machinery: the
/// generators write thousands of numbered registers and literals.
#[inline]
pub(crate) fn write_decimal(out: &mut impl std::fmt::Write, v: u32) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    let mut n = v;
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        let _ = out.write_char(char::from(d));
    }
}

/// A helper function's identifier in generated code (`spoc_fn_<name>`), so it can never collide
/// with a variable, a builtin or the kernel.
pub fn function_ident(name: &str) -> String {
    format!("spoc_fn_{name}")
}
