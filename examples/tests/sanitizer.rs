//! Every example program, at its test size, runs clean on the checking Interpreter with every
//! check on (global races included): the programs are correct kernels, so a report here is a
//! false positive of the sanitizer or a bug in a program.

use spoc::interpreter::{set_global_race_check, take_last_report};

#[test]
fn the_example_programs_have_no_report_with_every_check_on() {
    set_global_race_check(true);
    let dev = spoc::init_device(Some("Interpreter")).expect("the Interpreter is always there");
    for p in programs::PROGRAMS {
        let o = (p.run)(&dev, p.test_size).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(o.checked, "{}: {}", p.name, o.verdict());
    }
    assert!(take_last_report().is_none());
}
