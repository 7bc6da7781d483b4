//! Generic kernels and helpers: the bounds a type parameter of a `#[kernel]` or `#[device]` fn
//! may have, and the trait generated code picks a generic helper's instance with.
//!
//! `#[kernel] fn axpy<T: Float>(a: T, x: &[T], y: &mut [T])` is lowered once per type the bound
//! admits (here `f32` and `f64`), each instance its own kernel (`axpy_f32`, `axpy_f64`); the
//! launch picks the instance from the argument tuple's types. The bounds are marker traits,
//! sealed: they name sets of scalar types, they add no operations (kernel bodies are checked per
//! instance, with the concrete type).

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for i32 {}
    impl Sealed for u32 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
}

/// The float types of the kernel language: `f32` and `f64`. A bound of generic kernels and
/// helpers (`fn lerp<T: Float>(a: T, b: T, t: T) -> T`), instantiated for each.
pub trait Float: sealed::Sealed + Copy + Send + Sync + 'static {}
impl Float for f32 {}
impl Float for f64 {}

/// The integer types of the kernel language usable as a generic parameter: `i32`, `u32`, `i64`,
/// `u64` (not `usize`, the index type).
pub trait Int: sealed::Sealed + Copy + Send + Sync + 'static {}
impl Int for i32 {}
impl Int for u32 {}
impl Int for i64 {}
impl Int for u64 {}

/// The number types: [`Float`]'s and [`Int`]'s (`f32`, `f64`, `i32`, `u32`, `i64`, `u64`).
pub trait Number: sealed::Sealed + Copy + Send + Sync + 'static {}
impl Number for f32 {}
impl Number for f64 {}
impl Number for i32 {}
impl Number for u32 {}
impl Number for i64 {}
impl Number for u64 {}

/// A `#[device]` helper's instance number `I`: its companion (generated code only). A plain
/// helper's companion is its own instance for every `I`; a generic helper's companion maps each
/// instance's number to that instance's companion, and the number after the last to a stub that
/// stands for "no instance" (so that a call without an instance is reported once, by spoc's
/// check, and breaks nothing else).
pub trait InstanceAt<const I: usize> {
    /// The companion of instance `I`.
    type T;
}

/// Tag of a read-only buffer parameter, plus its element's tag (spoc-macros' `checks::tag`).
const BUF_RO: u8 = 16;
/// Tag of a read-write buffer parameter, plus its element's tag.
const BUF_MUT: u8 = 32;

/// The instance of a helper whose instances take `instances` (each its parameters' tags, then
/// its result's) that a call with argument and result tags `call` uses: the first whose tags are
/// the call's (a `&mut [T]` argument fits a `&[T]` parameter); `instances.len()` if none does;
/// 0 for a plain helper (no instances listed).
pub const fn pick_instance(instances: &[&[u8]], call: &[u8]) -> usize {
    if instances.is_empty() {
        return 0;
    }
    let mut i = 0;
    while i < instances.len() {
        let inst = instances[i];
        if inst.len() == call.len() {
            let mut k = 0;
            let mut fits = true;
            while k < inst.len() {
                let (p, a) = (inst[k], call[k]);
                let coerces = p > BUF_RO && p < BUF_MUT && a == p - BUF_RO + BUF_MUT;
                if p != a && !(coerces && k + 1 < inst.len()) {
                    fits = false;
                }
                k += 1;
            }
            if fits {
                return i;
            }
        }
        i += 1;
    }
    instances.len()
}

/// A message assembled in a `const` context (generated code only): the compile-time checks of
/// helper calls put a helper's parameter names, which only its own expansion knows, into the
/// message of a `panic!("{}", m.as_str())`. Longer messages are cut at [`ConstMessage::CAPACITY`]
/// bytes (on a character boundary).
#[derive(Clone, Copy, Debug)]
pub struct ConstMessage {
    bytes: [u8; ConstMessage::CAPACITY],
    len: usize,
}

impl ConstMessage {
    /// The most bytes a message holds.
    pub const CAPACITY: usize = 512;

    /// An empty message.
    pub const fn new() -> ConstMessage {
        ConstMessage {
            bytes: [0; ConstMessage::CAPACITY],
            len: 0,
        }
    }

    /// The message with `s` appended (as much of it as fits, whole characters only).
    pub const fn push(mut self, s: &str) -> ConstMessage {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            // The length of the character starting at `b[i]` (UTF-8 leading byte).
            let w = if b[i] < 0x80 {
                1
            } else if b[i] >= 0xF0 {
                4
            } else if b[i] >= 0xE0 {
                3
            } else {
                2
            };
            if self.len + w > ConstMessage::CAPACITY || i + w > b.len() {
                break;
            }
            let mut k = 0;
            while k < w {
                self.bytes[self.len] = b[i + k];
                self.len += 1;
                k += 1;
            }
            i += w;
        }
        self
    }

    /// The message so far.
    pub const fn as_str(&self) -> &str {
        let (head, _) = self.bytes.split_at(self.len);
        match core::str::from_utf8(head) {
            Ok(s) => s,
            Err(_) => "",
        }
    }
}

impl Default for ConstMessage {
    fn default() -> ConstMessage {
        ConstMessage::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_pick_the_instance_of_their_types() {
        // f32 = 7, f64 = 8; `fn f<T: Float>(x: &[T], a: T) -> T`.
        let inst: &[&[u8]] = &[&[BUF_RO + 7, 7, 7], &[BUF_RO + 8, 8, 8]];
        assert_eq!(pick_instance(inst, &[BUF_RO + 8, 8, 8]), 1);
        assert_eq!(pick_instance(inst, &[BUF_MUT + 7, 7, 7]), 0);
        assert_eq!(pick_instance(inst, &[BUF_RO + 7, 8, 7]), 2);
        assert_eq!(pick_instance(inst, &[BUF_RO + 7, 7]), 2);
        assert_eq!(pick_instance(&[], &[1, 2, 3]), 0);
    }

    #[test]
    fn const_messages_join_and_cut_on_character_boundaries() {
        const M: ConstMessage = ConstMessage::new()
            .push("parameter `")
            .push("dst")
            .push("`");
        assert_eq!(M.as_str(), "parameter `dst`");
        let long = "é".repeat(ConstMessage::CAPACITY);
        let m = ConstMessage::new().push("x").push(&long);
        assert_eq!(m.as_str().len(), ConstMessage::CAPACITY - 1);
        assert!(m.as_str().starts_with("xé"));
    }
}
