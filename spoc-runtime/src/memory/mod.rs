//! Device memory and what travels into a kernel: typed buffers, records and their structure-of-arrays
//! form, kernel arguments and the host-memory methods the CPU backends share.

/// The accessors a typed buffer (`Buffer<T>`, `SoaBuffer<R>`) has over its untyped buffer
/// `raw` of type `$raw`: `len` (documented `$len`), `is_empty`, `device`, `raw`, and `raw_mut`
/// (documented `$raw_mut`).
macro_rules! typed_buffer_accessors {
    ($raw:ty, $len:literal, $raw_mut:literal) => {
        #[doc = $len]
        pub fn len(&self) -> usize {
            self.raw.len
        }

        /// True if the buffer has no elements.
        pub fn is_empty(&self) -> bool {
            self.raw.len == 0
        }

        /// The device the buffer lives on.
        pub fn device(&self) -> &Device {
            self.raw.device()
        }

        /// The untyped buffer.
        pub fn raw(&self) -> &$raw {
            &self.raw
        }

        #[doc = $raw_mut]
        pub fn raw_mut(&mut self) -> &mut $raw {
            &mut self.raw
        }
    };
}

pub(crate) mod args;
pub mod bind;
pub(crate) mod buffer;
pub(crate) mod device;
pub mod executor;
pub(crate) mod graph;
pub mod host;
pub mod record;
pub mod soa;
pub(crate) mod stream;
pub mod vector;
