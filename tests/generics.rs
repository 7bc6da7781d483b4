//! Generic kernels and helpers: `#[kernel] fn k<T: Float>(…)` and `#[device] fn f<T: Float>(…)`
//! are instantiated once per type of their bound; launches pick the instance from the argument
//! tuple, calls from the argument types. Each instance runs on every device and is compared
//! with the same computation on the host.

use spoc::prelude::*;

/// Linear interpolation, for any float type.
#[device]
fn lerp<T: Float>(a: T, b: T, t: T) -> T {
    a + (b - a) * t
}

/// `y = a * x + y`, for `f32` and `f64`.
#[kernel]
fn axpy<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// Blends `x` towards `y` by `t` with the generic helper.
#[kernel]
fn blend<T: Float>(t: T, x: &[T], y: &mut [T]) {
    let i = global_id_x();
    if i < y.len() {
        let v: T = lerp(x[i], y[i], t);
        y[i] = v;
    }
}

/// Integer sums with wrapping, min and `T::MAX`, for the four integer types.
#[kernel]
fn clamp_add<T: Int>(k: T, x: &[T], y: &mut [T]) {
    let i = global_id_x();
    if i < y.len() {
        let s = x[i] + k;
        y[i] = s.min(T::MAX - 1 as T);
    }
}

fn run(name: &str, mut f: impl FnMut(&spoc::Device) -> spoc::Result<()>) -> Vec<String> {
    let mut out = Vec::new();
    for dev in spoc::all_devices(None).expect("devices") {
        match f(&dev) {
            Ok(()) => out.push(dev.framework.to_string()),
            Err(spoc::Error::FeatureNotSupported { backend, feature }) => {
                eprintln!("{name}: skipped on {} ({backend}): {feature}", dev.name)
            }
            Err(e) => panic!("{name} on {} ({}): {e}", dev.name, dev.framework),
        }
    }
    out
}

/// Prints the frameworks `kernel` ran on; asserts that they include Native and the Interpreter.
fn assert_ran_on_the_cpu_backends(kernel: &str, ran: &[String]) {
    eprintln!("{kernel} ran on {ran:?}");
    assert!(ran.iter().any(|f| f == "Native") && ran.iter().any(|f| f == "Interpreter"));
}

#[test]
fn axpy_instances_match_the_host() {
    assert_eq!(axpy::INSTANCES, ["axpy_f32", "axpy_f64"]);
    assert_eq!(axpy.ir::<f32>().unwrap().name, "axpy_f32");
    assert_eq!(axpy.ir::<f64>().unwrap().name, "axpy_f64");
    let xs: Vec<f32> = (0..100).map(|i| i as f32 * 0.37).collect();
    let want32: Vec<f32> = xs.iter().map(|x| 2.5 * x + 1.0).collect();
    let xd: Vec<f64> = (0..100).map(|i| i as f64 * 0.37).collect();
    let want64: Vec<f64> = xd.iter().map(|x| 2.5 * x + 1.0).collect();
    let ran = run("axpy", |dev| {
        let x = dev.upload(&xs)?;
        let mut y = dev.upload(&vec![1.0f32; xs.len()])?;
        // The literal takes `f32` from the buffers: the instance is picked by the tuple.
        axpy.launch(dev, dims1d(4), dims1d(32), (2.5, &x, &mut y))?;
        assert_eq!(y.to_vec()?, want32, "{}", dev.framework);
        let x = dev.upload(&xd)?;
        let mut y = dev.upload(&vec![1.0f64; xd.len()])?;
        axpy.launch(dev, dims1d(4), dims1d(32), (2.5f64, &x, &mut y))?;
        assert_eq!(y.to_vec()?, want64, "{}", dev.framework);
        Ok(())
    });
    assert_ran_on_the_cpu_backends("axpy", &ran);
}

#[test]
fn generic_helpers_pick_their_instance() {
    assert_eq!(lerp(1.0f32, 3.0, 0.25), 1.5);
    assert_eq!(lerp(1.0f64, 3.0, 0.75), 2.5);
    let ir = blend.ir::<f64>().unwrap();
    assert!(ir.function("lerp_f64").is_some(), "{ir}");
    let ir = blend.ir::<f32>().unwrap();
    assert!(ir.function("lerp_f32").is_some(), "{ir}");
    let xs: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let ys: Vec<f32> = (0..64).map(|i| 100.0 - i as f32).collect();
    let want: Vec<f32> = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| lerp(*x, *y, 0.25))
        .collect();
    let xd: Vec<f64> = xs.iter().map(|&v| v as f64).collect();
    let yd: Vec<f64> = ys.iter().map(|&v| v as f64).collect();
    let wantd: Vec<f64> = xd
        .iter()
        .zip(&yd)
        .map(|(x, y)| lerp(*x, *y, 0.25))
        .collect();
    let ran = run("blend", |dev| {
        let x = dev.upload(&xs)?;
        let mut y = dev.upload(&ys)?;
        blend.launch(dev, dims1d(2), dims1d(32), (0.25f32, &x, &mut y))?;
        assert_eq!(y.to_vec()?, want, "{}", dev.framework);
        let x = dev.upload(&xd)?;
        let mut y = dev.upload(&yd)?;
        blend.launch(dev, dims1d(2), dims1d(32), (0.25f64, &x, &mut y))?;
        assert_eq!(y.to_vec()?, wantd, "{}", dev.framework);
        Ok(())
    });
    assert_ran_on_the_cpu_backends("blend", &ran);
}

#[test]
fn integer_instances_wrap_and_clamp() {
    let xs: Vec<i32> = vec![0, 5, i32::MAX, -7, i32::MAX - 3];
    let want: Vec<i32> = xs
        .iter()
        .map(|x| x.wrapping_add(3).min(i32::MAX - 1))
        .collect();
    let xu: Vec<u64> = vec![0, 5, u64::MAX, 7, u64::MAX - 3];
    let wantu: Vec<u64> = xu
        .iter()
        .map(|x| x.wrapping_add(3).min(u64::MAX - 1))
        .collect();
    let ran = run("clamp_add", |dev| {
        let x = dev.upload(&xs)?;
        let mut y = dev.alloc::<i32>(xs.len())?;
        clamp_add.launch(dev, dims1d(1), dims1d(8), (3i32, &x, &mut y))?;
        assert_eq!(y.to_vec()?, want, "{}", dev.framework);
        let x = dev.upload(&xu)?;
        let mut y = dev.alloc::<u64>(xu.len())?;
        clamp_add.launch(dev, dims1d(1), dims1d(8), (3u64, &x, &mut y))?;
        assert_eq!(y.to_vec()?, wantu, "{}", dev.framework);
        Ok(())
    });
    assert_eq!(clamp_add::INSTANCES.len(), 4);
    assert_ran_on_the_cpu_backends("clamp_add", &ran);
}

/// The example of docs/LANGUAGE.md ("Generic kernels and helpers").
#[kernel]
fn axpy_lerp<T: Float>(a: T, x: &[T], y: &mut [T]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + lerp(y[i], y[i], 0.5 as T);
    }
}

#[test]
fn the_documented_example_runs() -> spoc::Result<()> {
    let dev = spoc::init_device(None)?;
    let x = dev.upload(&[1.0f32, 2.0])?;
    let mut y = dev.upload(&[0.5f32, 0.5])?;
    axpy_lerp.launch(&dev, dims1d(1), dims1d(2), (2.0, &x, &mut y))?;
    assert_eq!(y.to_vec()?, [2.5, 4.5]);
    let xd = dev.upload(&[1.0f64])?;
    let mut yd = dev.upload(&[0.5f64])?;
    axpy_lerp.launch(&dev, dims1d(1), dims1d(1), (2.0, &xd, &mut yd))?;
    assert_eq!(yd.to_vec()?, [2.5]);
    Ok(())
}

/// Doubles any number.
#[device]
fn twice<T: Number>(x: T) -> T {
    x + x
}

/// Calls `twice` at two types (a helper, too, calls one instance per type).
#[device]
fn twice_both(x: f32, n: i32) -> f32 {
    let m: i32 = twice(n);
    twice(x) + m as f32
}

/// Stores `v` at `y[i]`: a helper without a result, called as a statement.
#[device]
fn put<T: Number>(y: &mut [T], i: usize, v: T) {
    y[i] = v;
}

/// One generic helper called at three types in one kernel (a new user's finding: the second
/// type's call compiled, then linking panicked).
#[kernel]
fn three_instances(a: &mut [f32], b: &mut [i32], c: &mut [u64]) {
    let i = global_id_x();
    if i < 2 {
        let x: f32 = twice(a[i]);
        let y: i32 = twice(b[i]);
        b[i] = twice(y) + twice(3);
        a[i] = x + twice(1.5f32) + twice_both(0.25, 2i32);
        c[i] = twice(c[i]);
        put(c, i + 2, 7u64);
        put(a, i + 2, 0.5f32);
    }
}

#[test]
fn one_generic_helper_runs_at_several_types_in_one_kernel() {
    let ir = three_instances.ir().unwrap();
    let names = [
        "twice_f32",
        "twice_i32",
        "twice_u64",
        "twice_both",
        "put_u64",
        "put_f32",
    ];
    for f in names {
        assert!(ir.function(f).is_some(), "{ir}");
    }
    assert_eq!(ir.functions.len(), names.len(), "{ir}");
    let ran = run("three_instances", |dev| {
        let mut a = dev.upload(&[1.0f32, 2.0, 0.0, 0.0])?;
        let mut b = dev.upload(&[1i32, -2])?;
        let mut c = dev.upload(&[3u64, u64::MAX, 0, 0])?;
        three_instances.launch(dev, dims1d(1), dims1d(2), (&mut a, &mut b, &mut c))?;
        // a: 2x + 3 + (0.5 + 4); b: 4y + 6; c: 2c (wrapping), then 7s.
        assert_eq!(a.to_vec()?, [9.5, 11.5, 0.5, 0.5], "{}", dev.framework);
        assert_eq!(b.to_vec()?, [10, -2], "{}", dev.framework);
        assert_eq!(c.to_vec()?, [6, u64::MAX - 1, 7, 7], "{}", dev.framework);
        Ok(())
    });
    assert_ran_on_the_cpu_backends("three_instances", &ran);
}
