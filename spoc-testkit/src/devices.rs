//! Device loops: a test body run on every device of a backend, with the strictness of
//! [`crate::backends`] (a missing backend is a printed skip, or a failure when required).

use crate::backends;
use spoc_runtime::Device;

/// Every device of `backend`, or `None` after [`backends::skip`] when it has none.
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it.
pub fn devices_of(backend: &str, test: &str) -> Option<Vec<Device>> {
    match spoc_runtime::all_devices(Some(backend)) {
        Ok(devs) if !devs.is_empty() => Some(devs),
        Ok(_) => {
            // The registry lists no device; asking for one says why.
            let why = spoc_runtime::init_device(Some(backend))
                .err()
                .map_or_else(|| format!("no {backend} device"), |e| e.to_string());
            backends::skip(backend, test, &why);
            None
        }
        Err(e) => {
            backends::skip(backend, test, &e);
            None
        }
    }
}

/// The best device of `backend` (`spoc_runtime::init_device`), or `None` after
/// [`backends::skip`] when it has none.
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it.
pub fn best_device(backend: &str, test: &str) -> Option<Device> {
    best_device_or_skip(backend, test, |e| e.to_string())
}

/// [`best_device`], skipping with the reason `why` gives for the error (a backend's own
/// probe, such as its `unavailable_reason()`, says more than the registry's error).
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it.
pub fn best_device_or_skip(
    backend: &str,
    test: &str,
    why: impl FnOnce(&spoc_runtime::Error) -> String,
) -> Option<Device> {
    match spoc_runtime::init_device(Some(backend)) {
        Ok(dev) => Some(dev),
        Err(e) => {
            backends::skip(backend, test, &why(&e));
            None
        }
    }
}

/// Runs `f` on every device of `backend`, naming each on stderr (`<test> on <device>`).
///
/// # Panics
/// If `backend` has no device and `SPOC_REQUIRE_BACKENDS` names it; and whatever `f` panics
/// with.
pub fn each_device(backend: &str, test: &str, mut f: impl FnMut(&Device)) {
    for dev in devices_of(backend, test).unwrap_or_default() {
        eprintln!("{test} on {dev}");
        f(&dev);
    }
}

/// The Interpreter, the reference backend (always present).
///
/// # Panics
/// If it does not come up.
pub fn interpreter() -> Device {
    spoc_runtime::init_device(Some("Interpreter")).expect("the Interpreter always runs")
}

/// [`each_device`] with the Interpreter as second argument, for tests that compare a device
/// with the reference.
pub fn each_device_with_reference(backend: &str, test: &str, mut f: impl FnMut(&Device, &Device)) {
    let reference = interpreter();
    each_device(backend, test, |dev| f(dev, &reference));
}

/// A kernel fault's `(kernel, block, thread, message)`.
pub type Fault = (String, Option<[u32; 3]>, Option<[u32; 3]>, String);

/// The parts of the [`spoc_runtime::Error::KernelFault`] that `r` must be.
///
/// # Panics
/// If `r` is anything else (naming `what`, the device for instance).
#[track_caller]
pub fn kernel_fault(r: spoc_runtime::Result<()>, what: &dyn std::fmt::Display) -> Fault {
    match r {
        Err(spoc_runtime::Error::KernelFault {
            kernel,
            block,
            thread,
            message,
        }) => (kernel, block, thread, message),
        other => panic!("{what}: expected a kernel fault, got {other:?}"),
    }
}

/// What [`check_each_device`] found on one device: its wrong results, or that it skipped.
#[derive(Debug, Default)]
pub struct DeviceCheck {
    wrong: Vec<String>,
    skipped: Option<String>,
}

impl DeviceCheck {
    /// Records `what` as wrong unless `got` equals `want` element by element, naming the
    /// length or the first four elements that differ.
    pub fn eq<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: &[T], want: &[T]) {
        if got.len() != want.len() {
            self.wrong(format!("{what}: {} values, want {}", got.len(), want.len()));
            return;
        }
        let bad: Vec<String> = (0..got.len())
            .filter(|&i| got[i] != want[i])
            .take(4)
            .map(|i| format!("[{i}] got {:?}, want {:?}", got[i], want[i]))
            .collect();
        if !bad.is_empty() {
            self.wrong(format!("{what}: {}", bad.join(", ")));
        }
    }

    /// Records a wrong result, said in words.
    pub fn wrong(&mut self, why: impl Into<String>) {
        self.wrong.push(why.into());
    }

    /// Records `problems` as wrong, unless the device is one where the open finding `finding`
    /// of difftest/FINDINGS.md (e.g. `"F12"`) was seen, [`nvidia_vulkan`]: there they are
    /// printed as a known driver bug and the test goes on. With no problems it prints
    /// `right` for the device.
    pub fn wrong_unless_known_driver_bug(
        &mut self,
        dev: &Device,
        finding: &str,
        problems: &[String],
        right: &str,
    ) {
        if problems.is_empty() {
            println!("{}: {right}", label(dev));
        } else if nvidia_vulkan(dev) {
            println!(
                "KNOWN DRIVER BUG (difftest/FINDINGS.md {finding}, open): wrong on {}: {}",
                label(dev),
                problems.join("; ")
            );
        } else {
            self.wrong(problems.join("; "));
        }
    }

    /// Marks the device as skipped for `why` (printed; it does not count as checked). What was
    /// recorded wrong before still fails the test.
    pub fn skip(&mut self, why: impl Into<String>) {
        self.skipped = Some(why.into());
    }
}

/// True for NVIDIA's Vulkan driver, the one device where difftest/FINDINGS.md keeps driver
/// bugs open that spoc's SPIR-V cannot yet keep the driver from (F9, F17; F12 and F16 are
/// worked around, their tests stay).
pub fn nvidia_vulkan(dev: &Device) -> bool {
    dev.name.contains("NVIDIA") && dev.framework == "Vulkan"
}

/// `name (framework)`: how [`check_each_device`] names a device.
pub fn label(dev: &Device) -> String {
    format!("{} ({})", dev.name, dev.framework)
}

/// Runs `check` on each of `devices`, collecting what it records wrong on each; an `Err` from
/// `check` (a failed upload or launch) counts as wrong too. After the last device, fails
/// listing every wrong device with its wrong results, or when fewer than `min_checked`
/// devices were checked (not skipped): every device is run even when an earlier one was wrong.
///
/// ```ignore
/// check_each_device(common::devices(), 2, |dev, check| {
///     let mut y = dev.alloc::<f32>(4)?;
///     fill.launch(dev, dims1d(1), dims1d(4), (&mut y,))?;
///     check.eq("y", &y.to_vec()?, &[1.0; 4]);
///     Ok(())
/// });
/// ```
///
/// # Panics
/// As said: if any device is wrong, or too few were checked.
#[track_caller]
pub fn check_each_device(
    devices: impl IntoIterator<Item = Device>,
    min_checked: usize,
    mut check: impl FnMut(&Device, &mut DeviceCheck) -> spoc_runtime::Result<()>,
) {
    let (mut checked, mut failures) = (0, Vec::new());
    for dev in devices {
        let on = label(&dev);
        let mut c = DeviceCheck::default();
        if let Err(e) = check(&dev, &mut c) {
            c.wrong(format!("error: {e}"));
        }
        match &c.skipped {
            Some(why) => println!("{on}: skipped: {why}"),
            None => checked += 1,
        }
        if !c.wrong.is_empty() {
            failures.push(format!("{on}: {}", c.wrong.join("; ")));
        }
    }
    assert!(failures.is_empty(), "wrong on:\n{}", failures.join("\n"));
    assert!(
        checked >= min_checked,
        "checked on {checked} devices, want at least {min_checked}"
    );
}

#[cfg(test)]
mod tests {
    use super::DeviceCheck;

    #[test]
    fn a_check_names_the_first_differences() {
        let mut c = DeviceCheck::default();
        c.eq("same", &[1, 2, 3], &[1, 2, 3]);
        assert!(c.wrong.is_empty());
        c.eq("short", &[1, 2], &[1, 2, 3]);
        c.eq("values", &[1, 0, 3, 0, 0, 0, 0], &[1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(
            c.wrong,
            [
                "short: 2 values, want 3",
                "values: [1] got 0, want 2, [3] got 0, want 4, [4] got 0, want 5, [5] got 0, want 6"
            ]
        );
    }
}
