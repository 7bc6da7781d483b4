//! Launch checks on every device present: the same typed `Error::InvalidLaunch` everywhere.
//!
//! - A zero grid or block dimension is `LaunchProblem::ZeroDim` naming grid or block and the
//!   axis, and nothing runs. (Vulkan compiles the block into the module, and used to report a
//!   zero block as the code generator's `FeatureNotSupported`.)
//! - A block of the device's own `max_threads_per_block` (at most 1024) runs a shared-memory
//!   reduction correctly. NVIDIA's OpenCL was refused 1024 threads ("the device allows at most
//!   256"): its driver reports `CL_KERNEL_WORK_GROUP_SIZE` 256 for every kernel, below the
//!   device's `CL_DEVICE_MAX_WORK_GROUP_SIZE` of 1024. The backend now tries such a block and
//!   reports a refusal by the driver as `LaunchProblem::KernelTooManyThreads`, which names the
//!   limit.

mod common;

/// The kernels the examples share (one definition for the examples and the tests).
#[path = "../examples/programs/kernels.rs"]
#[allow(dead_code)]
mod shared_kernels;

use shared_kernels::block_sum_dynamic_u32 as block_sum;
use spoc::prelude::*;
use spoc::{DimKind, Error, LaunchProblem};

#[kernel]
fn fill(y: &mut [u32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = 1;
    }
}

#[test]
fn zero_dimensions_are_zero_dim_on_every_device() -> spoc::Result<()> {
    for dev in common::devices() {
        let mut y = dev.upload(&[7u32; 8])?;
        let cases = [
            (dims3d(0, 1, 1), dims1d(8), DimKind::Grid, 'x'),
            (dims2d(1, 0), dims1d(8), DimKind::Grid, 'y'),
            (dims1d(1), dims1d(0), DimKind::Block, 'x'),
            (dims1d(1), dims2d(8, 0), DimKind::Block, 'y'),
            (dims1d(1), dims3d(8, 1, 0), DimKind::Block, 'z'),
        ];
        for (grid, block, what, axis) in cases {
            let r = fill.launch(&dev, grid, block, (&mut y,));
            match r {
                Err(Error::InvalidLaunch {
                    problem: LaunchProblem::ZeroDim { what: w, axis: a },
                    ..
                }) if w == what && a == axis => {}
                other => panic!(
                    "{} ({}): grid {grid}, block {block}: expected ZeroDim {{ {what}, {axis} }}, \
                     got {other:?}",
                    dev.name, dev.framework
                ),
            }
        }
        assert_eq!(y.to_vec()?, vec![7; 8], "nothing ran on {}", dev.name);
    }
    Ok(())
}

#[test]
fn the_largest_block_the_device_reports_runs() -> spoc::Result<()> {
    for dev in common::devices() {
        let caps = dev.capabilities;
        // Powers of two for the tree reduction; 1024 is CUDA's and NVIDIA OpenCL's limit.
        let block = caps
            .max_threads_per_block
            .min(caps.max_block_dims[0])
            .min(1024);
        let block = 1u32 << (31 - block.leading_zeros());
        let n = 3 * block as usize;
        let x: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
        let xb = dev.upload(&x)?;
        let mut out = dev.alloc::<u32>(3)?;
        let shared = block as usize * 4;
        match block_sum.launch_with_shared(&dev, dims1d(3), dims1d(block), shared, (&xb, &mut out))
        {
            Ok(()) => {
                let want: Vec<u32> = x.chunks(block as usize).map(|c| c.iter().sum()).collect();
                assert_eq!(
                    out.to_vec()?,
                    want,
                    "{} ({}), block {block}",
                    dev.name,
                    dev.framework
                );
                println!("{} ({}): block {block} ran", dev.name, dev.framework);
            }
            Err(Error::FeatureNotSupported { feature, .. }) => {
                println!("{} ({}): skipped: {feature}", dev.name, dev.framework)
            }
            Err(e) => panic!("{} ({}), block {block}: {e}", dev.name, dev.framework),
        }
    }
    Ok(())
}
