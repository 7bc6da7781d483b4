//! A typed launch reuses its thread's launch plan (the compiled kernel of a (kernel, device)
//! pair) while the memo holds it, and never after: once `clear_cache()` dropped the memo, the
//! next launch compiles through the memo again. Arguments are checked at every launch, plan or
//! not. One test in its own binary: it counts the memo's entries, which other tests would change.

mod common;

use spoc::prelude::*;
use spoc::{Error, LaunchProblem};

#[kernel]
fn axpy_plans(a: f32, x: &[f32], y: &mut [f32], n: usize) {
    let i = global_id_x();
    if i < n {
        y[i] = a * x[i] + y[i];
    }
}

#[test]
fn plans_follow_the_memo_and_arguments_are_checked_every_time() -> spoc::Result<()> {
    let devices = common::devices();
    spoc::clear_cache();
    let launch_all = |want: f32| -> spoc::Result<()> {
        for dev in &devices {
            let x = dev.upload(&[1.0f32; 64])?;
            let mut y = dev.upload(&[0.0f32; 64])?;
            for _ in 0..3 {
                axpy_plans.launch(dev, dims1d(1), dims1d(64), (want, &x, &mut y, 64usize))?;
            }
            assert_eq!(y.to_vec()?, vec![3.0 * want; 64], "{}", dev.name);
        }
        Ok(())
    };
    launch_all(1.0)?;
    assert_eq!(spoc::memo_len(), devices.len());
    spoc::clear_cache();
    assert_eq!(spoc::memo_len(), 0);
    // A plan kept past the clear would launch without refilling the memo.
    launch_all(2.0)?;
    assert_eq!(spoc::memo_len(), devices.len());

    for dev in &devices {
        let x = dev.upload(&[1.0f32; 64])?;
        let mut y = dev.upload(&[0.0f32; 64])?;
        axpy_plans.launch(dev, dims1d(1), dims1d(64), (1.0, &x, &mut y, 64usize))?;
        // The same kernel, planned, with a `usize` its `u32` parameter cannot hold.
        let r = axpy_plans.launch(dev, dims1d(1), dims1d(64), (1.0, &x, &mut y, usize::MAX));
        assert!(
            matches!(
                r,
                Err(Error::InvalidLaunch {
                    problem: LaunchProblem::UsizeOverflow { .. },
                    ..
                })
            ),
            "{}: {r:?}",
            dev.name
        );
        // A buffer of another device (when there is one).
        if let Some(other) = devices.iter().find(|d| !d.same_hardware(dev)) {
            let far = other.upload(&[1.0f32; 64])?;
            let r = axpy_plans.launch(dev, dims1d(1), dims1d(64), (1.0, &far, &mut y, 64usize));
            assert!(
                matches!(
                    r,
                    Err(Error::InvalidLaunch {
                        problem: LaunchProblem::WrongDevice { .. },
                        ..
                    })
                ),
                "{}: {r:?}",
                dev.name
            );
        }
        assert_eq!(y.to_vec()?, vec![1.0; 64], "{}: nothing more ran", dev.name);
    }
    Ok(())
}
