//! `Device::reset()`: fresh global ids, the memo dropped, builds in flight failed, old device
//! values refused, backend-local state (memory, module caches) untouched. One test: a reset is
//! process-wide.

mod support;

use spoc_runtime::{
    all_devices, compile_kernel, dims1d, init_device, memo_len, run, run_kernel, set_args, Device,
    Error,
};
use std::sync::atomic::Ordering;
use support::{test_backend, Gate, SAXPY};

#[test]
fn reset_retires_the_global_id_space() {
    let (jit, jit_devs) = test_backend("ResetJit", 1, 1000);
    let old_native = init_device(Some("Native")).unwrap();
    let old_all: Vec<usize> = all_devices(None).unwrap().iter().map(|d| d.id).collect();
    assert!(old_all.contains(&old_native.id) && old_all.contains(&jit_devs[0].id));
    let old_kernel = compile_kernel(&old_native, &SAXPY).unwrap();
    let x = old_native.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = old_native.upload(&[10.0f32; 3]).unwrap();
    assert!(memo_len() > 0);

    // A build in flight on the JIT backend while the id space is retired.
    let gate = Gate::new();
    jit.arm(gate.clone());
    let dev = jit_devs[0].clone();
    let h = std::thread::spawn(move || compile_kernel(&dev, &SAXPY));
    gate.entered.wait();
    Device::reset();
    gate.release.wait();
    let r = h.join().unwrap();
    assert!(
        matches!(&r, Err(Error::DeviceDestroyedDuringBuild { kernel, device }) if kernel == "saxpy" && *device == jit_devs[0].id),
        "{r:?}"
    );
    assert_eq!(
        memo_len(),
        0,
        "the memo was dropped and the stale build installed nothing"
    );

    // Old device values are refused on compile and launch.
    let stale = |r: Result<(), Error>| {
        assert!(
            matches!(r, Err(Error::DeviceReset { device }) if device == old_native.id),
            "{r:?}"
        )
    };
    stale(compile_kernel(&old_native, &SAXPY).map(|_| ()));
    stale(run(
        &old_native,
        &SAXPY,
        vec![1.0f32.into(), (&x).into(), (&mut y).into()],
        dims1d(1),
        dims1d(4),
        0,
    ));
    {
        let mut args = set_args(
            &old_native,
            vec![1.0f32.into(), (&x).into(), (&mut y).into()],
        )
        .unwrap();
        stale(run_kernel(&old_kernel, &mut args, dims1d(1), dims1d(4), 0));
    }
    assert_eq!(y.to_vec().unwrap(), vec![10.0f32; 3], "nothing ran");

    // New devices get fresh ids, never reused; the same hardware keeps them within an era.
    let new_native = init_device(Some("Native")).unwrap();
    let max_old = *old_all.iter().max().unwrap();
    let new_all: Vec<usize> = all_devices(None).unwrap().iter().map(|d| d.id).collect();
    assert!(
        new_all.iter().all(|id| *id > max_old),
        "{old_all:?} -> {new_all:?}"
    );
    assert_eq!(init_device(Some("Native")).unwrap().id, new_native.id);
    assert!(new_native.same_hardware(&old_native));

    // Memory from before the reset is still valid on the same hardware.
    run(
        &new_native,
        &SAXPY,
        vec![2.0f32.into(), (&x).into(), (&mut y).into()],
        dims1d(1),
        dims1d(4),
        0,
    )
    .unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![12.0f32, 14.0, 16.0]);

    // The backend's own cache was not perturbed: the module built during the reset is reused.
    let compiles = jit.compiles.load(Ordering::SeqCst);
    let new_jit = init_device(Some("ResetJit")).unwrap();
    assert_ne!(new_jit.id, jit_devs[0].id);
    let k = compile_kernel(&new_jit, &SAXPY).unwrap();
    assert_eq!(jit.compiles.load(Ordering::SeqCst), compiles);
    assert_eq!(k.device().id, new_jit.id);

    // A second reset moves on again.
    Device::reset();
    assert!(init_device(Some("Native")).unwrap().id > *new_all.iter().max().unwrap());
}
