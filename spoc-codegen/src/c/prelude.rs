//! Small `static inline` helper functions the generated code calls where C's own operators
//! would be undefined or differ from the IR's semantics. Each is emitted only when used.

use super::ctx::Ctx;
use super::dialect::{Dialect, Storage};
use spoc_ir::{HalfKind, MemSpace, ScalarType, ShuffleKind, Type};

fn t(d: Dialect, s: ScalarType) -> &'static str {
    d.scalar(s, Storage::Value)
}

/// The suffix used in helper names (`i32`, `f64`, …).
fn sfx(s: ScalarType) -> &'static str {
    s.rust_name()
}

/// `(T)~0 >> 1` style constants: the minimum of a signed type as a C expression.
fn signed_min(d: Dialect, s: ScalarType) -> &'static str {
    match (s, d.is_opencl()) {
        (ScalarType::I32, _) => "(-2147483647 - 1)",
        (_, true) => "(-9223372036854775807L - 1L)",
        (_, false) => "(-9223372036854775807LL - 1LL)",
    }
}

/// Integer `a / b` (`is_rem`: `a % b`) where C's own operator would be undefined behaviour
/// (C11 §6.5.5: the result of `/` or `%` by zero, or of a quotient that does not fit, is
/// undefined; OpenCL C and CUDA C inherit the rule): signed `MIN / -1` wraps to `MIN` and
/// `MIN % -1` is 0, as the IR says, and a zero divisor gives 0 in every dialect. The zero test
/// keeps the compiler from assuming a nonzero divisor (and from deleting the kernel's own later
/// tests of it); on CPU devices such as PoCL the division would also trap and kill the host
/// process. The IR leaves the value unchecked on GPU backends (any value is allowed), and the
/// checked mode reports it before this helper runs.
pub(crate) fn div_rem(ctx: &mut Ctx, s: ScalarType, is_rem: bool) -> String {
    let op = if is_rem { "rem" } else { "div" };
    let name = format!("spoc_{op}_{}", sfx(s));
    ctx.helper(&name, |d| {
        let (ty, u) = (t(d, s), t(d, Dialect::unsigned_of(s)));
        let sym = if is_rem { "%" } else { "/" };
        let mut body = String::new();
        body.push_str("    if (b == 0) return 0; /* undefined in C; traps on CPU devices */\n");
        if s.is_signed() {
            if is_rem {
                body.push_str("    if (b == -1) return 0; /* MIN % -1 is undefined in C */\n");
            } else {
                body.push_str(&format!(
                    "    if (b == -1) return ({ty})(0 - ({u})a); /* MIN / -1 wraps to MIN */\n"
                ));
            }
        }
        body.push_str(&format!("    return a {sym} b;\n"));
        format!(
            "{q} inline {ty} {name}({ty} a, {ty} b) {{\n{body}}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// Checked mode's `a / b` / `a % b` ([`div_rem`] with a zero divisor recorded as
/// [`crate::checked::FAULT_DIVISION_BY_ZERO`] at `line`/`column` in fault record `f`).
pub(crate) fn div_rem_checked(ctx: &mut Ctx, s: ScalarType, is_rem: bool) -> String {
    let plain = div_rem(ctx, s, is_rem);
    let rec = record_fault(ctx);
    let name = format!("{plain}_chk");
    ctx.helper(&name, |d| {
        let (ty, u) = (t(d, s), t(d, ScalarType::U32));
        format!(
            "{q} inline {ty} {name}({ty} a, {ty} b, {fp} f, {u} line, {u} column, {u} function) {{\n    \
             if (b == 0) {{\n        \
             {rec}(f, {code}u, {none}u, 0u, 0u, line, column, function);\n        \
             return 0;\n    \
             }}\n    \
             return {plain}(a, b);\n}}\n",
            q = d.device_fn(),
            fp = fault_ptr(d),
            code = crate::checked::FAULT_DIVISION_BY_ZERO,
            none = crate::checked::NO_ARRAY,
        )
    });
    name
}

/// The type of the fault-record pointer (`__global uint*`, `unsigned int*`).
pub(crate) fn fault_ptr(d: Dialect) -> String {
    format!("{}{}*", d.global_space(), t(d, ScalarType::U32))
}

/// The function that records a fault in checked mode ([`crate::checked`]): the first thread to
/// move word 0 of the record from 0 to its fault kind (an atomic compare-and-swap: OpenCL 1.2
/// `atomic_cmpxchg`, CUDA `atomicCAS`) writes the array, index, length, its `threadIdx` and
/// `blockIdx`, and the statement's line and column; later faults change nothing.
pub(crate) fn record_fault(ctx: &mut Ctx) -> String {
    let name = "spoc_record_fault".to_string();
    ctx.helper(&name, |d| {
        let u = t(d, ScalarType::U32);
        let (cas, ids) = if d.is_opencl() {
            (
                "atomic_cmpxchg((volatile __global uint*)f, 0u, code)",
                [
                    "(uint)get_local_id(0)",
                    "(uint)get_local_id(1)",
                    "(uint)get_local_id(2)",
                    "(uint)get_group_id(0)",
                    "(uint)get_group_id(1)",
                    "(uint)get_group_id(2)",
                ],
            )
        } else {
            (
                "atomicCAS(f, 0u, code)",
                [
                    "threadIdx.x",
                    "threadIdx.y",
                    "threadIdx.z",
                    "blockIdx.x",
                    "blockIdx.y",
                    "blockIdx.z",
                ],
            )
        };
        use crate::checked::*;
        format!(
            "{q} void {name}({fp} f, {u} code, {u} array, {u} index, {u} len, {u} line, {u} column, {u} function) {{\n    \
             if ({cas} == 0u) {{\n        \
             f[{W_ARRAY}] = array;\n        \
             f[{W_INDEX}] = index;\n        \
             f[{W_LEN}] = len;\n        \
             f[{t0}] = {};\n        \
             f[{t1}] = {};\n        \
             f[{t2}] = {};\n        \
             f[{b0}] = {};\n        \
             f[{b1}] = {};\n        \
             f[{b2}] = {};\n        \
             f[{W_LINE}] = line;\n        \
             f[{W_COLUMN}] = column;\n        \
             f[{W_FUNCTION}] = function;\n    \
             }}\n}}\n",
            ids[0],
            ids[1],
            ids[2],
            ids[3],
            ids[4],
            ids[5],
            q = d.device_fn(),
            fp = fault_ptr(d),
            t0 = W_THREAD,
            t1 = W_THREAD + 1,
            t2 = W_THREAD + 2,
            b0 = W_BLOCK,
            b1 = W_BLOCK + 1,
            b2 = W_BLOCK + 2,
        )
    });
    name
}

/// Whether the generated C may use NVIDIA inline PTX: CUDA C always, OpenCL C on a device whose
/// compiler takes it ([`crate::Capabilities::inline_ptx`]).
fn inline_ptx(ctx: &Ctx) -> bool {
    ctx.d == Dialect::Cuda || (ctx.d.is_opencl() && ctx.caps.inline_ptx)
}

/// PTX operand type, bit type and `asm` register constraint of an integer scalar type.
fn ptx_int(s: ScalarType) -> (&'static str, &'static str, &'static str) {
    let wide = s.size_bytes() == 8;
    let ty = match (s.is_signed(), wide) {
        (true, false) => "s32",
        (true, true) => "s64",
        (false, false) => "u32",
        (false, true) => "u64",
    };
    if wide {
        (ty, "b64", "l")
    } else {
        (ty, "b32", "r")
    }
}

/// Wrapping absolute value of a signed integer (`abs(MIN)` = `MIN`, Rust's `wrapping_abs`).
///
/// In C it is computed entirely in the unsigned type: `s` is all ones for a negative `a`, and
/// `(a ^ s) - s` is `-a` then, `a` otherwise; no signed operation can overflow. NVVM still
/// recognises the pattern as `abs` and treats the result as non-negative (NVRTC and NVIDIA's
/// OpenCL folded `abs(x) < 0` to false, and took `abs(MIN) % -3` as an unsigned remainder:
/// difftest/FINDINGS.md F13), so where the C may use inline PTX the helper is PTX's own
/// wrapping form, `neg` and a compare and select (as the PTX generator emits), which NVVM
/// cannot see into.
pub(crate) fn abs_signed(ctx: &mut Ctx, s: ScalarType) -> String {
    let name = format!("spoc_abs_{}", sfx(s));
    let ptx = inline_ptx(ctx);
    ctx.helper(&name, |d| {
        let (ty, u) = (t(d, s), t(d, Dialect::unsigned_of(s)));
        let q = d.device_fn();
        if ptx {
            let (pt, bits, reg) = ptx_int(s);
            return format!(
                "{q} inline {ty} {name}({ty} a) {{\n    {ty} r;\n    asm(\"{{ .reg .{pt} n; .reg .pred p; neg.{pt} n, %1; setp.gt.{pt} p, %1, n; selp.{bits} %0, %1, n, p; }}\" : \"={reg}\"(r) : \"{reg}\"(a));\n    return r;\n}}\n"
            );
        }
        let top = if s.size_bytes() == 8 { 63 } else { 31 };
        format!(
            "{q} inline {ty} {name}({ty} a) {{\n    \
             {u} x = ({u})a;\n    \
             {u} s = ({u})0 - (x >> {top});\n    \
             return ({ty})((x ^ s) - s);\n}}\n"
        )
    });
    name
}

/// Integer `min` or `max` (`is_max`).
///
/// Where the C may use inline PTX (CUDA C; OpenCL C on NVIDIA) the helper is a PTX compare and
/// select that NVVM cannot turn back into `min`/`max` instructions: ptxas 13.0 (the JIT of
/// driver 580) fuses two `min.s32`/`max.s32` into one three-input `VIMNMX3` and drops a negation
/// folded into it, so NVRTC's and NVIDIA's OpenCL code for `a.min(-a).min(b)` gave `min(a, b)`
/// on the H200 (difftest/FINDINGS.md F9; the PTX generator emits the same `setp` + `selp`).
pub(crate) fn min_max_int(ctx: &mut Ctx, s: ScalarType, is_max: bool) -> String {
    let op = if is_max { "max" } else { "min" };
    let name = format!("spoc_{op}_{}", sfx(s));
    let ptx = inline_ptx(ctx);
    ctx.helper(&name, |d| {
        let ty = t(d, s);
        let cmp = if is_max { ">" } else { "<" };
        let q = d.device_fn();
        if !ptx {
            return format!(
                "{q} inline {ty} {name}({ty} a, {ty} b) {{\n    return a {cmp} b ? a : b;\n}}\n"
            );
        }
        let (ptx_t, bits, reg) = ptx_int(s);
        let setp = if is_max { "gt" } else { "lt" };
        format!(
            "{q} inline {ty} {name}({ty} a, {ty} b) {{\n    {ty} r;\n    asm(\"{{ .reg .pred p; setp.{setp}.{ptx_t} p, %1, %2; selp.{bits} %0, %1, %2, p; }}\" : \"={reg}\"(r) : \"{reg}\"(a), \"{reg}\"(b));\n    return r;\n}}\n"
        )
    });
    name
}

/// Float to integer as Rust's `as`: truncation toward zero, saturating at the integer type's
/// bounds, NaN to 0 (a plain C cast is undefined out of range).
pub(crate) fn float_to_int(ctx: &mut Ctx, from: ScalarType, to: ScalarType) -> String {
    let name = format!("spoc_{}_to_{}", sfx(from), sfx(to));
    ctx.helper(&name, |d| {
        let (ft, it) = (t(d, from), t(d, to));
        let f = if from == ScalarType::F32 { "f" } else { "" };
        // Bounds are powers of two, exact in both float types.
        let (lo_test, lo_val, hi) = match to {
            ScalarType::I32 => (
                format!("x <= -2147483648.0{f}"),
                signed_min(d, to).to_string(),
                ("2147483648.0", "2147483647".to_string()),
            ),
            ScalarType::I64 => (
                format!("x <= -9223372036854775808.0{f}"),
                signed_min(d, to).to_string(),
                (
                    "9223372036854775808.0",
                    if d.is_opencl() {
                        "9223372036854775807L".into()
                    } else {
                        "9223372036854775807LL".into()
                    },
                ),
            ),
            ScalarType::U32 => (
                format!("x <= -1.0{f}"),
                "0u".into(),
                ("4294967296.0", "4294967295u".to_string()),
            ),
            _ => (
                format!("x <= -1.0{f}"),
                if d.is_opencl() { "0ul" } else { "0ull" }.into(),
                (
                    "18446744073709551616.0",
                    if d.is_opencl() {
                        "18446744073709551615ul".into()
                    } else {
                        "18446744073709551615ull".into()
                    },
                ),
            ),
        };
        format!(
            "{q} inline {it} {name}({ft} x) {{\n    \
             /* Rust `as`: NaN -> 0, saturate out of range, else truncate. */\n    \
             if (x != x) return 0;\n    \
             if ({lo_test}) return {lo_val};\n    \
             if (x >= {}{f}) return {};\n    \
             return ({it})x;\n}}\n",
            hi.0,
            hi.1,
            q = d.device_fn()
        )
    });
    name
}

/// `bf16` bits to `f32` (exact: the bits are the upper half of the `f32`'s).
pub(crate) fn bf16_to_f32(ctx: &mut Ctx) -> String {
    let name = "spoc_bf16_to_f32".to_string();
    ctx.helper(&name, |d| {
        let (u32t, u16t) = (t(d, ScalarType::U32), t(d, ScalarType::BF16));
        format!(
            "{q} inline float {name}({u16t} h) {{\n    \
             return {fb}(({u32t})h << 16);\n}}\n",
            q = d.device_fn(),
            fb = d.f32_from_bits()
        )
    });
    name
}

/// `f32` to `bf16` bits, rounding to nearest, ties to even, on the bits: adding `0x7fff` plus
/// the lowest kept bit carries into the kept half exactly when the dropped half is above the
/// halfway point, or at it with an odd kept half; a finite value that rounds past the largest
/// `bf16` carries into the exponent and gives infinity. A NaN stays a NaN (quiet, with its top
/// payload bits), as the `half` crate's `bf16::from_f32` does.
pub(crate) fn f32_to_bf16(ctx: &mut Ctx) -> String {
    let name = "spoc_f32_to_bf16".to_string();
    ctx.helper(&name, |d| {
        let (u32t, u16t) = (t(d, ScalarType::U32), t(d, ScalarType::BF16));
        format!(
            "{q} inline {u16t} {name}(float f) {{\n    \
             {u32t} x = {bits}(f);\n    \
             if ((x & 0x7fffffffu) > 0x7f800000u) return ({u16t})((x >> 16) | 0x40u);\n    \
             x += 0x7fffu + ((x >> 16) & 1u);\n    \
             return ({u16t})(x >> 16);\n}}\n",
            q = d.device_fn(),
            bits = d.f32_bits()
        )
    });
    name
}

/// `f16` bits to `f32` (exact).
pub(crate) fn f16_to_f32(ctx: &mut Ctx) -> String {
    let name = "spoc_f16_to_f32".to_string();
    ctx.helper(&name, |d| {
        let (u32t, u16t) = (t(d, ScalarType::U32), t(d, ScalarType::F16));
        format!(
            "{q} inline float {name}({u16t} h) {{\n    \
             {u32t} sign = (({u32t})h & 0x8000u) << 16;\n    \
             {u32t} ex = (({u32t})h >> 10) & 0x1fu;\n    \
             {u32t} man = ({u32t})h & 0x3ffu;\n    \
             {u32t} bits;\n    \
             if (ex == 0x1fu) {{\n        \
             bits = sign | 0x7f800000u | (man << 13); /* infinity or NaN */\n    \
             }} else if (ex != 0u) {{\n        \
             bits = sign | ((ex + 112u) << 23) | (man << 13); /* normal */\n    \
             }} else if (man == 0u) {{\n        \
             bits = sign; /* zero */\n    \
             }} else {{\n        \
             /* subnormal: normalise the mantissa */\n        \
             {u32t} e = 113u;\n        \
             while ((man & 0x400u) == 0u) {{\n            \
             man <<= 1;\n            \
             e -= 1u;\n        \
             }}\n        \
             bits = sign | (e << 23) | ((man & 0x3ffu) << 13);\n    \
             }}\n    \
             return {fb}(bits);\n}}\n",
            q = d.device_fn(),
            fb = d.f32_from_bits()
        )
    });
    name
}

/// `f32` or `f64` to `f16` bits, rounding to nearest even (one rounding, as Rust's `as f16`).
pub(crate) fn float_to_f16(ctx: &mut Ctx, from: ScalarType) -> String {
    let name = format!("spoc_{}_to_f16", sfx(from));
    ctx.helper(&name, |d| {
        let u16t = t(d, ScalarType::F16);
        let ft = t(d, from);
        // (unsigned bits type, its literal suffix, bits expression, exponent bits, mantissa
        //  bits, exponent bias)
        let (ut, us, bits, man_bits, exp_mask, bias) = if from == ScalarType::F32 {
            (
                t(d, ScalarType::U32),
                "u",
                format!("{}(f)", d.f32_bits()),
                23u32,
                "0xffu",
                127i32,
            )
        } else {
            (
                t(d, ScalarType::U64),
                if d.is_opencl() { "ul" } else { "ull" },
                d.f64_bits("f"),
                52u32,
                "0x7ffu",
                1023i32,
            )
        };
        let drop = man_bits - 10; // mantissa bits dropped for a normal f16
        format!(
            "{q} inline {u16t} {name}({ft} f) {{\n    \
             {ut} x = {bits};\n    \
             unsigned int sign = (unsigned int)(x >> {sign_shift}) & 0x8000u;\n    \
             int ex = (int)((x >> {man_bits}) & {exp_mask});\n    \
             {ut} man = x & ((({ut})1{us} << {man_bits}) - 1{us});\n    \
             if (ex == {exp_all}) {{\n        \
             /* infinity, or NaN kept quiet with its top payload bits */\n        \
             return ({u16t})(sign | 0x7c00u | (man != 0{us} ? 0x200u | (unsigned int)(man >> {drop}) : 0u));\n    \
             }}\n    \
             int e = ex - {rebias}; /* f16 biased exponent */\n    \
             if (e >= 31) return ({u16t})(sign | 0x7c00u); /* overflow: infinity */\n    \
             {ut} m;\n    \
             {ut} rem;\n    \
             {ut} halfway;\n    \
             if (e <= 0) {{\n        \
             /* f16 subnormal (or zero) */\n        \
             if (e < -10) return ({u16t})sign;\n        \
             man |= ({ut})1{us} << {man_bits};\n        \
             unsigned int shift = (unsigned int)({sub_shift} - e);\n        \
             m = man >> shift;\n        \
             rem = man & ((({ut})1{us} << shift) - 1{us});\n        \
             halfway = ({ut})1{us} << (shift - 1u);\n        \
             e = 0;\n    \
             }} else {{\n        \
             m = man >> {drop};\n        \
             rem = man & ((({ut})1{us} << {drop}) - 1{us});\n        \
             halfway = ({ut})1{us} << {drop_m1};\n    \
             }}\n    \
             if (rem > halfway || (rem == halfway && (m & 1{us}) != 0{us})) {{\n        \
             m += 1{us}; /* a carry into the exponent is the right result */\n    \
             }}\n    \
             return ({u16t})(sign | (((unsigned int)e << 10) + (unsigned int)m));\n}}\n",
            q = d.device_fn(),
            sign_shift = man_bits + (if from == ScalarType::F32 { 8 } else { 11 }) - 15,
            exp_all = if from == ScalarType::F32 { 255 } else { 2047 },
            rebias = bias - 15,
            sub_shift = drop + 1,
            drop_m1 = drop - 1,
        )
    });
    name
}

/// `signum` as Rust defines it: NaN for NaN, else ±1 with the sign of `x` (zeros included).
pub(crate) fn signum(ctx: &mut Ctx, s: ScalarType) -> String {
    let name = format!("spoc_signum_{}", sfx(s));
    ctx.helper(&name, |d| {
        let ty = t(d, s);
        let (one, cs) = match (s, d.is_opencl()) {
            (ScalarType::F32, true) => ("1.0f", "copysign"),
            (ScalarType::F32, false) => ("1.0f", "copysignf"),
            (_, _) => ("1.0", "copysign"),
        };
        format!(
            "{q} inline {ty} {name}({ty} x) {{\n    return x != x ? x : {cs}({one}, x);\n}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// `trunc`, `floor`, `ceil` or `round` (`f`, the OpenCL C name) that passes a NaN through
/// before rounding. PoCL's rounding functions convert to an integer on the way, and the
/// conversion of a NaN is poison in LLVM: the computed value is right at run time, but a NaN
/// the compiler can see (`f32::NAN.trunc()`) folded to poison and the store of it vanished
/// (difftest finding F8). OpenCL C only; the guard is one compare and select.
pub(crate) fn rounding_nan_safe(ctx: &mut Ctx, s: ScalarType, f: &str) -> String {
    let name = format!("spoc_{f}_{}", sfx(s));
    ctx.helper(&name, |d| {
        let ty = t(d, s);
        format!(
            "{q} inline {ty} {name}({ty} x) {{\n    return x != x ? x : {f}(x);\n}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// `powi` by repeated squaring, the algorithm of LLVM's `__powisf2` that Rust's `powi` uses.
pub(crate) fn powi(ctx: &mut Ctx, s: ScalarType) -> String {
    let name = format!("spoc_powi_{}", sfx(s));
    ctx.helper(&name, |d| {
        let ty = t(d, s);
        let one = if s == ScalarType::F32 { "1.0f" } else { "1.0" };
        format!(
            "{q} inline {ty} {name}({ty} a, int b) {{\n    \
             int recip = b < 0;\n    \
             {ty} r = {one};\n    \
             while (1) {{\n        \
             if (b & 1) r *= a;\n        \
             b /= 2;\n        \
             if (b == 0) break;\n        \
             a *= a;\n    \
             }}\n    \
             return recip ? {one} / r : r;\n}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// A warp shuffle with docs/LANGUAGE.md's semantics where the dialect's own function leaves a
/// source outside the warp undefined or reads another lane: `shuffle_up` / `shuffle_down` /
/// `shuffle_xor` whose source lane is outside the (sub)group return the lane's own value, and
/// `shuffle` reads lane `src % warp_size()`. CUDA's `shfl.sync` takes the operand modulo 32
/// (PTX ISA §9.7.8.6), so a delta or mask of 32 or more selects the own value explicitly;
/// OpenCL's `sub_group_shuffle*` (cl_khr_subgroup_shuffle, `…_relative`) leave out-of-range
/// sources undefined, so every kind checks. The shuffle itself runs unconditionally (all lanes
/// must reach it); only the result is selected. `None` when the dialect's call already has
/// these semantics (HIP, CUDA's `shuffle`).
pub(crate) fn shuffle(ctx: &mut Ctx, kind: ShuffleKind, s: ScalarType) -> Option<String> {
    let d = ctx.d;
    let (base, keep) = match (d, kind) {
        (Dialect::Hip, _) | (Dialect::Cuda, ShuffleKind::Index) => return None,
        (Dialect::Cuda, ShuffleKind::Up) => ("__shfl_up_sync(0xffffffffu, v, a)", "a < 32u"),
        (Dialect::Cuda, ShuffleKind::Down) => ("__shfl_down_sync(0xffffffffu, v, a)", "a < 32u"),
        (Dialect::Cuda, ShuffleKind::Xor) => ("__shfl_xor_sync(0xffffffffu, v, (int)a)", "a < 32u"),
        (Dialect::OpenCl, ShuffleKind::Index) => {
            ("sub_group_shuffle(v, a % get_max_sub_group_size())", "true")
        }
        (Dialect::OpenCl, ShuffleKind::Up) => (
            "sub_group_shuffle_up(v, a)",
            "a <= get_sub_group_local_id()",
        ),
        (Dialect::OpenCl, ShuffleKind::Down) => (
            "sub_group_shuffle_down(v, a)",
            "a < get_sub_group_size() - get_sub_group_local_id()",
        ),
        (Dialect::OpenCl, ShuffleKind::Xor) => (
            "sub_group_shuffle_xor(v, a)",
            "(get_sub_group_local_id() ^ a) < get_sub_group_size()",
        ),
    };
    let k = match kind {
        ShuffleKind::Index => "shuffle",
        ShuffleKind::Up => "shuffle_up",
        ShuffleKind::Down => "shuffle_down",
        ShuffleKind::Xor => "shuffle_xor",
    };
    let name = format!("spoc_{k}_{}", sfx(s));
    ctx.helper(&name, |d| {
        let ty = t(d, s);
        let u = t(d, ScalarType::U32);
        let ret = if keep == "true" {
            "    return r;\n".to_string()
        } else {
            format!("    return {keep} ? r : v;\n")
        };
        format!(
            "{q} inline {ty} {name}({ty} v, {u} a) {{\n    {ty} r = {base};\n{ret}}}\n",
            q = d.device_fn()
        )
    });
    Some(name)
}

/// The linear thread index in the block modulo the warp size (CUDA/HIP).
pub(crate) fn lane_id(ctx: &mut Ctx) -> String {
    let name = "spoc_lane_id".to_string();
    ctx.helper(&name, |d| {
        format!(
            "{q} inline unsigned int {name}(void) {{\n    \
             unsigned int linear = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;\n    \
             return linear & ((unsigned int)warpSize - 1u);\n}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// `D = A × B + C` of one 16×8×16 tile through inline PTX (CUDA C, sm_80+): the lanes of the
/// `u32x4`, `u32x2` and `f32x4` vectors are the `mma.sync` fragment registers.
pub(crate) fn mma_m16n8k16(ctx: &mut Ctx, h: HalfKind) -> String {
    let name = format!("spoc_mma_m16n8k16_{}", h.name());
    let u4 = ctx.ty(
        &Type::Vector {
            elem: ScalarType::U32,
            lanes: 4,
        },
        Storage::Value,
    );
    let u2 = ctx.ty(
        &Type::Vector {
            elem: ScalarType::U32,
            lanes: 2,
        },
        Storage::Value,
    );
    let f4 = ctx.ty(
        &Type::Vector {
            elem: ScalarType::F32,
            lanes: 4,
        },
        Storage::Value,
    );
    ctx.helper(&name, |d| {
        let t = h.name();
        format!(
            "{q} inline {f4} {name}({u4} a, {u2} b, {f4} c) {{\n    \
             {f4} d;\n    \
             asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 \"\n        \
             \"{{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, {{%10, %11, %12, %13}};\"\n        \
             : \"=f\"(d.x), \"=f\"(d.y), \"=f\"(d.z), \"=f\"(d.w)\n        \
             : \"r\"(a.x), \"r\"(a.y), \"r\"(a.z), \"r\"(a.w), \"r\"(b.x), \"r\"(b.y),\n          \
             \"f\"(c.x), \"f\"(c.y), \"f\"(c.z), \"f\"(c.w));\n    \
             return d;\n}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// Float atomic add by a compare-and-swap loop on the bits; returns the previous value.
pub(crate) fn atomic_add_float_cas(ctx: &mut Ctx, s: ScalarType, space: MemSpace) -> String {
    let cl = ctx.d.is_opencl();
    let name = if cl {
        let sp = if space == MemSpace::Shared {
            "local"
        } else {
            "global"
        };
        format!("spoc_atomic_add_{}_{sp}", sfx(s))
    } else {
        format!("spoc_atomic_add_{}", sfx(s))
    };
    ctx.helper(&name, |d| {
        let ty = t(d, s);
        let wide = s == ScalarType::F64;
        let ut = t(
            d,
            if wide {
                ScalarType::U64
            } else {
                ScalarType::U32
            },
        );
        let sum_bits = if wide {
            d.f64_bits(&format!("{} + v", d.f64_from_bits("old")))
        } else {
            format!("{}({}(old) + v)", d.f32_bits(), d.f32_from_bits())
        };
        let prev = if wide {
            d.f64_from_bits("old")
        } else {
            format!("{}(old)", d.f32_from_bits())
        };
        let (ptr, uptr, cas) = if cl {
            let sp = if space == MemSpace::Shared {
                "__local"
            } else {
                "__global"
            };
            (
                format!("volatile {sp} {ty}*"),
                format!("volatile {sp} {ut}*"),
                if wide {
                    "atom_cmpxchg"
                } else {
                    "atomic_cmpxchg"
                },
            )
        } else {
            (format!("{ty}*"), format!("{ut}*"), "atomicCAS")
        };
        format!(
            "{q} inline {ty} {name}({ptr} p, {ty} v) {{\n    \
             {uptr} u = ({uptr})p;\n    \
             {ut} old = *u;\n    \
             while (1) {{\n        \
             {ut} seen = {cas}(u, old, {sum_bits});\n        \
             if (seen == old) return {prev};\n        \
             old = seen;\n    \
             }}\n}}\n",
            q = d.device_fn()
        )
    });
    name
}

/// Signed 64-bit atomic min or max by a compare-and-swap loop (CUDA/HIP, whose signed 64-bit
/// overloads are not available everywhere); returns the previous value.
pub(crate) fn atomic_minmax_i64_cas(ctx: &mut Ctx, is_max: bool) -> String {
    let op = if is_max { "max" } else { "min" };
    let name = format!("spoc_atomic_{op}_i64");
    ctx.helper(&name, |d| {
        let cmp = if is_max { ">" } else { "<" };
        format!(
            "{q} inline long long {name}(long long* p, long long v) {{\n    \
             unsigned long long* u = (unsigned long long*)p;\n    \
             unsigned long long old = *u;\n    \
             while (v {cmp} (long long)old) {{\n        \
             unsigned long long seen = atomicCAS(u, old, (unsigned long long)v);\n        \
             if (seen == old) break;\n        \
             old = seen;\n    \
             }}\n    \
             return (long long)old;\n}}\n",
            q = d.device_fn()
        )
    });
    name
}
