//! `f16` and `bf16` in kernels, on every device, bit for bit against the `half` crate on the
//! host: every one of the 65 536 bit patterns of each type widened to `f32`; edge `f32` values
//! (subnormals, ±0, ±infinity, NaN, halfway cases, the largest finite values and the first that
//! overflow) and pseudo-random ones narrowed; and `+ - * /`, `-`, `min`, `max`, comparisons and
//! `sqrt` through `f32` on pairs of edge and random 16-bit values, each rounded once (the
//! semantics of `docs/LANGUAGE.md`, "16-bit floats"). NaN compares as NaN, whatever its payload
//! (GPUs do not keep payloads); `min`/`max` of two zeros may be either zero, as for `f32`.
//!
//! A device may refuse a type only with `FeatureNotSupported` (Vulkan has no `bf16`: naga has
//! no 16-bit integer type), and the skip is printed.

mod common;

use spoc::prelude::*;
use spoc_testkit::devices::{check_each_device, label, DeviceCheck};

#[kernel]
fn widen(h: &[f16], b: &[bf16], hx: &mut [f32], bx: &mut [f32]) {
    let i = global_id_x();
    if i < h.len() {
        hx[i] = h[i].to_f32();
        bx[i] = b[i].to_f32();
    }
}

#[kernel]
fn narrow_f16(x: &[f32], h: &mut [f16]) {
    let i = global_id_x();
    if i < x.len() {
        h[i] = f16::from_f32(x[i]);
    }
}

#[kernel]
fn narrow_bf16(x: &[f32], b: &mut [bf16]) {
    let i = global_id_x();
    if i < x.len() {
        b[i] = bf16::from_f32(x[i]);
    }
}

#[kernel]
fn widen_f16_only(h: &[f16], hx: &mut [f32]) {
    let i = global_id_x();
    if i < h.len() {
        hx[i] = h[i].to_f32();
    }
}

/// Nine results a pair, and the comparisons as bits.
#[kernel]
fn ops_f16(a: &[f16], b: &[f16], out: &mut [f16], cmp: &mut [u32]) {
    let i = global_id_x();
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        out[9 * i] = x + y;
        out[9 * i + 1] = x - y;
        out[9 * i + 2] = x * y;
        out[9 * i + 3] = x / y;
        out[9 * i + 4] = -x;
        out[9 * i + 5] = x.min(y);
        out[9 * i + 6] = x.max(y);
        out[9 * i + 7] = f16::from_f32(x.to_f32().sqrt());
        out[9 * i + 8] = x % y;
        cmp[i] = (x < y) as u32
            | ((x == y) as u32) << 1
            | ((x <= y) as u32) << 2
            | ((x != y) as u32) << 3
            | ((x > y) as u32) << 4
            | ((x >= y) as u32) << 5;
    }
}

#[kernel]
fn ops_bf16(a: &[bf16], b: &[bf16], out: &mut [bf16], cmp: &mut [u32]) {
    let i = global_id_x();
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        out[9 * i] = x + y;
        out[9 * i + 1] = x - y;
        out[9 * i + 2] = x * y;
        out[9 * i + 3] = x / y;
        out[9 * i + 4] = -x;
        out[9 * i + 5] = x.min(y);
        out[9 * i + 6] = x.max(y);
        out[9 * i + 7] = bf16::from_f32(x.to_f32().sqrt());
        out[9 * i + 8] = x % y;
        cmp[i] = (x < y) as u32
            | ((x == y) as u32) << 1
            | ((x <= y) as u32) << 2
            | ((x != y) as u32) << 3
            | ((x > y) as u32) << 4
            | ((x >= y) as u32) << 5;
    }
}

/// Locals, compound assignment and a shared array of `f16`: each block sums its 64 elements,
/// scaled, in a fixed order (thread 0 after a barrier). The scale comes as an `f32` (scalar
/// `f16` parameters are not supported yet).
#[kernel]
fn block_sum_f16(scale: f32, x: &[f16], out: &mut [f16]) {
    let scale = f16::from_f32(scale);
    let s = shared_array::<f16, 64>();
    let t = thread_idx_x();
    let i = block_idx_x() * 64 + t;
    let mut v = f16::from_f32(0.0);
    if i < x.len() {
        v = x[i] * scale;
    }
    s[t] = v;
    sync_threads();
    if t == 0 {
        let mut acc = f16::from_f32(0.0);
        for k in 0..64 {
            acc += s[k];
        }
        // A 16-bit value chosen by an `if` expression (PTX: `selp.b16`).
        let big = if acc > f16::from_f32(100.0) {
            acc
        } else {
            -acc
        };
        out[block_idx_x()] = big;
    }
}

/// A helper on 16-bit values: its body is also the host's Rust (the `half` crate's operators).
#[device]
fn lerp_h(a: bf16, b: bf16, t: bf16) -> bf16 {
    a + (b - a) * t
}

#[kernel]
fn lerp_bf16(a: &[bf16], b: &[bf16], out: &mut [bf16]) {
    let i = global_id_x();
    if i < a.len() {
        out[i] = lerp_h(a[i], b[i], bf16::from_f32(0.25));
    }
}

fn f16v(v: f32) -> f16 {
    f16::from_f32(v)
}

/// Edge `f32` inputs of the narrowing conversions.
fn narrow_inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001), // signalling NaN
        f32::from_bits(1),
        f32::MIN_POSITIVE,
        f32::MAX,
        -f32::MAX,
        1.0,
        1.0 / 3.0,
        65504.0,  // f16::MAX
        65519.99, // rounds to f16::MAX
        65520.0,  // halfway to the next binade: overflows to infinity
        -65520.0,
        6.1035156e-5, // smallest normal f16
        5.9604645e-8, // smallest subnormal f16
        2.9802322e-8, // half of it: ties to even, 0
        2.9802326e-8, // just above half: the smallest subnormal
        8.940697e-8,  // 1.5 x smallest subnormal: ties to even, 2 x
    ];
    // f16 halfway cases: 1 + k/2048 for odd k is halfway between two f16 (ties to even).
    for k in [1u32, 3, 5, 2047] {
        v.push(1.0 + k as f32 / 2048.0);
        v.push(-(1.0 + k as f32 / 2048.0));
    }
    // bf16 halfway cases, just below and above: the low 16 bits 0x8000, 0x7fff, 0x8001.
    for hi in [0x3f80u32, 0x3f81, 0x7f7f, 0x0001, 0x0080, 0xff7f] {
        for lo in [0x8000u32, 0x7fff, 0x8001, 0xffff, 0] {
            v.push(f32::from_bits(hi << 16 | lo));
        }
    }
    let r = common::pseudo_random(0x16b1, 4000);
    v.extend(r.iter().map(|&w| f32::from_bits(w as u32)));
    // values in the f16 range, with random low bits
    v.extend(r.iter().map(|&w| {
        let e = (w >> 40) as u32 % 40 + 127 - 26;
        f32::from_bits(((w >> 63) as u32) << 31 | e << 23 | (w as u32 & 0x7f_ffff))
    }));
    v
}

fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Compares 16-bit results given as (bits, is NaN), reporting the first few that differ.
fn check16(
    check: &mut DeviceCheck,
    what: &str,
    got: &[u16],
    want: &[u16],
    nan: impl Fn(u16) -> bool,
    input: impl Fn(usize) -> String,
) {
    let mut shown = 0;
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        if g != w && !(nan(g) && nan(w)) {
            if shown < 6 {
                check.wrong(format!(
                    "{what} of {}: got {g:#06x}, want {w:#06x}",
                    input(k)
                ));
            }
            shown += 1;
        }
    }
    if shown > 6 {
        check.wrong(format!("{what}: {shown} results differ in all"));
    }
}

fn f16_nan(b: u16) -> bool {
    f16::from_bits(b).is_nan()
}

fn bf16_nan(b: u16) -> bool {
    bf16::from_bits(b).is_nan()
}

/// Whether `dev` runs `bf16` (Vulkan refuses it); `Err` for another failure.
fn skip_bf16(dev: &Device, r: spoc::Result<()>) -> spoc::Result<bool> {
    match r {
        Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
            println!("{}: bf16 skipped: {feature}", label(dev));
            Ok(true)
        }
        r => r.map(|()| false),
    }
}

#[test]
fn widening_is_exact_for_every_bit_pattern() {
    let bits: Vec<u16> = (0..=u16::MAX).collect();
    let h: Vec<f16> = bits.iter().map(|&b| f16::from_bits(b)).collect();
    let b: Vec<bf16> = bits.iter().map(|&b| bf16::from_bits(b)).collect();
    let want_h: Vec<f32> = h.iter().map(|x| x.to_f32()).collect();
    let want_b: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
    let n = bits.len() as u32;
    check_each_device(common::devices(), 4, |dev, check| {
        let hb = dev.upload(&h)?;
        let bb = dev.upload(&b)?;
        let mut hx = dev.alloc::<f32>(h.len())?;
        let mut bx = dev.alloc::<f32>(h.len())?;
        let r = widen.launch(
            dev,
            dims1d(n / 256),
            dims1d(256),
            (&hb, &bb, &mut hx, &mut bx),
        );
        if skip_bf16(dev, r)? {
            widen_f16_only.launch(dev, dims1d(n / 256), dims1d(256), (&hb, &mut hx))?;
        } else {
            let got = bx.to_vec()?;
            let bad: Vec<usize> = (0..got.len())
                .filter(|&k| !same32(got[k], want_b[k]))
                .collect();
            if let Some(&k) = bad.first() {
                check.wrong(format!(
                    "bf16 {:#06x} to f32: got {:?}, want {:?} ({} differ)",
                    k,
                    got[k],
                    want_b[k],
                    bad.len()
                ));
            }
        }
        let got = hx.to_vec()?;
        let bad: Vec<usize> = (0..got.len())
            .filter(|&k| !same32(got[k], want_h[k]))
            .collect();
        if let Some(&k) = bad.first() {
            check.wrong(format!(
                "f16 {:#06x} to f32: got {:?}, want {:?} ({} differ)",
                k,
                got[k],
                want_h[k],
                bad.len()
            ));
        }
        Ok(())
    });
}

#[test]
fn narrowing_rounds_to_nearest_even() {
    let x = narrow_inputs();
    let want_h: Vec<u16> = x.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
    let want_b: Vec<u16> = x.iter().map(|&v| bf16::from_f32(v).to_bits()).collect();
    // The reference itself: ties to even, overflow to infinity.
    assert_eq!(f16::from_f32(65520.0), f16::INFINITY);
    assert_eq!(f16::from_f32(65519.99), f16::MAX);
    assert_eq!(f16::from_f32(1.0 + 1.0 / 2048.0), f16::ONE);
    assert_eq!(
        bf16::from_f32(f32::from_bits(0x3f80_8000)).to_bits(),
        0x3f80
    );
    assert_eq!(
        bf16::from_f32(f32::from_bits(0x3f81_8000)).to_bits(),
        0x3f82
    );
    assert_eq!(bf16::from_f32(f32::MAX), bf16::INFINITY);
    let n = x.len() as u32;
    check_each_device(common::devices(), 4, |dev, check| {
        let xb = dev.upload(&x)?;
        let mut h = dev.alloc::<f16>(x.len())?;
        narrow_f16.launch(dev, dims1d(n.div_ceil(128)), dims1d(128), (&xb, &mut h))?;
        let got: Vec<u16> = h.to_vec()?.iter().map(|v| v.to_bits()).collect();
        check16(check, "f16::from_f32", &got, &want_h, f16_nan, |k| {
            format!("{:?} ({:#010x})", x[k], x[k].to_bits())
        });
        let mut b = dev.alloc::<bf16>(x.len())?;
        let r = narrow_bf16.launch(dev, dims1d(n.div_ceil(128)), dims1d(128), (&xb, &mut b));
        if !skip_bf16(dev, r)? {
            let got: Vec<u16> = b.to_vec()?.iter().map(|v| v.to_bits()).collect();
            check16(check, "bf16::from_f32", &got, &want_b, bf16_nan, |k| {
                format!("{:?} ({:#010x})", x[k], x[k].to_bits())
            });
        }
        Ok(())
    });
}

/// Pairs of 16-bit patterns: every pair of edge values, then pseudo-random ones.
fn pairs(edges: &[u16], seed: u64) -> (Vec<u16>, Vec<u16>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in edges {
        for &y in edges {
            a.push(x);
            b.push(y);
        }
    }
    for w in common::pseudo_random(seed, 6000) {
        a.push(w as u16);
        b.push((w >> 16) as u16);
        // nearby magnitudes, where + and - cancel and round
        a.push((w >> 32) as u16);
        b.push(((w >> 32) as u16) ^ (w >> 48) as u16 & 0x83ff);
    }
    (a, b)
}

/// `f16`: ±0, subnormals, ±1, halfway-producing values, max finite, ±inf, NaN.
const F16_EDGES: [u16; 16] = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3555, 0x7bff, 0xfbff,
    0x7c00, 0xfc00, 0x7e00, 0x4000,
];

/// `bf16`: the same shapes.
const BF16_EDGES: [u16; 16] = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x3f81, 0x3eab, 0x7f7f, 0xff7f,
    0x7f80, 0xff80, 0x7fc0, 0x4000,
];

/// The reference: each operation in `f32`, rounded once by `from_f32`.
macro_rules! reference_ops {
    ($t:ty, $a:expr, $b:expr) => {{
        let (mut out, mut cmp) = (Vec::new(), Vec::new());
        for (&x, &y) in $a.iter().zip($b.iter()) {
            let (x, y) = (<$t>::from_bits(x), <$t>::from_bits(y));
            let (fx, fy) = (x.to_f32(), y.to_f32());
            let r = |v: f32| <$t>::from_f32(v).to_bits();
            out.extend([
                r(fx + fy),
                r(fx - fy),
                r(fx * fy),
                r(fx / fy),
                r(-fx),
                r(fx.min(fy)),
                r(fx.max(fy)),
                r(fx.sqrt()),
                r(fx % fy),
            ]);
            cmp.push(
                (fx < fy) as u32
                    | ((fx == fy) as u32) << 1
                    | ((fx <= fy) as u32) << 2
                    | ((fx != fy) as u32) << 3
                    | ((fx > fy) as u32) << 4
                    | ((fx >= fy) as u32) << 5,
            );
        }
        (out, cmp)
    }};
}

const OPS: [&str; 9] = ["+", "-", "*", "/", "neg", "min", "max", "sqrt", "%"];

/// Compares the nine results a pair; `min`/`max` of two zeros may be either zero.
fn check_ops(
    check: &mut DeviceCheck,
    ty: &str,
    got: &[u16],
    want: &[u16],
    a: &[u16],
    b: &[u16],
    nan: impl Fn(u16) -> bool,
) {
    let mut bad = 0;
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        let zeros = (k % 9 == 5 || k % 9 == 6) && (g | w) & 0x7fff == 0;
        if g != w && !(nan(g) && nan(w)) && !zeros {
            if bad < 8 {
                check.wrong(format!(
                    "{ty} {:#06x} {} {:#06x}: got {g:#06x}, want {w:#06x}",
                    a[k / 9],
                    OPS[k % 9],
                    b[k / 9]
                ));
            }
            bad += 1;
        }
    }
    if bad > 8 {
        check.wrong(format!("{ty}: {bad} results differ in all"));
    }
}

#[test]
fn f16_arithmetic_is_f32_rounded_once() {
    let (a, b) = pairs(&F16_EDGES, 0xf16);
    let (want, want_cmp) = reference_ops!(f16, a, b);
    // The reference itself: 1 + 2^-11 is a tie (to even, 1); 65504 + 16 overflows.
    assert_eq!((f16v(1.0) + f16::from_bits(0x1000)).to_bits(), 0x3c00);
    assert_eq!(f16::MAX + f16v(16.0), f16::INFINITY);
    let ha: Vec<f16> = a.iter().map(|&x| f16::from_bits(x)).collect();
    let hb: Vec<f16> = b.iter().map(|&x| f16::from_bits(x)).collect();
    let n = a.len() as u32;
    check_each_device(common::devices(), 4, |dev, check| {
        let (xa, xb) = (dev.upload(&ha)?, dev.upload(&hb)?);
        let mut out = dev.alloc::<f16>(9 * a.len())?;
        let mut cmp = dev.alloc::<u32>(a.len())?;
        ops_f16.launch(
            dev,
            dims1d(n.div_ceil(128)),
            dims1d(128),
            (&xa, &xb, &mut out, &mut cmp),
        )?;
        let got: Vec<u16> = out.to_vec()?.iter().map(|v| v.to_bits()).collect();
        check_ops(check, "f16", &got, &want, &a, &b, f16_nan);
        check.eq("f16 comparisons", &cmp.to_vec()?, &want_cmp);
        Ok(())
    });
}

#[test]
fn bf16_arithmetic_is_f32_rounded_once() {
    let (a, b) = pairs(&BF16_EDGES, 0xbf16);
    let (want, want_cmp) = reference_ops!(bf16, a, b);
    let ha: Vec<bf16> = a.iter().map(|&x| bf16::from_bits(x)).collect();
    let hb: Vec<bf16> = b.iter().map(|&x| bf16::from_bits(x)).collect();
    let n = a.len() as u32;
    check_each_device(common::devices(), 3, |dev, check| {
        let (xa, xb) = (dev.upload(&ha)?, dev.upload(&hb)?);
        let mut out = dev.alloc::<bf16>(9 * a.len())?;
        let mut cmp = dev.alloc::<u32>(a.len())?;
        let r = ops_bf16.launch(
            dev,
            dims1d(n.div_ceil(128)),
            dims1d(128),
            (&xa, &xb, &mut out, &mut cmp),
        );
        if skip_bf16(dev, r)? {
            return Ok(());
        }
        let got: Vec<u16> = out.to_vec()?.iter().map(|v| v.to_bits()).collect();
        check_ops(check, "bf16", &got, &want, &a, &b, bf16_nan);
        check.eq("bf16 comparisons", &cmp.to_vec()?, &want_cmp);
        Ok(())
    });
}

#[test]
fn f16_locals_parameters_and_shared_arrays() {
    let x: Vec<f16> = (0..256).map(|k| f16v(k as f32 * 0.37 - 40.0)).collect();
    let scale = f16v(1.5);
    let want: Vec<u16> = x
        .chunks(64)
        .map(|c| {
            let mut acc = f16v(0.0);
            for &v in c {
                acc = f16v(acc.to_f32() + f16v(v.to_f32() * scale.to_f32()).to_f32());
            }
            if acc.to_f32() > 100.0 { acc } else { -acc }.to_bits()
        })
        .collect();
    check_each_device(common::devices(), 3, |dev, check| {
        let xb = dev.upload(&x)?;
        let mut out = dev.alloc::<f16>(4)?;
        match block_sum_f16.launch(dev, dims1d(4), dims1d(64), (scale.to_f32(), &xb, &mut out)) {
            Err(spoc::Error::FeatureNotSupported { feature, .. }) => {
                check.skip(feature.to_string());
                return Ok(());
            }
            r => r?,
        }
        let got: Vec<u16> = out.to_vec()?.iter().map(|v| v.to_bits()).collect();
        check.eq("block sums", &got, &want);
        Ok(())
    });
}

/// The claim of `docs/LANGUAGE.md`: for `+ - * /` and `sqrt`, rounding the `f32` result equals
/// rounding the exact one (here the `f64` result, itself exact or rounded far below a 16-bit
/// ulp), on every pair of edge values and many random ones.
#[test]
fn f32_then_16_bits_equals_the_correctly_rounded_result() {
    fn run<T: Copy>(
        a: &[u16],
        b: &[u16],
        from_bits: fn(u16) -> T,
        to_f64: fn(T) -> f64,
        from_f32: fn(f32) -> u16,
        from_f64: fn(f64) -> u16,
        nan: fn(u16) -> bool,
    ) -> usize {
        let mut bad = 0;
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (to_f64(from_bits(x)), to_f64(from_bits(y)));
            let ops: [(f32, f64); 5] = [
                ((x as f32) + (y as f32), x + y),
                ((x as f32) - (y as f32), x - y),
                ((x as f32) * (y as f32), x * y),
                ((x as f32) / (y as f32), x / y),
                ((x as f32).sqrt(), x.sqrt()),
            ];
            for (narrow, wide) in ops {
                let (p, q) = (from_f32(narrow), from_f64(wide));
                if p != q && !(nan(p) && nan(q)) {
                    bad += 1;
                }
            }
        }
        bad
    }
    let (a, b) = pairs(&F16_EDGES, 0x5eed);
    let bad = run(
        &a,
        &b,
        f16::from_bits,
        |v| v.to_f64(),
        |v| f16::from_f32(v).to_bits(),
        |v| f16::from_f64(v).to_bits(),
        f16_nan,
    );
    assert_eq!(bad, 0, "f16");
    let (a, b) = pairs(&BF16_EDGES, 0x5eed);
    let bad = run(
        &a,
        &b,
        bf16::from_bits,
        |v| v.to_f64(),
        |v| bf16::from_f32(v).to_bits(),
        |v| bf16::from_f64(v).to_bits(),
        bf16_nan,
    );
    assert_eq!(bad, 0, "bf16");
}

#[test]
fn bf16_device_functions_run_as_on_the_host() {
    let (a, b) = pairs(&BF16_EDGES, 0x1e4b);
    let ha: Vec<bf16> = a.iter().map(|&x| bf16::from_bits(x)).collect();
    let hb: Vec<bf16> = b.iter().map(|&x| bf16::from_bits(x)).collect();
    // The helper called on the host: the half crate's operators.
    let quarter = bf16::from_f32(0.25);
    let want: Vec<u16> = (0..a.len())
        .map(|k| lerp_h(ha[k], hb[k], quarter).to_bits())
        .collect();
    let n = a.len() as u32;
    check_each_device(common::devices(), 3, |dev, check| {
        let (xa, xb) = (dev.upload(&ha)?, dev.upload(&hb)?);
        let mut out = dev.alloc::<bf16>(a.len())?;
        let r = lerp_bf16.launch(
            dev,
            dims1d(n.div_ceil(128)),
            dims1d(128),
            (&xa, &xb, &mut out),
        );
        if skip_bf16(dev, r)? {
            return Ok(());
        }
        let got: Vec<u16> = out.to_vec()?.iter().map(|v| v.to_bits()).collect();
        check16(check, "lerp", &got, &want, bf16_nan, |k| {
            format!("({:#06x}, {:#06x})", a[k], b[k])
        });
        Ok(())
    });
}

#[kernel]
fn half_constants(h: &mut [f16], b: &mut [bf16]) {
    if global_id_x() == 0 {
        h[0] = f16::ZERO;
        h[1] = f16::NEG_ZERO;
        h[2] = f16::ONE;
        h[3] = f16::NEG_ONE;
        h[4] = f16::MAX;
        h[5] = f16::MIN;
        h[6] = f16::EPSILON;
        h[7] = f16::MIN_POSITIVE;
        h[8] = f16::MIN_POSITIVE_SUBNORMAL;
        h[9] = f16::MAX_SUBNORMAL;
        h[10] = f16::INFINITY;
        h[11] = f16::NEG_INFINITY;
        h[12] = f16::NAN;
        b[0] = bf16::ZERO;
        b[1] = bf16::NEG_ZERO;
        b[2] = bf16::ONE;
        b[3] = bf16::NEG_ONE;
        b[4] = bf16::MAX;
        b[5] = bf16::MIN;
        b[6] = bf16::EPSILON;
        b[7] = bf16::MIN_POSITIVE;
        b[8] = bf16::MIN_POSITIVE_SUBNORMAL;
        b[9] = bf16::MAX_SUBNORMAL;
        b[10] = bf16::INFINITY;
        b[11] = bf16::NEG_INFINITY;
        b[12] = bf16::NAN;
    }
}

#[kernel]
fn f16_constants(h: &mut [f16]) {
    if global_id_x() == 0 {
        h[0] = f16::ZERO;
        h[1] = f16::NEG_ZERO;
        h[2] = f16::ONE;
        h[3] = f16::NEG_ONE;
        h[4] = f16::MAX;
        h[5] = f16::MIN;
        h[6] = f16::EPSILON;
        h[7] = f16::MIN_POSITIVE;
        h[8] = f16::MIN_POSITIVE_SUBNORMAL;
        h[9] = f16::MAX_SUBNORMAL;
        h[10] = f16::INFINITY;
        h[11] = f16::NEG_INFINITY;
        h[12] = f16::NAN;
    }
}

#[test]
fn associated_constants_are_the_half_crates() {
    let want_h: Vec<u16> = [
        f16::ZERO,
        f16::NEG_ZERO,
        f16::ONE,
        f16::NEG_ONE,
        f16::MAX,
        f16::MIN,
        f16::EPSILON,
        f16::MIN_POSITIVE,
        f16::MIN_POSITIVE_SUBNORMAL,
        f16::MAX_SUBNORMAL,
        f16::INFINITY,
        f16::NEG_INFINITY,
        f16::NAN,
    ]
    .iter()
    .map(|v| v.to_bits())
    .collect();
    let want_b: Vec<u16> = [
        bf16::ZERO,
        bf16::NEG_ZERO,
        bf16::ONE,
        bf16::NEG_ONE,
        bf16::MAX,
        bf16::MIN,
        bf16::EPSILON,
        bf16::MIN_POSITIVE,
        bf16::MIN_POSITIVE_SUBNORMAL,
        bf16::MAX_SUBNORMAL,
        bf16::INFINITY,
        bf16::NEG_INFINITY,
        bf16::NAN,
    ]
    .iter()
    .map(|v| v.to_bits())
    .collect();
    check_each_device(common::devices(), 4, |dev, check| {
        let mut h = dev.alloc::<f16>(13)?;
        let mut b = dev.alloc::<bf16>(13)?;
        let r = half_constants.launch(dev, dims1d(1), dims1d(1), (&mut h, &mut b));
        if skip_bf16(dev, r)? {
            f16_constants.launch(dev, dims1d(1), dims1d(1), (&mut h,))?;
        } else {
            let got: Vec<u16> = b.to_vec()?.iter().map(|v| v.to_bits()).collect();
            check16(check, "bf16 constant", &got, &want_b, bf16_nan, |k| {
                k.to_string()
            });
        }
        let got: Vec<u16> = h.to_vec()?.iter().map(|v| v.to_bits()).collect();
        check16(check, "f16 constant", &got, &want_h, f16_nan, |k| {
            k.to_string()
        });
        Ok(())
    });
}
