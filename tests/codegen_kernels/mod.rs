//! Kernels and `#[device]` helpers shared by the root generator tests (`codegen_c.rs`,
//! `codegen_naga.rs`, `codegen_ptx.rs`) and `macro_smoke.rs`, written once, and the variants of
//! one kernel that each of them runs, side by side. The kernels of the root corpus
//! (`tests/corpus`) are reached through that module instead.

use spoc::prelude::*;

/// `vec![(name, ir), …]`: the IR of each `#[kernel]` given, labelled by the kernel's name.
#[allow(unused_macros)] // macro_smoke.rs lists no kernels
macro_rules! named_irs {
    ($($k:ident),* $(,)?) => {
        vec![$({
            let ir: &'static spoc::ir::Kernel = $k.ir().unwrap();
            (ir.name.as_str(), ir)
        }),*]
    };
}
#[allow(unused_imports)] // macro_smoke.rs lists no kernels
pub(crate) use named_irs;

/// The source text `target` generates for `k` with capabilities `caps` (no block size, no SoA
/// parameters, unchecked), after checking that its entry point is the kernel's name.
#[allow(dead_code)] // codegen_naga.rs and macro_smoke.rs generate no text this way
pub fn source_text(
    target: spoc_codegen::Target,
    k: &spoc::ir::Kernel,
    caps: spoc_codegen::Capabilities,
) -> String {
    let opts = spoc_codegen::Options {
        block: None,
        soa_params: &[],
        caps,
        checked: false,
    };
    let src = spoc_codegen::generate_source_with(target, k, &opts)
        .unwrap_or_else(|e| panic!("{target:?} {}: {e}", k.name))
        .expect("a source target");
    assert_eq!(src.entry, k.name);
    src.text().expect("text").to_string()
}

/// `min(v, 1)`, and 0 for negative `v` (an early `return` in a helper).
#[device]
pub fn clamp01(v: f32) -> f32 {
    if v < 0.0 {
        return 0.0;
    }
    v.min(1.0)
}

/// `x[0] + … + x[n - 1]` (a loop over a buffer in a helper).
#[device]
pub fn sum_first(x: &[f32], n: usize) -> f32 {
    let mut s = 0.0f32;
    for j in 0..n {
        s += x[j];
    }
    s
}

/// `out[i] = v` if `i` is in bounds (a helper writing through `&mut [f32]`).
#[device]
pub fn put(out: &mut [f32], i: usize, v: f32) {
    if i < out.len() {
        out[i] = v;
    }
}

/// A barrier after a conditional read; `out[i % out.len()] = x[i]` (0 past the end).
#[kernel]
pub fn block_reduce(x: &[f32], out: &mut [f32]) {
    let i = global_id_x();
    let mut s = 0.0f32;
    if i < x.len() {
        s = x[i];
    }
    sync_threads();
    out[i % out.len()] = s;
}

// ---------------------------------------------------------------------------------------------
// The variants each generator test runs of the integer and helper kernels, side by side.

/// The `int_semantics` of the C-family generators (`codegen_c.rs`): i64 `/ -1`, shifts past the width, wrapping multiplication.
#[kernel]
pub fn int_semantics_c(a: &[i32], b: &[i64], out: &mut [i32], wide: &mut [u64]) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let x = a[i];
    let y = a[i + 1] | 1;
    let mut acc = x * 65_537 + (x << 31) - -x + x / y - x % y + (y >> 3);
    let mut k = 0;
    while k < 3 {
        k += 1;
        if k == 2 {
            continue;
        }
        acc ^= k;
    }
    for j in (0..10).rev().step_by(4) {
        acc += j;
    }
    out[i] = if acc > 0 { acc / 7 } else { acc % 7 };
    let z = b[i];
    wide[i] = (z / -1) as u64 ^ ((z as u64) << (i % 70)) ^ (z.wrapping_mul(3) as u64);
}

/// The `int_semantics` of the naga generators (`codegen_naga.rs`): a `break` in the `while`, u32 shifts.
#[kernel]
pub fn int_semantics_naga(a: &[i32], b: &[u32], out: &mut [i32], outu: &mut [u32]) {
    let i = global_id_x();
    if i + 1 >= a.len() {
        return;
    }
    let x = a[i];
    let y = a[i + 1] | 1;
    let mut acc = x * 65_537 + (x << 31) - -x + x / y - x % y + (y >> 3);
    let mut k = 0;
    while k < 5 {
        k += 1;
        if k == 2 {
            continue;
        }
        if k == 4 {
            break;
        }
        acc ^= k;
    }
    for j in (0..10).rev().step_by(4) {
        acc += j;
    }
    out[i] = if acc > 0 { acc / 7 } else { acc % 7 };
    outu[i] = b[i].wrapping_mul(3) >> (i % 40) as u32;
}

/// The `int_semantics` of `macro_smoke.rs`, checked against Rust on the host.
#[kernel]
pub fn int_semantics_smoke(a: &[i32], out: &mut [i32]) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let x = a[i];
    let mut acc = x * 65_537 + (x << 31) - -x;
    let mut k = 0;
    while k < 3 {
        k += 1;
        if k == 2 {
            continue;
        }
        acc ^= k;
    }
    for j in (0..10).rev().step_by(4) {
        acc += j;
    }
    out[i] = if acc > 0 { acc / 7 } else { acc % 7 };
}

/// The `uses_helpers` of `codegen_c.rs`: the result stored through a helper taking `&mut [f32]`.
#[kernel]
pub fn uses_helpers_c(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        let c: f32 = clamp01(x[i]);
        let s: f32 = sum_first(y, 2usize);
        put(y, i, c + s * 0.5);
    }
}

/// The `uses_helpers` of `codegen_naga.rs`.
#[kernel]
pub fn uses_helpers_naga(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        let c: f32 = clamp01(x[i]);
        let s: f32 = sum_first(x, 2usize);
        y[i] = c + s;
    }
}

/// The `uses_helpers` of `macro_smoke.rs`, run natively.
#[kernel]
pub fn uses_helpers_smoke(x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        let c: f32 = clamp01(x[i]);
        let s: f32 = sum_first(y, 2usize);
        y[i] = c + s * 0.0;
    }
}
