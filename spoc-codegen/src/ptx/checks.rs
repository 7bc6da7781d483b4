//! Checked mode ([`crate::checked`]) in PTX: the fault record's parameter, the
//! `spoc_record_fault` function, and the calls that record a fault.
//!
//! Every element access tests its index against the array's length (`setp.lt.u32`) and the
//! access itself is predicated on the test (`@%p ld` / `@%p st` / `@%p atom`; a load's register
//! is zeroed first), so a failing test touches no memory. A failing test branches to a call of
//! `spoc_record_fault`, which claims the record with `atom.global.cas.b32` (PTX ISA §9.7.13.4)
//! and writes the rest with plain stores. Integer divisions test their divisor, and a counted
//! loop its step, the same way.

use super::asm::{Class, Opd};
use super::gen::Gen;
use crate::checked;
use std::fmt::Write as _;

/// The `.param` name of the fault record (a global address) in the entry's parameter list.
pub(crate) const PARAM: &str = "spoc_fault";

/// The name of the recording function.
const FUNC: &str = "spoc_record_fault";

/// The PTX text of `spoc_record_fault(rec, code, array, index, len, line, column, function)`.
pub(crate) fn record_function() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        ".func {FUNC}(.param .u64 rec, .param .u32 code, .param .u32 array, .param .u32 index, \
         .param .u32 len, .param .u32 line, .param .u32 column, .param .u32 function)"
    );
    s.push_str("{\n\t.reg .pred %p<2>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<2>;\n");
    s.push_str("\tld.param.u64 %rd1, [rec];\n\tld.param.u32 %r1, [code];\n");
    s.push_str("\tatom.global.cas.b32 %r2, [%rd1], 0, %r1;\n");
    s.push_str("\tsetp.ne.u32 %p1, %r2, 0;\n\t@%p1 bra $L_recorded;\n");
    let words = [
        ("array", checked::W_ARRAY),
        ("index", checked::W_INDEX),
        ("len", checked::W_LEN),
        ("line", checked::W_LINE),
        ("column", checked::W_COLUMN),
        ("function", checked::W_FUNCTION),
    ];
    for (k, (p, w)) in words.iter().enumerate() {
        let r = 3 + k;
        let _ = writeln!(s, "\tld.param.u32 %r{r}, [{p}];");
        let _ = writeln!(s, "\tst.global.u32 [%rd1+{}], %r{r};", 4 * w);
    }
    let specials = [
        ("%tid.x", checked::W_THREAD),
        ("%tid.y", checked::W_THREAD + 1),
        ("%tid.z", checked::W_THREAD + 2),
        ("%ctaid.x", checked::W_BLOCK),
        ("%ctaid.y", checked::W_BLOCK + 1),
        ("%ctaid.z", checked::W_BLOCK + 2),
    ];
    for (k, (sr, w)) in specials.iter().enumerate() {
        let r = 9 + k;
        let _ = writeln!(s, "\tmov.u32 %r{r}, {sr};");
        let _ = writeln!(s, "\tst.global.u32 [%rd1+{}], %r{r};", 4 * w);
    }
    s.push_str("$L_recorded:\n\tret;\n}\n");
    s
}

impl Gen<'_, '_> {
    /// Unless `ok` holds, records fault `code` for `array` at `index` of `len` (registers or
    /// immediates of `u32`), at the current statement. Nothing outside checked mode.
    pub(crate) fn fault_unless(&mut self, ok: &Opd, code: u32, array: u32, index: &Opd, len: &Opd) {
        let Some(rec) = self.fault.clone() else {
            return;
        };
        let skip = self.a.label("checked");
        self.a.bra_if(ok, true, &skip);
        let (line, col) = self.loc;
        let func = self.func_index();
        self.a.open();
        let names = [
            "rec", "code", "array", "index", "len", "line", "column", "function",
        ];
        for (k, n) in names.iter().enumerate() {
            let ty = if k == 0 { ".u64" } else { ".u32" };
            self.a.raw(format!(".param {ty} fa_{n};"));
        }
        let index = self.a.reg(index);
        let len = self.a.reg(len);
        let values = [
            rec.text.to_string(),
            code.to_string(),
            array.to_string(),
            index.text.to_string(),
            len.text.to_string(),
            line.to_string(),
            col.to_string(),
            func.to_string(),
        ];
        for (k, (n, v)) in names.iter().zip(&values).enumerate() {
            let ty = if k == 0 { ".u64" } else { ".u32" };
            self.a.ins(format_args!("st.param{ty} [fa_{n}], {v}"));
        }
        let args: Vec<String> = names.iter().map(|n| format!("fa_{n}")).collect();
        self.a
            .ins(format_args!("call {FUNC}, ({})", args.join(", ")));
        self.a.close();
        self.a.put(&skip);
    }

    /// Unless `ok` holds, records fault `code` that concerns no array.
    pub(crate) fn fault_unless_plain(&mut self, ok: &Opd, code: u32) {
        let zero = Opd::imm("0", Class::B32);
        self.fault_unless(ok, code, checked::NO_ARRAY, &zero, &zero);
    }

    /// The index of the function being emitted ([`checked::array_id`]'s numbering): 0 for the
    /// kernel, `k + 1` for its helper `k` (inlined here).
    pub(crate) fn func_index(&self) -> usize {
        match self.frame().func {
            None => 0,
            Some(f) => self
                .cx
                .kernel
                .functions
                .iter()
                .position(|g| g.name == f.name)
                .map_or(0, |k| k + 1),
        }
    }
}
