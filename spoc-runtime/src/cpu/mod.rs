//! The CPU backends: the SIMT block scheduler they share, Native (the Rust code `#[kernel]`
//! compiles into the program) and the IR Interpreter.

pub mod interpreter;
pub mod native;
pub mod simt;
