//! The fourth backend trait, [`Executor`] (launches, direct execution, external sources: what
//! takes kernel arguments, [`Arg`]), and [`Backend`], the four together. They sit in the
//! memory layer, beside the arguments they take, so that `core/` (the other three traits and
//! the handles, `core/backend.rs`) imports nothing from above it (docs/DESIGN.md §5).

use crate::args::Arg;
use crate::backend::{
    CompileOptions, Compiler, DeviceMemory, LaunchConfig, Module, Platform, SourceLang,
};
use crate::dims::Dims;
use crate::error::{Error, Result};
use crate::kernel_def::KernelDef;
use spoc_ir::Kernel;
use std::sync::Arc;

/// A backend: one way of running kernels on one family of devices — the four traits together
/// ([`Platform`], [`DeviceMemory`], [`Compiler`], [`Executor`]), implemented for every type that
/// implements them. The runtime holds backends as `Arc<dyn Backend>`; their methods are callable
/// on it without importing the four traits.
///
/// Every method that can fail returns [`Error`]. Device ids are backend-local. A GPU backend
/// keeps what it shares with the others in a [`crate::driver_core::DriverCore`] and binds
/// launch arguments from the ABI its source carries ([`crate::bind`]).
pub trait Backend: Platform + DeviceMemory + Compiler + Executor {}

impl<T: Platform + DeviceMemory + Compiler + Executor> Backend for T {}

/// The executor: launches of compiled modules ([`Executor::launch`], one [`LaunchConfig`]),
/// direct execution (Native runs the macro's compiled Rust, the Interpreter runs the IR) and
/// external kernels given as source (which it compiles, caches and synchronises on: hence its
/// supertraits).
pub trait Executor: DeviceMemory + Compiler {
    /// Launches a compiled module as `config` says. `args` have been checked against the
    /// kernel's parameters; the backend binds them from the module's ABI ([`crate::bind`]).
    ///
    /// # Errors
    /// A driver error; [`Error::FeatureNotSupported`] by default.
    fn launch(&self, module: &Module, config: &LaunchConfig<'_>, args: &[Arg<'_>]) -> Result<()> {
        let _ = (module, config, args);
        Err(Error::unsupported(self.name(), "JIT launches"))
    }

    /// Runs a kernel without a compile step (Direct: `def.native`; Custom: the IR) on
    /// backend-local `device`, synchronously, as `config` says (its stream is ignored).
    /// `prepared` is what [`Compiler::prepare`] returned
    /// (when the launch went through the runtime's memo). `args` have been checked against the
    /// kernel's parameters, and `Arg::Usize` replaced by the parameter's integer type.
    ///
    /// # Errors
    /// [`Error::KernelFault`] if a thread faults; [`Error::FeatureNotSupported`] by default
    /// (JIT backends).
    fn execute_direct(
        &self,
        device: usize,
        def: &KernelDef,
        kernel: &Kernel,
        prepared: Option<&Module>,
        config: &LaunchConfig<'_>,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let _ = (device, def, kernel, prepared, config, args);
        Err(Error::unsupported(self.name(), "direct execution"))
    }

    /// Source languages [`Executor::run_source`] accepts (none by default).
    fn supported_source_langs(&self) -> &[SourceLang] {
        &[]
    }

    /// Compiles external kernel `kernel_name` of `source` in `lang` (one of
    /// [`Executor::supported_source_langs`]) for `device`, uncached: the driver's step of the
    /// default [`Executor::run_source`]. The module's launches bind the arguments per the
    /// backend's external-kernel ABI ([`crate::bind::external_params`]).
    ///
    /// # Errors
    /// [`Error::Compile`] if the driver rejects it; [`Error::FeatureNotSupported`] by default.
    fn load_external(
        &self,
        device: usize,
        lang: SourceLang,
        source: &str,
        kernel_name: &str,
    ) -> Result<Module> {
        let _ = (device, source, kernel_name);
        Err(Error::unsupported(
            self.name(),
            format!("external {lang:?} kernels"),
        ))
    }

    /// Compiles and runs an external kernel given as source, and waits for it. The default
    /// refuses a language not in [`Executor::supported_source_langs`], checks grid, block and
    /// shared memory against the device's [`Platform::capabilities`], takes the module from
    /// [`Compiler::module_cache`] (keyed by device, language, kernel name and source) or builds
    /// it with [`Executor::load_external`], launches it on the default stream
    /// ([`Executor::launch`]) and synchronises the device.
    ///
    /// # Errors
    /// [`Error::FeatureNotSupported`] if `lang` is not supported (always, by default);
    /// [`Error::InvalidLaunch`] for a launch over the device's limits or arguments the kernel
    /// cannot take; what compiling or running it returns.
    #[allow(clippy::too_many_arguments)]
    fn run_source(
        &self,
        device: usize,
        source: &str,
        lang: SourceLang,
        kernel_name: &str,
        grid: Dims,
        block: Dims,
        shared_mem: usize,
        args: &[Arg<'_>],
    ) -> Result<()> {
        if !self.supported_source_langs().contains(&lang) {
            return Err(Error::unsupported(
                self.name(),
                format!("external {lang:?} kernels"),
            ));
        }
        let caps = self.capabilities(device)?;
        crate::dims::check_dims(kernel_name, &caps, grid, block, shared_mem)?;
        let build = || {
            self.load_external(device, lang, source, kernel_name)
                .map(Arc::new)
        };
        let module = match self.module_cache() {
            Some(cache) => {
                let key = crate::cache::CacheKey::new(
                    device,
                    format!("{lang:?}:{kernel_name}"),
                    crate::cache::source_hash(lang, source, &[]),
                    CompileOptions::default(),
                );
                cache.get_or_build(key, build)?
            }
            None => build()?,
        };
        self.launch(&module, &LaunchConfig::new(grid, block, shared_mem), args)?;
        self.synchronize(device)
    }
}
