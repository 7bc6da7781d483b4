//! Devices: what a backend exposes, under a global id, and allocation on them (the type;
//! finding devices is `devices/`' work).

use crate::buffer::{Buffer, DeviceCopy};
pub use crate::capabilities::Capabilities;
use crate::error::{Error, Result};
use crate::executor::Backend;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The era of the global device id space: [`Device::reset`] starts a new one, and a `Device`
/// of an earlier era is refused ([`Device::check_current`]). The registry advances it.
static ERA: AtomicU64 = AtomicU64::new(0);

/// The current era of the global device id space.
pub(crate) fn current_era() -> u64 {
    ERA.load(Ordering::SeqCst)
}

/// Makes `era` the current era (the registry, when it retires the id space).
pub(crate) fn set_current_era(era: u64) {
    ERA.store(era, Ordering::SeqCst);
}

/// The identity of a device within one era of the global id space (see [`Device::reset`]).
pub(crate) struct DeviceSlot {
    pub(crate) id: usize,
    pub(crate) local: usize,
    pub(crate) era: u64,
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) caps: Capabilities,
}

/// A device of some backend, under a global id.
///
/// Cheap to clone (two reference counts). The public fields are a description; the device a
/// value designates is fixed when it is obtained, so changing them changes nothing but the
/// description.
#[derive(Clone)]
pub struct Device {
    /// Global id: unique across backends, never reused (not even after [`Device::reset`]).
    pub id: usize,
    /// The backend-local index of the device.
    pub backend_id: usize,
    /// Human-readable name.
    pub name: Arc<str>,
    /// The backend's name (`"Native"`, `"Interpreter"`, `"CUDA/PTX"`, …).
    pub framework: &'static str,
    /// Limits and features.
    pub capabilities: Capabilities,
    pub(crate) slot: Arc<DeviceSlot>,
}

impl Device {
    pub(crate) fn from_slot(slot: Arc<DeviceSlot>, name: Arc<str>, caps: Capabilities) -> Device {
        Device {
            id: slot.id,
            backend_id: slot.local,
            name,
            framework: slot.backend.name(),
            capabilities: caps,
            slot,
        }
    }

    /// The global id this value designates (not the public field, which may have been edited).
    pub(crate) fn gid(&self) -> usize {
        self.slot.id
    }

    /// The backend-local index this value designates.
    pub(crate) fn local(&self) -> usize {
        self.slot.local
    }

    /// The capabilities this value designates.
    pub(crate) fn caps(&self) -> &Capabilities {
        &self.slot.caps
    }

    /// The device's backend.
    pub fn backend(&self) -> &Arc<dyn Backend> {
        &self.slot.backend
    }

    /// True if `self` and `other` are the same backend-local device of the same backend (their
    /// memory is interchangeable), whatever era they come from.
    pub fn same_hardware(&self, other: &Device) -> bool {
        self.slot.local == other.slot.local && Arc::ptr_eq(&self.slot.backend, &other.slot.backend)
    }

    /// Fails with [`Error::DeviceReset`] if this value predates [`Device::reset`].
    ///
    /// # Errors
    /// [`Error::DeviceReset`].
    pub fn check_current(&self) -> Result<()> {
        if self.slot.era == current_era() {
            Ok(())
        } else {
            Err(Error::DeviceReset {
                device: self.slot.id,
            })
        }
    }

    /// Checks that buffers of `bytes` bytes each fit this device, before anything is made: each
    /// at most [`Capabilities::max_buffer_bytes`], all together at most
    /// [`Capabilities::total_memory`] (limits the device does not know are not checked). A
    /// program calls it before it builds large host inputs, so that a size the device cannot
    /// take is refused at once instead of after the host has filled gigabytes.
    ///
    /// # Errors
    /// [`Error::BufferTooLarge`] naming the limit.
    pub fn check_buffers(&self, bytes: &[u64]) -> Result<()> {
        let caps = self.caps();
        let err = |what, bytes, limit, limit_name| Error::BufferTooLarge {
            device: self.to_string(),
            what,
            bytes,
            limit,
            limit_name,
        };
        if caps.max_buffer_bytes > 0 {
            if let Some(&b) = bytes.iter().find(|&&b| b > caps.max_buffer_bytes) {
                return Err(err(
                    "a buffer of",
                    b,
                    caps.max_buffer_bytes,
                    "the largest buffer the device takes",
                ));
            }
        }
        let total = bytes.iter().fold(0u64, |a, &b| a.saturating_add(b));
        if caps.total_memory > 0 && total > caps.total_memory {
            return Err(err(
                "buffers totalling",
                total,
                caps.total_memory,
                "the device's memory",
            ));
        }
        Ok(())
    }

    /// Waits until all work queued on the device has finished: on CUDA, HIP, Native and Vulkan
    /// every stream's too; on OpenCL the default queue's only (a [`crate::Stream`] has its own
    /// [`crate::Stream::synchronize`]; host accesses to its buffers wait for it anyway).
    ///
    /// # Errors
    /// A driver error; [`crate::Error::NotCapturable`] on a thread that is capturing a graph on
    /// this device ([`crate::Stream::capture`]).
    pub fn synchronize(&self) -> Result<()> {
        crate::memory::graph::refuse_in_capture(self, "Device::synchronize")?;
        self.slot.backend.synchronize(self.slot.local)
    }
}

impl PartialEq for Device {
    fn eq(&self, other: &Device) -> bool {
        self.slot.id == other.slot.id
    }
}

impl Eq for Device {}

impl std::hash::Hash for Device {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.slot.id.hash(state);
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.slot.id)
            .field("backend_id", &self.slot.local)
            .field("name", &self.name)
            .field("framework", &self.framework)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{} {} [{}]", self.slot.id, self.name, self.framework)
    }
}

/// Does `dev` belong to the backend family `backend`? A backend registers under a family name
/// (`"HIP"`) or a `"<family>/<variant>"` refinement (`"CUDA/PTX"`, `"CUDA/C"`); `"CUDA"` matches
/// both refinements, `"CUDA/PTX"` only itself. Case-insensitive.
pub fn device_is_of_backend(backend: &str, dev: &Device) -> bool {
    name_matches(backend, dev.slot.backend.name())
}

/// True if backend name `name` answers to `filter` (equal, or `filter` is its family).
pub(crate) fn name_matches(filter: &str, name: &str) -> bool {
    if name.eq_ignore_ascii_case(filter) {
        return true;
    }
    match name.split_once('/') {
        Some((family, _)) => family.eq_ignore_ascii_case(filter),
        None => false,
    }
}

/// Allocation on a device.
impl Device {
    /// Allocates `n` zeroed elements on this device.
    ///
    /// # Errors
    /// [`Error::Memory`] if the allocation fails.
    pub fn alloc<T: DeviceCopy>(&self, n: usize) -> Result<Buffer<T>> {
        Buffer::alloc(self, n)
    }

    /// Allocates a buffer holding a copy of `data`.
    ///
    /// # Errors
    /// [`Error::Memory`] if the allocation or the copy fails.
    pub fn upload<T: DeviceCopy>(&self, data: &[T]) -> Result<Buffer<T>> {
        Buffer::from_slice(self, data)
    }
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn family_names_match_their_refinements() {
        assert!(name_matches("CUDA", "CUDA/PTX"));
        assert!(name_matches("cuda", "CUDA/C"));
        assert!(name_matches("CUDA/PTX", "CUDA/PTX"));
        assert!(!name_matches("CUDA/PTX", "CUDA/C"));
        assert!(!name_matches("CUD", "CUDA/C"));
        assert!(!name_matches("Native", "Interpreter"));
        assert!(name_matches("native", "Native"));
    }
}
