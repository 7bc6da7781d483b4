//! `lower_kernel_source`: the attribute's front end run on a string.

use spoc_frontend::lower_kernel_source;

#[test]
fn a_kernel_in_a_string_lowers_to_the_ir_the_attribute_embeds() {
    let k = lower_kernel_source(
        "#[kernel]
         fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
             let i = global_id_x();
             if i < y.len() {
                 y[i] = a * x[i] + y[i];
             }
         }",
    )
    .unwrap();
    assert_eq!(k.name, "saxpy");
    let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "x", "y"]);
    spoc_ir::validate(&k).unwrap();
}

#[test]
fn problems_come_back_with_their_positions() {
    let errs =
        lower_kernel_source("fn k(y: &mut [f32]) {\n    let v = vec![1.0f32];\n}").unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].line, 2, "{errs:?}");
    assert!(errs[0].message.contains("vec!"), "{}", errs[0]);

    let errs = lower_kernel_source("fn k(").unwrap_err();
    assert_eq!(errs.len(), 1);

    let errs = lower_kernel_source("fn k<T: Float>(y: &mut [T]) {}").unwrap_err();
    assert!(errs[0].message.contains("generic"), "{}", errs[0]);
}
