//! The runtime seen through `#[kernel]`'s typed API on both CPU backends: faults name the kernel
//! and thread, launch checks refuse before anything runs, compiled kernels are memoized.

mod common;
mod faulting;

use common::checking_devices as devices;
use faulting::divide;
use spoc::prelude::*;
use spoc::{DimKind, Error, LaunchProblem};
use std::sync::Arc;

#[kernel]
fn fill_index(out: &mut [u32]) {
    let i = global_id_x();
    out[i] = (i * 2) as u32;
}

#[test]
fn out_of_bounds_writes_fault_with_coordinates() {
    for dev in devices() {
        let mut out = dev.alloc::<u32>(40).unwrap();
        let r = fill_index.launch(&dev, dims1d(3), dims1d(16), (&mut out,));
        let (kernel, block, thread, message) =
            spoc_testkit::devices::kernel_fault(r, &dev.framework);
        assert_eq!(kernel, "fill_index", "{}", dev.framework);
        // Index 40 is block 2, thread 8: the first faulting thread of the only faulting
        // block.
        assert_eq!(
            (block, thread),
            (Some([2, 0, 0]), Some([8, 0, 0])),
            "{}",
            dev.framework
        );
        assert!(message.contains("40"), "{message}");
        let got = out.to_vec().unwrap();
        assert_eq!(got[..32], (0..32).map(|i| i * 2).collect::<Vec<u32>>()[..]);
    }
}

#[test]
fn division_by_zero_faults() {
    for dev in devices() {
        let a = dev.upload(&[10, 20, 30, 40]).unwrap();
        let b = dev.upload(&[2, 5, 0, 4]).unwrap();
        let mut out = dev.alloc::<i32>(4).unwrap();
        let r = divide.launch(&dev, dims1d(1), dims1d(4), (&a, &b, &mut out));
        assert!(
            matches!(&r, Err(Error::KernelFault { kernel, thread: Some([2, 0, 0]), .. }) if kernel == "divide"),
            "{}: {r:?}",
            dev.framework
        );
        let b = dev.upload(&[2, 5, 3, 4]).unwrap();
        divide
            .launch(&dev, dims1d(1), dims1d(4), (&a, &b, &mut out))
            .unwrap();
        assert_eq!(out.to_vec().unwrap(), [5, 4, 10, 10]);
    }
}

#[test]
fn typed_launches_are_checked_before_running() {
    for dev in devices() {
        let a = dev.upload(&[1, 2]).unwrap();
        let b = dev.upload(&[1, 1]).unwrap();
        let mut out = dev.upload(&[7, 7]).unwrap();
        let r = divide.launch(&dev, dims2d(1, 0), dims1d(2), (&a, &b, &mut out));
        assert!(matches!(
            r,
            Err(Error::InvalidLaunch {
                problem: LaunchProblem::ZeroDim {
                    what: DimKind::Grid,
                    axis: 'y'
                },
                ..
            })
        ));
        let r = divide.launch(&dev, dims1d(1), dims2d(2, 1024), (&a, &b, &mut out));
        assert!(matches!(
            r,
            Err(Error::InvalidLaunch {
                problem: LaunchProblem::TooManyThreads { threads: 2048, .. },
                ..
            })
        ));
        let other = devices()
            .into_iter()
            .find(|d| d.framework != dev.framework)
            .unwrap();
        let foreign = other.upload(&[1, 1]).unwrap();
        let r = divide.launch(&dev, dims1d(1), dims1d(2), (&a, &foreign, &mut out));
        assert!(
            matches!(&r, Err(Error::InvalidLaunch { problem: LaunchProblem::WrongDevice { param, .. }, .. }) if param == "b"),
            "{r:?}"
        );
        assert_eq!(out.to_vec().unwrap(), [7, 7], "nothing ran");
    }
}

#[test]
fn compiled_kernels_are_memoized_per_device() {
    let devs = devices();
    let k0 = spoc::compile_kernel(&devs[0], divide.def()).unwrap();
    let k1 = spoc::compile_kernel(&devs[1], divide.def()).unwrap();
    assert!(Arc::ptr_eq(
        &k0,
        &spoc::compile_kernel(&devs[0], divide.def()).unwrap()
    ));
    assert!(!Arc::ptr_eq(&k0, &k1));
    assert_eq!(k0.hash(), k1.hash());
    assert_eq!(k0.name(), "divide");
}
