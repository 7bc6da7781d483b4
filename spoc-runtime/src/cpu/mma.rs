//! The CPU backends' warp-level matrix multiply-accumulate: `mma_sync_m16n8k16_f16` and
//! `mma_sync_m16n8k16_bf16` computed from the fragments of the 32 lanes of a warp, in the
//! fragment layout of PTX's `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`
//! (PTX ISA, "Warp-level matrix multiply-accumulate instructions", section "Matrix Fragments
//! for mma.m16n8k16 with floating point type").
//!
//! # Layout
//!
//! With `g = lane / 4` (PTX's `groupID`) and `t = lane % 4` (`threadID_in_group`):
//!
//! - `A` (16×16, row-major in the instruction's `.row`): 4 registers of two 16-bit values each,
//!   the element of the lower index in the lower 16 bits. Element `i` (`0..8`, register
//!   `i / 2`) is `A[r][c]` with `r = g + 8` for `i` in `2, 3, 6, 7` (else `g`) and
//!   `c = 2t + (i % 2) + 8` for `i >= 4` (else `2t + i % 2`): [`a_coords`].
//! - `B` (16×8, `.col`): 2 registers. Element `i` (`0..4`) is `B[k][n]` with
//!   `k = 2t + (i % 2) + 8` for `i >= 2` (else `2t + i % 2`) and `n = g`: [`b_coords`].
//! - `C` and `D` (16×8, `f32`): 4 values. Element `i` is `C[r][c]` with `r = g + 8` for
//!   `i >= 2` (else `g`) and `c = 2t + i % 2`: [`c_coords`].
//!
//! # Arithmetic
//!
//! `D[m][n] = C[m][n] + Σ_k A[m][k] · B[k][n]`, computed in `f32` in this order: starting from
//! `C[m][n]`, add the products for `k = 0, 1, …, 15`, one after the other, each sum rounded to
//! nearest even. A product of two `f16` (11 significant bits each) or two `bf16` (8) values fits
//! in `f32`'s 24 bits, so it is exact, unless it leaves `f32`'s range (possible for `bf16`,
//! whose exponent range is `f32`'s: it then overflows to infinity or is rounded as a subnormal).
//! The tiles of a larger product chained through `C` therefore give exactly the `f32` loop
//! `acc = c; for k in 0..K { acc += a[m][k] * b[k][n] }`. The PTX ISA does not specify the order
//! or the intermediate rounding of the hardware's sum, so GPUs may differ in the last bits:
//! compare their results with a tolerance.

use half::{bf16, f16};

/// One lane's operands: the `A` and `B` fragment registers (16-bit pairs) and the `C` values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MmaLane {
    /// `A`: 4 registers of two 16-bit values.
    pub a: [u32; 4],
    /// `B`: 2 registers of two 16-bit values.
    pub b: [u32; 2],
    /// `C`: 4 `f32`.
    pub c: [f32; 4],
}

/// `(row, column)` in `A` (16×16) of element `i` (`0..8`) of lane `lane`'s `A` fragment.
pub fn a_coords(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    let row = if matches!(i, 2 | 3 | 6 | 7) { g + 8 } else { g };
    let col = 2 * t + i % 2 + if i >= 4 { 8 } else { 0 };
    (row, col)
}

/// `(k, n)` in `B` (16×8) of element `i` (`0..4`) of lane `lane`'s `B` fragment.
pub fn b_coords(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    (2 * t + i % 2 + if i >= 2 { 8 } else { 0 }, g)
}

/// `(row, column)` in `C`/`D` (16×8) of element `i` (`0..4`) of lane `lane`'s accumulator.
pub fn c_coords(lane: u32, i: u32) -> (u32, u32) {
    let (g, t) = (lane / 4, lane % 4);
    (if i >= 2 { g + 8 } else { g }, 2 * t + i % 2)
}

/// The 16-bit value `h` (bits) of the input type as an `f32` (exact).
fn widen(h: u16, bf16_in: bool) -> f32 {
    if bf16_in {
        bf16::from_bits(h).to_f32()
    } else {
        f16::from_bits(h).to_f32()
    }
}

/// Element `i` of a fragment of 16-bit pairs: register `i / 2`, low half for even `i`.
fn half_of(regs: &[u32], i: u32) -> u16 {
    (regs[(i / 2) as usize] >> (16 * (i % 2))) as u16
}

/// `D = A × B + C` for one warp: `lanes[l]` holds lane `l`'s fragments; returns each lane's `D`
/// fragment. `bf16_in` says the 16-bit values are `bf16` (else `f16`). See the module docs for
/// the layout and the order of the sums.
pub fn m16n8k16(lanes: &[MmaLane; 32], bf16_in: bool) -> [[f32; 4]; 32] {
    let mut a = [[0f32; 16]; 16];
    let mut b = [[0f32; 8]; 16];
    let mut c = [[0f32; 8]; 16];
    for (lane, f) in (0u32..).zip(lanes.iter()) {
        for i in 0..8 {
            let (r, k) = a_coords(lane, i);
            a[r as usize][k as usize] = widen(half_of(&f.a, i), bf16_in);
        }
        for i in 0..4 {
            let (k, n) = b_coords(lane, i);
            b[k as usize][n as usize] = widen(half_of(&f.b, i), bf16_in);
            let (r, col) = c_coords(lane, i);
            c[r as usize][col as usize] = f.c[i as usize];
        }
    }
    let mut d = [[0f32; 4]; 32];
    for (lane, out) in (0u32..).zip(d.iter_mut()) {
        for (i, v) in (0u32..).zip(out.iter_mut()) {
            let (m, n) = c_coords(lane, i);
            let (m, n) = (m as usize, n as usize);
            let mut acc = c[m][n];
            for k in 0..16 {
                acc += a[m][k] * b[k][n];
            }
            *v = acc;
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_held_by_exactly_one_lane() {
        let mut a = [[0u32; 16]; 16];
        let mut b = [[0u32; 8]; 16];
        let mut c = [[0u32; 8]; 16];
        for lane in 0..32 {
            for i in 0..8 {
                let (r, k) = a_coords(lane, i);
                a[r as usize][k as usize] += 1;
            }
            for i in 0..4 {
                let (k, n) = b_coords(lane, i);
                b[k as usize][n as usize] += 1;
                let (r, n) = c_coords(lane, i);
                c[r as usize][n as usize] += 1;
            }
        }
        assert!(a.iter().flatten().all(|&n| n == 1));
        assert!(b.iter().flatten().all(|&n| n == 1));
        assert!(c.iter().flatten().all(|&n| n == 1));
    }

    #[test]
    fn the_ptx_isa_examples_of_the_layout() {
        // Lane 0 holds a0, a1 = A[0][0..2], a2, a3 = A[8][0..2], a4, a5 = A[0][8..10].
        assert_eq!(a_coords(0, 0), (0, 0));
        assert_eq!(a_coords(0, 3), (8, 1));
        assert_eq!(a_coords(0, 4), (0, 8));
        // Lane 5: groupID 1, threadID_in_group 1.
        assert_eq!(a_coords(5, 1), (1, 3));
        assert_eq!(a_coords(5, 7), (9, 11));
        assert_eq!(b_coords(5, 0), (2, 1));
        assert_eq!(b_coords(5, 3), (11, 1));
        assert_eq!(c_coords(31, 3), (15, 7));
    }

    #[test]
    fn identity_times_b_is_b_plus_c() {
        let one = f16::ONE.to_bits() as u32;
        let mut lanes = [MmaLane::default(); 32];
        for (lane, f) in (0u32..).zip(lanes.iter_mut()) {
            for i in 0..8 {
                let (r, k) = a_coords(lane, i);
                if r == k {
                    f.a[(i / 2) as usize] |= one << (16 * (i % 2));
                }
            }
            for i in 0..4 {
                let (k, n) = b_coords(lane, i);
                let v = f16::from_f32((k * 8 + n) as f32).to_bits() as u32;
                f.b[(i / 2) as usize] |= v << (16 * (i % 2));
                f.c[i as usize] = 0.5;
            }
        }
        let d = m16n8k16(&lanes, false);
        for (lane, out) in (0u32..).zip(d.iter()) {
            for i in 0..4 {
                let (m, n) = c_coords(lane, i);
                assert_eq!(out[i as usize], (m * 8 + n) as f32 + 0.5, "lane {lane} {i}");
            }
        }
    }
}
