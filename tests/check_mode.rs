//! Checked launches (`SPOC_CHECK=1` / `spoc::set_checking`): a launch on any device first runs on
//! the Interpreter, on copies, and a fault there stops the real launch.

mod faulting;

use faulting::{double, read_past};
use spoc::prelude::*;

/// Every device but the Interpreter: Native always, GPU or CPU OpenCL/Vulkan where present.
fn devices() -> Vec<spoc::Device> {
    spoc::all_devices(None)
        .expect("device enumeration")
        .into_iter()
        .filter(|d| d.framework != "Interpreter")
        .collect()
}

#[test]
fn checked_launches_report_the_interpreters_fault_and_do_not_run() -> spoc::Result<()> {
    spoc::set_checking(true);
    assert!(spoc::checking().unwrap());
    let devs = devices();
    assert!(devs.iter().any(|d| d.framework == "Native"));
    for dev in devs {
        let x = dev.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
        let mut y = dev.upload(&[7.0f32; 4])?;
        let err = read_past
            .launch(&dev, dims1d(1), dims1d(4), (&x, &mut y))
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(
                err,
                spoc::Error::KernelFault {
                    thread: Some([3, 0, 0]),
                    ..
                }
            ),
            "{}: {msg}",
            dev.name
        );
        assert!(msg.contains("SPOC_CHECK (Interpreter)"), "{msg}");
        assert!(
            msg.contains("index 4 out of bounds for `x` of length 4"),
            "{msg}"
        );
        // The real launch did not run: y is untouched.
        assert_eq!(y.to_vec()?, [7.0; 4], "{}", dev.name);

        // A correct kernel runs for real, with the check on.
        double.launch(&dev, dims1d(1), dims1d(4), (&x, &mut y))?;
        assert_eq!(y.to_vec()?, [2.0, 4.0, 6.0, 8.0], "{}", dev.name);
        println!("checked launch on {} ({}): ok", dev.name, dev.framework);
    }
    spoc::set_checking(false);
    assert!(!spoc::checking().unwrap());
    Ok(())
}
