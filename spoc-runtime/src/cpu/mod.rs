//! The CPU backends: the SIMT block scheduler they share, Native (the Rust code `#[kernel]`
//! compiles into the program) and the IR Interpreter.

use crate::backend::DeviceInfo;
use crate::dims::Dims;
use crate::error::Result;
use crate::intrinsics::IntrinsicRegistry;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The [`crate::backend::Platform`] methods both CPU backends write alike: name, version,
/// availability, profiling and intrinsics (their memory is [`crate::host_memory_methods!`]).
/// `$name` is the backend's name; the backend keeps its [`CpuBackendBase`] in a field `base`.
macro_rules! cpu_backend_methods {
    ($name:expr) => {
        fn name(&self) -> &'static str {
            $name
        }

        fn version(&self) -> (u32, u32, u32) {
            crate::crate_version()
        }

        fn is_available(&self) -> bool {
            true
        }

        fn enable_profiling(&self) {
            self.base.set_profiling(true);
        }

        fn disable_profiling(&self) {
            self.base.set_profiling(false);
        }

        fn intrinsics(&self) -> &crate::intrinsics::IntrinsicRegistry {
            &self.base.intrinsics
        }
    };
}

pub mod interpreter;
pub mod mma;
pub mod native;
pub mod simt;
pub(crate) mod worker;

/// What the CPU backends hold alike: their intrinsic registry and profiling switch.
pub(crate) struct CpuBackendBase {
    pub(crate) intrinsics: IntrinsicRegistry,
    profiling: AtomicBool,
}

impl CpuBackendBase {
    /// A base with `intrinsics`, profiling off.
    pub(crate) fn new(intrinsics: IntrinsicRegistry) -> CpuBackendBase {
        CpuBackendBase {
            intrinsics,
            profiling: AtomicBool::new(false),
        }
    }

    fn set_profiling(&self, on: bool) {
        self.profiling.store(on, Ordering::Relaxed);
    }

    /// The one device of a CPU backend, the host, named `"{label} ({threads} threads)"`. Warp
    /// operations run on the SIMT scheduler, with warps of 32.
    pub(crate) fn devices(label: &str) -> Result<Vec<DeviceInfo>> {
        let mut caps = native::host_capabilities();
        caps.subgroups = true;
        Ok(vec![DeviceInfo {
            local_id: 0,
            name: format!("{label} ({} threads)", caps.compute_units),
            capabilities: caps,
        }])
    }

    /// Runs `launch` of `kernel` on `backend`; with profiling on, logs its time (`tracing`).
    pub(crate) fn timed<R>(
        &self,
        backend: &str,
        kernel: &str,
        grid: Dims,
        block: Dims,
        launch: impl FnOnce() -> R,
    ) -> R {
        let t0 = self.profiling.load(Ordering::Relaxed).then(Instant::now);
        let result = launch();
        if let Some(t0) = t0 {
            tracing::info!(
                kernel,
                %grid,
                %block,
                ms = t0.elapsed().as_secs_f64() * 1e3,
                "{backend} launch"
            );
        }
        result
    }
}
