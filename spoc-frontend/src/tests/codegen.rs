//! The generated Rust: it parses, and uses the kernel language's semantics.

use crate::lower::lower_fn;
use crate::{device_fn, handle, native_entry, paths};
use spoc_ir::StmtKind;

#[test]
fn generated_rust_parses_and_uses_wrapping_and_checked_ops() {
    let item: syn::ItemFn = syn::parse_quote! {
        /// Adds.
        pub fn k(n: i32, x: &[i32], y: &mut [i32]) {
            let i = global_id_x();
            if i < y.len() {
                y[i] = x[i] * n / 3 + (x[i] << 2) - helper(n);
            }
            for j in (0..n).rev().step_by(2) { y[0] += j % 5; }
        }
    };
    let l = lower_fn(&item, true).unwrap_or_else(|e| panic!("{:?}", e.messages()));
    let tys = crate::param_types(&item);
    let out = handle::expand(&item, &l, &tys);
    let file: syn::File = syn::parse2(out.clone()).expect("expansion parses");
    // The handle, its impl, and one compile-time check per helper call.
    assert_eq!(file.items.len(), 3);
    let text = out.to_string();
    for needle in [
        "wrapping_mul",
        "wrapping_shl",
        "wrapping_sub",
        "k_div",
        "k_rem",
        "check_step",
        ". rev ()",
        "use helper as __spoc_r0",
        "type __spoc_x0 = < __spoc_r0 as :: spoc :: __private :: InstanceAt < { :: spoc :: __private :: pick_instance (__spoc_r0 :: INSTANCES , & [2u8 , 2u8]) } >> :: T",
        "type __spoc_h0 = < () as __SpocPick < 0usize , { __spoc_x0 :: IS_DEVICE && __spoc_x0 :: OK && (__spoc_x0 :: PARAM_TAGS . len () == 1usize && __spoc_x0 :: PARAM_TAGS [0usize] == 2u8 && __spoc_x0 :: RET_TAG == 2u8) } >> :: T",
        "__spoc_h0 :: native (ctx",
        "__spoc_h0 :: HAS_NATIVE",
        "__spoc_h0 :: ir as",
        "(\"helper\" , __spoc_h0 :: NAME)",
        "use helper as __spoc_callee",
        "GlobalRef :: < i32 >",
        "GlobalMut :: < i32 >",
        "scalar :: < i32 >",
        "Launch with `k.launch(&device, grid, block, (n: i32, x: &Buffer<i32>, y: &mut Buffer<i32>))`",
        "pub struct k",
        "let __spoc_r : i32 = __spoc_r ;",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in {text}");
    }
}

#[test]
fn barrier_kernels_run_on_the_simt_scheduler() {
    let item: syn::ItemFn = syn::parse_quote! {
        fn k(y: &mut [f32]) { sync_threads(); y[0] = 1.0; sync_threads(); }
    };
    let l = lower_fn(&item, true).unwrap_or_else(|e| panic!("{:?}", e.messages()));
    let k = handle::kernel_ir("k", &l);
    assert_eq!(k.body[0].kind, StmtKind::Barrier);
    let entry = native_entry::kernel_entry(&k, &paths::helper_paths(&l.helpers))
        .expect("a native entry")
        .to_string();
    // Only the SIMT runner (no row plan), one sync point per barrier.
    assert!(entry.contains("launch . run_simt"), "{entry}");
    assert!(!entry.contains("run_planned"), "{entry}");
    assert!(
        entry.contains("barrier (& mut * __spoc_simt , 0u32)"),
        "{entry}"
    );
    assert!(
        entry.contains("barrier (& mut * __spoc_simt , 1u32)"),
        "{entry}"
    );
}

#[test]
fn device_expansion_parses_and_names_callees_as_written() {
    let item: syn::ItemFn = syn::parse_quote! {
        pub fn outer(x: &[f32], i: usize) -> f32 { super::inner(x[i]) + self::m::other(1.0f32) + plain(2.0f32) }
    };
    let l = lower_fn(&item, false);
    // `super::inner(..)` etc. return unknown types: the `+` makes them floats; unify with f32.
    let l = l.unwrap_or_else(|e| panic!("{:?}", e.messages()));
    let out = device_fn::expand(&item, &l);
    let text = out.to_string();
    let file = syn::parse2::<syn::File>(out).expect("expansion parses");
    // The fn, its companion enum and impl, its `InstanceAt` impl, and one check per call.
    assert_eq!(file.items.len(), 7, "{text}");
    for needle in [
        "pub enum outer { }",
        "impl outer",
        "pub const NAME : & 'static str = \"outer\"",
        "pub const PARAM_TAGS : & 'static [u8] = & [23u8 , 6u8]",
        "pub const RET_TAG : u8 = 7u8",
        "use super :: inner as __spoc_r0",
        "use self :: m :: other as __spoc_r1",
        "__spoc_h0 :: native (ctx",
        "__spoc_h1 :: ir as",
        "__spoc_h2 :: HAS_NATIVE",
        "(\"other\" , __spoc_h1 :: NAME)",
        "impl :: spoc :: intrinsics :: __native :: ReadBuffer < f32 >",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in {text}");
    }
}
