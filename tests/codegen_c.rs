//! The C-family generators on kernels written with `#[kernel]`: every kernel here is lowered by
//! the macro, generated as CUDA C, HIP C and OpenCL C, and compiled by the real toolchains
//! (clang, hipcc; skipped with a message when missing, a failure with
//! `SPOC_REQUIRE_TOOLCHAINS=1`).

/// Kernels and helpers shared with the other generator tests.
mod codegen_kernels;
/// The root kernel corpus (only some of its kernels are used here).
#[allow(dead_code)]
mod corpus;

#[path = "../spoc-codegen/tests/support/toolchains.rs"]
mod toolchains;

use codegen_kernels::{
    block_reduce, int_semantics_c as int_semantics, uses_helpers_c as uses_helpers,
};
use corpus::{matmul, saxpy};
use spoc::prelude::*;
use spoc_codegen::{Capabilities, Target};

const TARGETS: [Target; 3] = [Target::CudaC, Target::Hip, Target::OpenCl];

#[kernel]
fn floats(x: &[f32], d: &[f64], out: &mut [f32], outd: &mut [f64], ints: &mut [i32]) {
    let i = global_id_x();
    if i >= out.len() {
        return;
    }
    let v = x[i];
    out[i] = v.sqrt() + v.mul_add(2.0, 1.0) + v.max(0.5).min(3.0) + v.abs().floor() + v.exp();
    outd[i] = d[i].sqrt() * d[i].ln() + (v as f64).powi(3) + d[i].round();
    ints[i] = (v * 1.0e10) as i32 + d[i] as i32 + (v as u32) as i32;
}

#[kernel]
fn corners(flag: bool, n: usize, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i >= y.len() {
        return;
    }
    let v = if flag && x[i] > 0.5 {
        let t = x[i] * 2.0;
        t + 1.0
    } else if x[i] < -0.5 {
        -x[i]
    } else {
        0.25
    };
    let ok = i + 1 < x.len() && {
        let w = x[i + 1];
        w > 0.0
    };
    let mut k = 0usize;
    while {
        let m = k * 2;
        m < n
    } {
        k += 1;
    }
    let kind = if i % 4 == 0 {
        1.0
    } else if i % 4 < 3 {
        2.0
    } else {
        3.0
    };
    // Negations of negations: C must not see `--` (its decrement operator).
    let twice = -(-x[i]) + -(-6.0f32);
    y[i] = if ok { v + kind } else { v - k as f32 } + twice;
}

type Ir = (&'static str, &'static spoc::ir::Kernel);

fn kernels() -> Vec<Ir> {
    codegen_kernels::named_irs![
        saxpy,
        int_semantics,
        uses_helpers,
        floats,
        matmul,
        corners,
        block_reduce
    ]
}

fn generate(t: Target, k: &spoc::ir::Kernel) -> String {
    let mut caps = Capabilities::for_target(t);
    caps.fp64 = true;
    codegen_kernels::source_text(t, k, caps)
}

#[test]
fn macro_kernels_compile_with_real_toolchains() {
    let mut sources = Vec::new();
    for (name, k) in kernels() {
        for t in TARGETS {
            sources.push((name.to_string(), t, generate(t, k)));
        }
    }
    toolchains::check_all("macro_kernels", &sources);
}

#[test]
fn saxpy_reads_like_the_source() {
    let k = saxpy.ir().unwrap();
    let cuda = generate(Target::CudaC, k);
    assert!(
        cuda.contains("unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;"),
        "{cuda}"
    );
    assert!(cuda.contains("if (i < y_len) {"), "{cuda}");
    assert!(cuda.contains("y[i] = a * x[i] + y[i];"), "{cuda}");
    let cl = generate(Target::OpenCl, k);
    assert!(
        cl.contains(
            "__kernel void saxpy(float a, __global const float* x, uint x_len, \
             __global float* y, uint y_len) {"
        ),
        "{cl}"
    );
    assert!(cl.contains("uint i = (uint)get_global_id(0);"), "{cl}");
}

#[test]
fn a_negated_negation_is_not_a_decrement() {
    let k = corners.ir().unwrap();
    for t in TARGETS {
        let src = generate(t, k);
        let code = src
            .lines()
            .filter(|l| !l.trim_start().starts_with("/*") && !l.trim_start().starts_with("//"));
        for line in code {
            assert!(!line.contains("--"), "{t:?}: `--` in `{line}`:\n{src}");
        }
    }
}
