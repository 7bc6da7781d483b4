//! Devices: what a backend exposes, under a global id (the type; finding devices is
//! [`crate::devices`]' work).

use crate::backend::Backend;
use crate::error::{Error, Result};
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

/// A device's limits and features.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Capabilities {
    /// Most threads in one block (`block.x * block.y * block.z`).
    pub max_threads_per_block: u32,
    /// Largest block size per axis.
    pub max_block_dims: [u32; 3],
    /// Largest grid size per axis.
    pub max_grid_dims: [u32; 3],
    /// Shared memory per block, in bytes (static arrays plus the dynamic size of a launch).
    pub shared_mem_per_block: usize,
    /// Threads per warp / subgroup.
    pub warp_size: u32,
    /// Streaming multiprocessors, compute units, or CPU threads.
    pub compute_units: u32,
    /// Device memory in bytes (0 if unknown).
    pub total_memory: u64,
    /// The largest single buffer the device takes, in bytes (0 if unknown): the whole memory
    /// on CUDA and the CPU backends, `CL_DEVICE_MAX_MEM_ALLOC_SIZE` on OpenCL, the smaller of
    /// `maxStorageBufferRange` and `maxMemoryAllocationSize` on Vulkan (what one kernel
    /// parameter can see). [`Device::check_buffers`] tests sizes against it before anything
    /// is made.
    pub max_buffer_bytes: u64,
    /// `f64` arithmetic is supported.
    pub fp64: bool,
    /// 64-bit integer atomics are supported.
    pub int64_atomics: bool,
    /// Warp/subgroup operations (shuffles, votes, ballot) are supported.
    pub subgroups: bool,
    /// The device is a CPU.
    pub is_cpu: bool,
    /// The device is a GPU.
    pub is_gpu: bool,
    /// The device is a discrete GPU (own memory, not the host's).
    pub discrete: bool,
}

impl Capabilities {
    /// The limits of the CPU backends, CUDA-like so that launches that fit one fit the other:
    /// 1024 threads per block, blocks up to (1024, 1024, 64), grids up to (2^31 - 1, 65535,
    /// 65535), 48 KiB of shared memory per block, warps of 32; `threads` compute units.
    pub fn cpu(threads: u32, total_memory: u64) -> Capabilities {
        Capabilities {
            max_threads_per_block: 1024,
            max_block_dims: [1024, 1024, 64],
            max_grid_dims: [i32::MAX as u32, 65535, 65535],
            shared_mem_per_block: 48 * 1024,
            warp_size: 32,
            compute_units: threads,
            total_memory,
            max_buffer_bytes: total_memory,
            fp64: true,
            int64_atomics: true,
            subgroups: false,
            is_cpu: true,
            is_gpu: false,
            discrete: false,
        }
    }
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

    /// Waits until all work queued on the device has finished.
    ///
    /// # Errors
    /// A driver error.
    pub fn synchronize(&self) -> Result<()> {
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
