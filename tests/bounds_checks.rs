//! Checked mode on every device present (`spoc_codegen::checked`): an out-of-bounds write, an
//! out-of-bounds read (buffers, shared and local arrays, inside a helper) and an integer division
//! by zero are each an `Error::KernelFault` naming the kernel, the faulting thread and block, the
//! parameter or array and the index — the Interpreter's wording, on OpenCL, Vulkan and CUDA as on
//! the CPU backends — and the device runs a correct kernel afterwards.
//!
//! The launches compile with `CompileOptions { checked: Some(true), .. }`, so GPUs are checked as
//! well; the typed `launch` of the last test relies on the default, which is checked for
//! CPU-resident devices (PoCL, lavapipe) and for every device with `SPOC_BOUNDS_CHECK=1`.
//! Without checks, the out-of-bounds write of the first kernel on PoCL writes past the end of
//! a host allocation (the crash surfaced later as `free(): corrupted unsorted chunks`).

mod common;
mod faulting;

use faulting::{divide, double, read_past};
use spoc::prelude::*;
use spoc::{Arg, CompileOptions, Device, Error, KernelDef};

#[kernel]
fn write_past(y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i + 1] = 2.0;
    }
}

#[kernel]
fn shared_past(out: &mut [u32]) {
    let tile = shared_array::<u32, 8>();
    let t = thread_idx_x();
    tile[t] = t as u32;
    sync_threads();
    if t == 7 {
        out[0] = tile[t + 2];
    }
}

#[kernel]
fn local_past(k: &[u32], out: &mut [u32]) {
    let i = global_id_x();
    let mut a = [0u32; 4];
    a[k[i] as usize] = 9;
    out[i] = a[0];
}

#[device]
fn fetch(x: &[u32], i: usize) -> u32 {
    x[i]
}

#[kernel]
fn helper_past(x: &[u32], out: &mut [u32]) {
    let i = global_id_x();
    if i < out.len() {
        let v: u32 = fetch(x, i + 5);
        out[i] = v;
    }
}

#[kernel]
fn fault_then_return(y: &mut [u32]) {
    let i = global_id_x();
    if i == 3 {
        y[i + 10] = 1;
        return;
    }
    if i < y.len() {
        y[i] = 7;
    }
}

/// Compiles `def` in checked mode (with the launch's block, which Vulkan compiles in) and runs
/// it with `args`.
fn run_checked(
    dev: &Device,
    def: &'static KernelDef,
    grid: Dims,
    block: Dims,
    args: Vec<Arg<'_>>,
) -> spoc::Result<()> {
    let opts = CompileOptions {
        block: Some(block),
        checked: Some(true),
        ..CompileOptions::default()
    };
    let ck = spoc::compile_kernel_with(dev, def, opts)?;
    let mut a = spoc::set_args(dev, args)?;
    spoc::run_kernel(&ck, &mut a, grid, block, 0)
}

/// Asserts `r` is a fault of `kernel` in `block`/`thread` whose message contains each `|`-part
/// of `what` (Native names shared and local arrays without their memory).
fn assert_fault(
    dev: &Device,
    r: spoc::Result<()>,
    kernel: &str,
    block: [u32; 3],
    thread: [u32; 3],
    what: &str,
) {
    let label = format!("{} ({})", dev.name, dev.framework);
    match r {
        Err(Error::KernelFault {
            kernel: k,
            block: b,
            thread: t,
            message,
        }) => {
            assert_eq!(k, kernel, "{label}: {message}");
            assert_eq!((b, t), (Some(block), Some(thread)), "{label}: {message}");
            for part in what.split('|') {
                assert!(
                    message.contains(part),
                    "{label}: `{message}` lacks `{part}`"
                );
            }
            println!("{label}: {message}");
        }
        other => panic!("{label}: expected a fault of `{kernel}` ({what}), got {other:?}"),
    }
}

/// Runs `helper_past` again and asserts its fault message contains `what`.
fn assert_fault_loc(dev: &Device, kernel: &str, what: &str) -> spoc::Result<()> {
    let x = dev.upload(&[1u32; 8])?;
    let mut out = dev.alloc::<u32>(4)?;
    let r = run_checked(
        dev,
        helper_past.def(),
        dims1d(1),
        dims1d(4),
        vec![(&x).into(), (&mut out).into()],
    );
    assert_fault(dev, r, kernel, [0, 0, 0], [3, 0, 0], what);
    Ok(())
}

/// The device still runs a correct kernel, with the right result.
fn assert_usable(dev: &Device) -> spoc::Result<()> {
    let x = dev.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0])?;
    let mut y = dev.alloc::<f32>(5)?;
    run_checked(
        dev,
        double.def(),
        dims1d(1),
        dims1d(8),
        vec![(&x).into(), (&mut y).into()],
    )?;
    assert_eq!(y.to_vec()?, vec![2.0, 4.0, 6.0, 8.0, 10.0], "{}", dev.name);
    Ok(())
}

#[test]
fn out_of_bounds_writes_are_faults() -> spoc::Result<()> {
    for dev in common::devices() {
        let mut y = dev.upload(&[0.0f32; 6])?;
        // 2 blocks of 4: thread 1 of block 1 (i = 5) writes y[6].
        let r = run_checked(
            &dev,
            write_past.def(),
            dims1d(2),
            dims1d(4),
            vec![(&mut y).into()],
        );
        assert_fault(
            &dev,
            r,
            "write_past",
            [1, 0, 0],
            [1, 0, 0],
            "index 6 out of bounds for `y` of length 6",
        );
        // A thread that returns right after its fault still reports it.
        let mut y = dev.upload(&[0u32; 8])?;
        let r = run_checked(
            &dev,
            fault_then_return.def(),
            dims1d(1),
            dims1d(8),
            vec![(&mut y).into()],
        );
        assert_fault(
            &dev,
            r,
            "fault_then_return",
            [0, 0, 0],
            [3, 0, 0],
            "index 13 out of bounds for `y` of length 8",
        );
        assert_usable(&dev)?;
    }
    Ok(())
}

#[test]
fn out_of_bounds_reads_are_faults() -> spoc::Result<()> {
    for dev in common::devices() {
        let x = dev.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
        let mut out = dev.alloc::<f32>(4)?;
        let r = run_checked(
            &dev,
            read_past.def(),
            dims1d(1),
            dims1d(4),
            vec![(&x).into(), (&mut out).into()],
        );
        assert_fault(
            &dev,
            r,
            "read_past",
            [0, 0, 0],
            [3, 0, 0],
            "index 4 out of bounds for `x` of length 4",
        );
        // A read inside a helper names the helper's parameter.
        let x = dev.upload(&[1u32; 8])?;
        let mut out = dev.alloc::<u32>(4)?;
        let r = run_checked(
            &dev,
            helper_past.def(),
            dims1d(1),
            dims1d(4),
            vec![(&x).into(), (&mut out).into()],
        );
        assert_fault(
            &dev,
            r,
            "helper_past",
            [0, 0, 0],
            [3, 0, 0],
            "index 8 out of bounds for `x` of length 8",
        );
        if !matches!(dev.framework, "Native") {
            // The statement is the helper's (Native reports no location).
            assert_fault_loc(&dev, "helper_past", "(in helper `fetch`)")?;
        }
        assert_usable(&dev)?;
    }
    Ok(())
}

#[test]
fn shared_and_local_array_accesses_are_checked() -> spoc::Result<()> {
    for dev in common::devices() {
        let mut out = dev.alloc::<u32>(1)?;
        let r = run_checked(
            &dev,
            shared_past.def(),
            dims1d(1),
            dims1d(8),
            vec![(&mut out).into()],
        );
        match r {
            Err(Error::FeatureNotSupported { feature, .. }) => {
                println!("{}: shared arrays skipped: {feature}", dev.name)
            }
            r => assert_fault(
                &dev,
                r,
                "shared_past",
                [0, 0, 0],
                [7, 0, 0],
                "index 9 out of bounds for |`tile` of length 8",
            ),
        }
        let k = dev.upload(&[0u32, 1, 7, 2])?;
        let mut out = dev.alloc::<u32>(4)?;
        let r = run_checked(
            &dev,
            local_past.def(),
            dims1d(1),
            dims1d(4),
            vec![(&k).into(), (&mut out).into()],
        );
        assert_fault(
            &dev,
            r,
            "local_past",
            [0, 0, 0],
            [2, 0, 0],
            "index 7 out of bounds for |`a` of length 4",
        );
        assert_usable(&dev)?;
    }
    Ok(())
}

#[test]
fn integer_division_by_zero_is_a_fault() -> spoc::Result<()> {
    for dev in common::devices() {
        let a = dev.upload(&[10, 20, 30, 40])?;
        let b = dev.upload(&[2, 5, 0, 4])?;
        let mut q = dev.alloc::<i32>(4)?;
        let r = run_checked(
            &dev,
            divide.def(),
            dims1d(1),
            dims1d(4),
            vec![(&a).into(), (&b).into(), (&mut q).into()],
        );
        assert_fault(
            &dev,
            r,
            "divide",
            [0, 0, 0],
            [2, 0, 0],
            "integer division or remainder by zero",
        );
        assert_usable(&dev)?;
    }
    Ok(())
}

#[test]
fn typed_launches_are_checked_on_cpu_resident_devices() -> spoc::Result<()> {
    let everywhere = std::env::var("SPOC_BOUNDS_CHECK").is_ok_and(|v| v == "1");
    for dev in common::devices() {
        if !(dev.capabilities.is_cpu || everywhere) {
            continue;
        }
        let mut y = dev.upload(&[0.0f32; 6])?;
        let r = write_past.launch(&dev, dims1d(2), dims1d(4), (&mut y,));
        assert_fault(
            &dev,
            r,
            "write_past",
            [1, 0, 0],
            [1, 0, 0],
            "index 6 out of bounds for `y` of length 6",
        );
        let x = dev.upload(&[1.0f32; 3])?;
        let mut y = dev.alloc::<f32>(3)?;
        double.launch(&dev, dims1d(1), dims1d(4), (&x, &mut y))?;
        assert_eq!(y.to_vec()?, vec![2.0; 3], "{}", dev.name);
    }
    Ok(())
}
