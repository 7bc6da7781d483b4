//! The **Metal** and **WebGPU** backends: registered so that their names resolve and
//! [`Compiler::generate_source`] produces Metal Shading Language and WGSL (through
//! `spoc_codegen`'s naga path), but they never run anything.
//!
//! spoc has no Metal or WebGPU runtime: there is no device enumeration, memory, compilation or
//! launch behind these names on any platform. So [`Platform::is_available`] is always `false`
//! (even on macOS, where Metal itself exists: we have no bindings to it), [`Platform::devices`]
//! returns an empty list, and every other operation (streams, memory, events, compiling,
//! launching, external sources) is refused with [`Error::FeatureNotSupported`] naming the
//! backend and the operation. `init_device(Some("Metal"))` therefore fails with
//! [`Error::BackendUnavailable`].
//!
//! Both are registered at [`crate::registry::priority`]'s lowest rank
//! ([`SOURCE_ONLY_PRIORITY`]), so they can never be picked over a backend that runs kernels.

use crate::backend::{Compiler, DeviceInfo, DeviceMem, DeviceMemory, Platform, Target};
use crate::error::{Error, Result};
use crate::executor::Executor;
use crate::intrinsics::IntrinsicRegistry;

/// The Metal backend's name.
pub const METAL_NAME: &str = "Metal";
/// The WebGPU backend's name.
pub const WEBGPU_NAME: &str = "WebGPU";

/// The registry priority of both source-only backends: below the Interpreter (0), so they are
/// never preferred (they have no devices anyway).
pub const SOURCE_ONLY_PRIORITY: i32 = -100;

/// Which shading language a [`SourceOnlyBackend`] generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceOnlyKind {
    /// Metal Shading Language ([`Target::Metal`]), backend `"Metal"`.
    Metal,
    /// WGSL ([`Target::WebGpu`]), backend `"WebGPU"`.
    WebGpu,
}

/// A backend that only generates source (see the [module docs](self)): never available, no
/// devices, every run-time operation refused with [`Error::FeatureNotSupported`].
pub struct SourceOnlyBackend {
    kind: SourceOnlyKind,
    intrinsics: IntrinsicRegistry,
}

impl SourceOnlyBackend {
    /// The backend of `kind`.
    pub fn new(kind: SourceOnlyKind) -> SourceOnlyBackend {
        SourceOnlyBackend {
            kind,
            intrinsics: IntrinsicRegistry::all(),
        }
    }

    /// Which language it generates.
    pub fn kind(&self) -> SourceOnlyKind {
        self.kind
    }

    fn refuse<T>(&self, what: &str) -> Result<T> {
        Err(Error::unsupported(
            self.name(),
            format!(
                "{what} (spoc has no {} runtime; it only generates source)",
                self.name()
            ),
        ))
    }
}

impl Platform for SourceOnlyBackend {
    fn name(&self) -> &'static str {
        match self.kind {
            SourceOnlyKind::Metal => METAL_NAME,
            SourceOnlyKind::WebGpu => WEBGPU_NAME,
        }
    }

    /// This crate's version (there is no driver to ask).
    fn version(&self) -> (u32, u32, u32) {
        crate::crate_version()
    }

    /// Always `false`: there is no Metal or WebGPU runtime behind this backend.
    fn is_available(&self) -> bool {
        false
    }

    /// Always empty.
    fn devices(&self) -> Result<Vec<DeviceInfo>> {
        Ok(Vec::new())
    }

    fn intrinsics(&self) -> &IntrinsicRegistry {
        &self.intrinsics
    }
}

impl DeviceMemory for SourceOnlyBackend {
    /// Refused: [`Error::FeatureNotSupported`].
    fn alloc(&self, device: usize, bytes: usize) -> Result<DeviceMem> {
        let _ = (device, bytes);
        self.refuse("device memory")
    }

    /// Refused: [`Error::FeatureNotSupported`].
    unsafe fn copy_h2d_ptr(
        &self,
        dst: &DeviceMem,
        offset: usize,
        src: *const u8,
        bytes: usize,
    ) -> Result<()> {
        let _ = (dst, offset, src, bytes);
        self.refuse("host-to-device copies")
    }

    /// Refused: [`Error::FeatureNotSupported`].
    unsafe fn copy_d2h_ptr(
        &self,
        src: &DeviceMem,
        offset: usize,
        dst: *mut u8,
        bytes: usize,
    ) -> Result<()> {
        let _ = (src, offset, dst, bytes);
        self.refuse("device-to-host copies")
    }

    /// Refused: [`Error::FeatureNotSupported`].
    fn free(&self, mem: DeviceMem) -> Result<()> {
        drop(mem);
        self.refuse("device memory")
    }

    /// Refused: [`Error::FeatureNotSupported`] (there is no device to wait for).
    fn synchronize(&self, device: usize) -> Result<()> {
        let _ = device;
        self.refuse("synchronisation")
    }
}

impl Compiler for SourceOnlyBackend {
    fn codegen_target(&self) -> Option<Target> {
        Some(match self.kind {
            SourceOnlyKind::Metal => Target::Metal,
            SourceOnlyKind::WebGpu => Target::WebGpu,
        })
    }
}

impl Executor for SourceOnlyBackend {}
