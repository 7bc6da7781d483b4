//! What a device can do: its limits and features, as backends report them.

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
    /// parameter can see). [`Device::check_buffers`](crate::Device::check_buffers) tests sizes against it before anything
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
