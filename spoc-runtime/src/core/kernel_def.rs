//! What `#[kernel]` generates for the runtime: a kernel's name, its IR and its native code.

use crate::kernel_abi::NativeFn;
use spoc_ir::{IrError, Kernel, ValidKernel};

/// A kernel as compiled into the program by `#[kernel]`: its name, an accessor for its IR
/// (decoded, linked with its helpers and validated on first use, then kept for the life of the
/// process) and its native per-thread code for the Native backend.
///
/// Obtain one from a kernel handle (`saxpy.def()`); build one by hand only for tests.
#[derive(Clone, Copy)]
pub struct KernelDef {
    /// The kernel's Rust name.
    pub name: &'static str,
    /// Returns the kernel's IR, validated.
    pub ir: fn() -> Result<&'static ValidKernel, IrError>,
    /// The native entry point, if the kernel has one.
    pub native: Option<NativeFn>,
}

impl KernelDef {
    /// The kernel's validated IR.
    ///
    /// # Errors
    /// [`crate::Error::Ir`] if the embedded IR does not decode, link or validate.
    pub fn kernel(&self) -> crate::Result<&'static Kernel> {
        self.valid().map(ValidKernel::kernel)
    }

    /// The kernel's IR as the [`ValidKernel`] code generation and the backends take.
    ///
    /// # Errors
    /// [`crate::Error::Ir`] if the embedded IR does not decode, link or validate.
    pub fn valid(&self) -> crate::Result<&'static ValidKernel> {
        (self.ir)().map_err(crate::Error::from)
    }
}

impl std::fmt::Debug for KernelDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelDef")
            .field("name", &self.name)
            .field("native", &self.native.is_some())
            .finish()
    }
}

impl KernelDef {
    /// The source `target` would compile for this kernel: PTX, CUDA C, HIP C, OpenCL C, SPIR-V
    /// words, MSL, WGSL or GLSL (`Ok(None)` for Native and Interpreter, which run no source). It
    /// is generated for a typical device of the target (`spoc_codegen::Capabilities::for_target`);
    /// a backend generates for its own device's capabilities at launch (`SPOC_DUMP=<dir>` writes
    /// those).
    ///
    /// `block` is embedded as the workgroup size by the targets that need one (Vulkan, WGSL,
    /// MSL, GLSL); `soa_params` names record-buffer parameters to lower as structure-of-arrays
    /// (CUDA/PTX only).
    ///
    /// # Errors
    /// [`crate::Error::Ir`] if the IR does not load; the code generator's error (a capability
    /// the target lacks, SoA on a target other than CUDA/PTX) otherwise.
    pub fn source(
        &self,
        target: crate::Target,
        block: Option<crate::Dims>,
        soa_params: &[&str],
    ) -> crate::Result<Option<crate::Source>> {
        let kernel = self.valid()?;
        Ok(spoc_codegen::generate_source(
            target,
            kernel,
            block.map(crate::Dims::to_array),
            soa_params,
        )?)
    }
}
