//! Deep kernels through the whole `#[kernel]` path: a 600-term sum (which used to overflow the
//! macro's stack and crash rustc) and blocks nested as deep as the language allows build, and
//! run on every device with the results plain Rust computes. The deeper cases (5000 terms, 400
//! and 2000 nested `if`s) are tested in-process in `spoc-frontend/tests/hostile.rs`, where
//! they give spanned errors.
//!
//! The two kernels below are written out in full (generated once by a script; they are data,
//! not code to read).

mod common;

use deep::{nest31, sum600};
use spoc::prelude::*;

#[rustfmt::skip]
mod deep {
use spoc::prelude::*;

/// `y[i] = a + a + … + a`, 600 terms, left to right.
#[kernel]
pub fn sum600(a: f32, y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a + a;
    }
}

/// 31 blocks nested in the body (`if`, `for`, `loop`, `match` arms, plain blocks, in turn):
/// the most the language takes (`spoc_frontend`'s `MAX_BLOCK_DEPTH` is 32, the body
/// included), the innermost storing 1.0.
#[kernel]
pub fn nest31(y: &mut [f32]) {
    let i = global_id_x();
if i < y.len() {
while i >= y.len() + 1 {}
{
match i % 2 {
0 | 1 => {
loop {
for _k in 0..1 {
if i < y.len() {
while i >= y.len() + 1 {}
{
match i % 2 {
0 | 1 => {
loop {
for _k in 0..1 {
if i < y.len() {
while i >= y.len() + 1 {}
{
match i % 2 {
0 | 1 => {
loop {
for _k in 0..1 {
if i < y.len() {
while i >= y.len() + 1 {}
{
match i % 2 {
0 | 1 => {
loop {
for _k in 0..1 {
if i < y.len() {
while i >= y.len() + 1 {}
{
match i % 2 {
0 | 1 => {
loop {
for _k in 0..1 {
if i < y.len() {
while i >= y.len() + 1 {}
{
match i % 2 {
0 | 1 => {
loop {
for _k in 0..1 {
if i < y.len() {
y[i] = 1.0;
}
}
break;
}
}
_ => {}
}
}
}
}
break;
}
}
_ => {}
}
}
}
}
break;
}
}
_ => {}
}
}
}
}
break;
}
}
_ => {}
}
}
}
}
break;
}
}
_ => {}
}
}
}
}
break;
}
}
_ => {}
}
}
}
}
}

#[test]
fn a_600_term_sum_builds_and_runs_on_every_device() {
    let a = 0.1f32;
    let mut want = a;
    for _ in 1..600 {
        want += a;
    }
    for dev in common::devices() {
        let mut y = dev.upload(&[0.0f32; 3]).unwrap();
        sum600
            .launch(&dev, dims1d(1), dims1d(4), (a, &mut y))
            .unwrap_or_else(|e| panic!("{}: {e}", dev.framework));
        assert_eq!(y.to_vec().unwrap(), [want; 3], "on {}", dev.framework);
    }
}

#[test]
fn the_deepest_nesting_allowed_builds_and_runs_on_every_device() {
    for dev in common::devices() {
        let mut y = dev.upload(&[0.0f32; 5]).unwrap();
        nest31
            .launch(&dev, dims1d(1), dims1d(8), (&mut y,))
            .unwrap_or_else(|e| panic!("{}: {e}", dev.framework));
        assert_eq!(y.to_vec().unwrap(), [1.0; 5], "on {}", dev.framework);
    }
}
