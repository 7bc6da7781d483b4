//! A kernel that faults on an NVIDIA GPU: the error names the kernel, the device stays broken
//! (on a stream too: the fault shows at that stream's synchronize) until `Device::reset()` (old buffers then refuse further use with a typed error), which
//! either recovers it (a saxpy runs) or, where the driver refuses a new context in the same
//! process (CUDA documents its sticky faults so; the H200 with driver 580 does), leaves every
//! later call failing with a `KernelFault` that says only a new process can use the device.
//! On each CUDA backend present, each in a child process of its own (a fault of one would break
//! the other's device); skipped with a message without one (required under
//! `SPOC_REQUIRE_BACKENDS=cuda`). Its own test binary: the reset would disturb other tests'
//! devices.

/// The kernels the examples share (one definition for the examples and the tests).
#[path = "../examples/programs/kernels.rs"]
#[allow(dead_code)]
mod shared_kernels;

use shared_kernels::saxpy;
use spoc::prelude::*;
use spoc::{Device, Error};

/// Writes far past the end of `out` (GPU backends do not bounds-check): an illegal address.
#[kernel]
fn write_far_out_of_bounds(out: &mut [u32], offset: usize) {
    let i = global_id_x();
    out[i + offset] = 7;
}

// True if `SPOC_REQUIRE_BACKENDS` names the backend or `cuda`.
use spoc_testkit::backends::is_required as required;
use spoc_testkit::devices::kernel_fault;

fn saxpy_runs(dev: &Device) {
    let x = dev.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = dev.upload(&[10.0f32; 3]).unwrap();
    saxpy
        .launch(dev, dims1d(1), dims1d(32), (2.0, &x, &mut y))
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [12.0, 14.0, 16.0], "{dev}");
}

/// The variable that tells a child process which backend to fault.
const CASE_VAR: &str = "SPOC_CUDA_FAULT_CASE";

#[test]
fn a_device_fault_names_the_kernel_and_reset_recovers() {
    for backend in ["CUDA/PTX", "CUDA/C", "CUDA/PTX:stream"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "fault_case", "--nocapture", "--test-threads=1"])
            .env(CASE_VAR, backend)
            .output()
            .expect("the test binary runs again as a child");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        println!("-- {backend} (child process):\n{text}");
        assert!(out.status.success(), "{backend}: the child failed:\n{text}");
        let name = backend.trim_end_matches(":stream");
        assert!(
            text.contains(&format!("{name}: done")) || text.contains("skipped:"),
            "{backend}: the child did not run the case:\n{text}"
        );
    }
}

/// One backend's case; runs only in a child process started by the test above.
#[test]
fn fault_case() {
    let Ok(case) = std::env::var(CASE_VAR) else {
        return;
    };
    // `<backend>:stream`: the faulting kernel is queued on a stream, and the fault shows at
    // that stream's synchronize.
    let (backend, on_stream) = match case.strip_suffix(":stream") {
        Some(b) => (b, true),
        None => (case.as_str(), false),
    };
    {
        let dev = match spoc::init_device(Some(backend)) {
            Ok(d) => d,
            Err(e) if required(backend) => panic!("required backend {backend}: {e}"),
            Err(e) => {
                eprintln!("skipped: {backend} ({e})");
                return;
            }
        };
        saxpy_runs(&dev);
        let mut out = dev.alloc::<u32>(64).unwrap();
        let kept = dev.upload(&[1u32, 2, 3]).unwrap();
        // 2^31 elements (8 GiB) past the buffer. The launch itself may or may not report it.
        let args = (&mut out, 1usize << 31);
        let stream = dev.new_stream().unwrap();
        let launched = if on_stream {
            write_far_out_of_bounds.launch_on(&stream, dims1d(1), dims1d(32), args)
        } else {
            write_far_out_of_bounds.launch(&dev, dims1d(1), dims1d(32), args)
        };
        let fault = match (launched, on_stream) {
            (Err(e), _) => e,
            (Ok(()), true) => stream
                .synchronize()
                .expect_err("the fault shows at the stream's synchronize"),
            (Ok(()), false) => dev
                .synchronize()
                .expect_err("the fault shows at synchronize"),
        };
        let shown = fault.to_string();
        let (kernel, block, thread, message) = kernel_fault(Err(fault), &backend);
        assert!(
            kernel.contains("write_far_out_of_bounds"),
            "{backend}: {shown}"
        );
        assert_eq!((block, thread), (None, None), "{backend}: {shown}");
        assert!(message.contains("CUDA_ERROR"), "{backend}: {shown}");
        println!("{backend}: {shown}");
        // The context stays broken: the next call reports the same fault.
        assert!(
            matches!(kept.to_vec(), Err(Error::KernelFault { .. })),
            "{backend}: a download after the fault"
        );
        Device::reset();
        // Buffers of the broken context are gone, and say so.
        assert!(
            matches!(
                kept.to_vec(),
                Err(Error::ContextReset {
                    resource: "buffer",
                    ..
                })
            ),
            "{backend}: {:?}",
            kept.to_vec()
        );
        drop((out, kept, stream));
        let dev = spoc::init_device(Some(backend)).unwrap();
        match dev.upload(&[1.0f32, 2.0]) {
            Ok(_) => {
                saxpy_runs(&dev);
                println!("{backend}: recovered after Device::reset(); saxpy runs");
            }
            // The driver refused a new context: the device stays failed, and says why.
            Err(Error::KernelFault {
                kernel, message, ..
            }) => {
                assert!(
                    kernel.contains("write_far_out_of_bounds"),
                    "{backend}: {kernel}"
                );
                assert!(
                    message.contains("only a new process can use the device"),
                    "{backend}: {message}"
                );
                assert!(
                    matches!(dev.synchronize(), Err(Error::KernelFault { .. })),
                    "{backend}: synchronize on the lost device"
                );
                println!("{backend}: not recoverable in this process (driver refused a new context): {message}");
            }
            Err(e) => panic!("{backend}: after Device::reset(): {e:?}"),
        }
        println!("{backend}: done");
    }
}
