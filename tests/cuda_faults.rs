//! A kernel that faults on an NVIDIA GPU: the error names the kernel, the device stays broken
//! until `Device::reset()`, which recovers it (old buffers refuse further use with a typed
//! error), and then a saxpy runs. On each CUDA backend present; skipped with a message without
//! one (required under `SPOC_REQUIRE_BACKENDS=cuda`). Its own test binary: the reset would
//! disturb other tests' devices.

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

fn saxpy_runs(dev: &Device) {
    let x = dev.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = dev.upload(&[10.0f32; 3]).unwrap();
    saxpy
        .launch(dev, dims1d(1), dims1d(32), (2.0, &x, &mut y))
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), [12.0, 14.0, 16.0], "{dev}");
}

#[test]
fn a_device_fault_names_the_kernel_and_reset_recovers() {
    for backend in ["CUDA/PTX", "CUDA/C"] {
        let dev = match spoc::init_device(Some(backend)) {
            Ok(d) => d,
            Err(e) if required(backend) => panic!("required backend {backend}: {e}"),
            Err(e) => {
                eprintln!("skipped: {backend} ({e})");
                continue;
            }
        };
        saxpy_runs(&dev);
        let mut out = dev.alloc::<u32>(64).unwrap();
        let kept = dev.upload(&[1u32, 2, 3]).unwrap();
        // 2^31 elements (8 GiB) past the buffer. The launch itself may or may not report it.
        let launched =
            write_far_out_of_bounds.launch(&dev, dims1d(1), dims1d(32), (&mut out, 1usize << 31));
        let fault = match launched {
            Err(e) => e,
            Ok(()) => dev
                .synchronize()
                .expect_err("the fault shows at synchronize"),
        };
        match &fault {
            Error::KernelFault {
                kernel,
                block,
                thread,
                message,
            } => {
                assert!(
                    kernel.contains("write_far_out_of_bounds"),
                    "{backend}: {fault}"
                );
                assert_eq!((block, thread), (&None, &None), "{backend}: {fault}");
                assert!(message.contains("CUDA_ERROR"), "{backend}: {fault}");
            }
            other => panic!("{backend}: expected a KernelFault, got {other:?}"),
        }
        println!("{backend}: {fault}");
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
        drop((out, kept));
        let dev = spoc::init_device(Some(backend)).unwrap();
        saxpy_runs(&dev);
        println!("{backend}: recovered after Device::reset(); saxpy runs");
    }
}
