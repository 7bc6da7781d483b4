//! A tiny PTX assembler-side helper: typed virtual registers, labels, instruction lines.
//!
//! Registers come in six classes ([`Class`]); temporaries are numbered (`%f3`) and declared with
//! PTX's range form (`.reg .f32 %f<4>;`), variables get readable names (`%f_acc`, `%r_i_1`)
//! declared one by one. Both kinds live in the same function scope and never collide: a named
//! register always has `_` right after its class prefix.

use spoc_ir::ScalarType;
use std::collections::HashSet;
use std::fmt::Write as _;

/// A register class: one PTX register type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Class {
    /// `.pred` — `bool` values.
    Pred,
    /// `.b16` — `f16` storage values.
    B16,
    /// `.b32` — `i32`/`u32`.
    B32,
    /// `.b64` — `i64`/`u64` and addresses.
    B64,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
}

impl Class {
    pub(crate) const ALL: [Class; 6] = [
        Class::Pred,
        Class::B16,
        Class::B32,
        Class::B64,
        Class::F32,
        Class::F64,
    ];

    fn index(self) -> usize {
        self as usize
    }

    /// The register-name prefix (`%p`, `%rs`, `%r`, `%rd`, `%f`, `%fd`).
    pub(crate) fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "%p",
            Class::B16 => "%rs",
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
        }
    }

    /// The PTX register type (`.pred`, `.b16`, …).
    pub(crate) fn reg_type(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B16 => ".b16",
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
        }
    }

    /// The class that holds a value of scalar type `t`.
    pub(crate) fn of(t: ScalarType) -> Class {
        match t {
            ScalarType::Bool => Class::Pred,
            ScalarType::F16 | ScalarType::BF16 => Class::B16,
            ScalarType::I32 | ScalarType::U32 => Class::B32,
            ScalarType::I64 | ScalarType::U64 => Class::B64,
            ScalarType::F32 => Class::F32,
            ScalarType::F64 => Class::F64,
        }
    }
}

/// An operand: a register or an immediate, with the class of value it holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Opd {
    pub text: String,
    pub class: Class,
    pub imm: bool,
}

impl Opd {
    /// An immediate operand.
    pub(crate) fn imm(text: impl Into<String>, class: Class) -> Opd {
        Opd {
            text: text.into(),
            class,
            imm: true,
        }
    }
}

impl std::fmt::Display for Opd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The PTX immediate for an `f32` of bits `b`.
pub(crate) fn f32_imm(b: u32) -> Opd {
    Opd::imm(format!("0f{b:08X}"), Class::F32)
}

/// The PTX immediate for an `f64` of bits `b`.
pub(crate) fn f64_imm(b: u64) -> Opd {
    Opd::imm(format!("0d{b:016X}"), Class::F64)
}

/// A 32-bit integer immediate.
pub(crate) fn b32_imm(v: i64) -> Opd {
    Opd::imm(v.to_string(), Class::B32)
}

/// A 64-bit integer immediate.
pub(crate) fn b64_imm(v: i128) -> Opd {
    if v > i64::MAX as i128 {
        Opd::imm(format!("0x{:016X}", v as u64), Class::B64)
    } else {
        Opd::imm(v.to_string(), Class::B64)
    }
}

/// The `.f32`/`.f64` float immediate of value `v` in class `c` (F32 or F64).
pub(crate) fn float_imm(c: Class, v: f64) -> Opd {
    match c {
        Class::F32 => f32_imm((v as f32).to_bits()),
        _ => f64_imm(v.to_bits()),
    }
}

/// Instruction lines and the registers and labels they use, for one PTX function.
#[derive(Default)]
pub(crate) struct Asm {
    lines: Vec<String>,
    temps: [u32; 6],
    named: Vec<(Class, String)>,
    taken: HashSet<String>,
    labels: HashSet<String>,
    /// Indentation depth of emitted lines (for `{ … }` call scopes).
    depth: usize,
}

impl Asm {
    pub(crate) fn new() -> Asm {
        Asm::default()
    }

    /// A fresh numbered temporary of class `c`.
    pub(crate) fn tmp(&mut self, c: Class) -> Opd {
        let n = &mut self.temps[c.index()];
        *n += 1;
        Opd {
            text: format!("{}{}", c.prefix(), n),
            class: c,
            imm: false,
        }
    }

    /// A fresh named register of class `c` (`%f_<stem>`, made unique with `_2`, `_3`, …).
    /// `stem` is sanitised to PTX identifier characters.
    pub(crate) fn named(&mut self, c: Class, stem: &str) -> Opd {
        let clean: String = stem
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || ch == '_' || ch == '$' {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        let base = format!("{}_{}", c.prefix(), clean);
        let mut name = base.clone();
        let mut k = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        self.named.push((c, name.clone()));
        Opd {
            text: name,
            class: c,
            imm: false,
        }
    }

    /// A fresh label `$L_<stem>_<n>` (or `$L_<stem>` the first time `stem` is used).
    pub(crate) fn label(&mut self, stem: &str) -> String {
        let mut name = format!("$L_{stem}");
        let mut k = 1;
        while self.labels.contains(&name) {
            name = format!("$L_{stem}_{k}");
            k += 1;
        }
        self.labels.insert(name.clone());
        name
    }

    /// Emits one instruction (without the trailing `;`): a `&str`, a `String` or, cheapest,
    /// `format_args!(…)` (written straight into the line).
    pub(crate) fn ins(&mut self, text: impl std::fmt::Display) {
        let mut s = String::with_capacity(self.depth + 48);
        s.extend(std::iter::repeat_n('\t', self.depth + 1));
        let _ = write!(s, "{text};");
        self.lines.push(s);
    }

    /// The position of the next line, for [`Asm::ins_at`].
    pub(crate) fn mark(&self) -> usize {
        self.lines.len()
    }

    /// Inserts one instruction (without the trailing `;`) at position `at` (from
    /// [`Asm::mark`]) at the function's top indentation: for a value the generator finds it
    /// needs only after the place where it must be computed has been emitted.
    pub(crate) fn ins_at(&mut self, at: usize, text: impl AsRef<str>) {
        self.lines.insert(at, format!("\t{};", text.as_ref()));
    }

    /// Emits a raw line at the current indentation (declarations inside call scopes).
    pub(crate) fn raw(&mut self, text: impl AsRef<str>) {
        let mut s = "\t".repeat(self.depth + 1);
        s.push_str(text.as_ref());
        self.lines.push(s);
    }

    /// Opens a `{` scope.
    pub(crate) fn open(&mut self) {
        self.raw("{");
        self.depth += 1;
    }

    /// Closes a `}` scope.
    pub(crate) fn close(&mut self) {
        self.depth -= 1;
        self.raw("}");
    }

    /// Emits a comment line.
    pub(crate) fn comment(&mut self, text: impl AsRef<str>) {
        for l in text.as_ref().lines() {
            let mut s = String::with_capacity(self.depth + 4 + l.len());
            s.extend(std::iter::repeat_n('\t', self.depth + 1));
            s.push_str("// ");
            s.push_str(l);
            let trimmed = s.trim_end().len();
            s.truncate(trimmed);
            self.lines.push(s);
        }
    }

    /// Places label `l` here.
    pub(crate) fn put(&mut self, l: &str) {
        self.lines.push(format!("{l}:"));
    }

    /// `bra l` (unconditional).
    pub(crate) fn bra(&mut self, l: &str) {
        self.ins(format_args!("bra {l}"));
    }

    /// `@p bra l` (or `@!p bra l` when `when` is false).
    pub(crate) fn bra_if(&mut self, p: &Opd, when: bool, l: &str) {
        let bang = if when { "" } else { "!" };
        self.ins(format_args!("@{bang}{p} bra {l}"));
    }

    /// `d = op a` into a fresh temporary of class `c`.
    pub(crate) fn un(&mut self, op: &str, c: Class, a: &Opd) -> Opd {
        let d = self.tmp(c);
        self.ins(format_args!("{op} {d}, {a}"));
        d
    }

    /// `d = op a, b` into a fresh temporary of class `c`.
    pub(crate) fn bin(&mut self, op: &str, c: Class, a: &Opd, b: &Opd) -> Opd {
        let d = self.tmp(c);
        self.ins(format_args!("{op} {d}, {a}, {b}"));
        d
    }

    /// `d = op a, b, c` into a fresh temporary of class `cl`.
    pub(crate) fn tri(&mut self, op: &str, cl: Class, a: &Opd, b: &Opd, c: &Opd) -> Opd {
        let d = self.tmp(cl);
        self.ins(format_args!("{op} {d}, {a}, {b}, {c}"));
        d
    }

    /// `mov` of `src` into the existing register `dst` (nothing if they are the same).
    pub(crate) fn mov_to(&mut self, dst: &Opd, src: &Opd) {
        if dst.text != src.text {
            self.ins(format_args!("mov{} {dst}, {src}", mov_type(dst.class)));
        }
    }

    /// `src` in a register: immediates are moved into a fresh temporary.
    pub(crate) fn reg(&mut self, src: &Opd) -> Opd {
        if !src.imm {
            return src.clone();
        }
        let d = self.tmp(src.class);
        self.mov_to(&d, src);
        d
    }

    /// A copy of `src` in a fresh temporary.
    pub(crate) fn copy(&mut self, src: &Opd) -> Opd {
        let d = self.tmp(src.class);
        self.mov_to(&d, src);
        d
    }

    /// The register declarations: numbered ranges first, then named registers by class.
    pub(crate) fn decls(&self, indent: &str) -> String {
        let mut s = String::new();
        for c in Class::ALL {
            let n = self.temps[c.index()];
            if n > 0 {
                let _ = writeln!(
                    s,
                    "{indent}.reg {} {}<{}>;",
                    c.reg_type(),
                    c.prefix(),
                    n + 1
                );
            }
        }
        for c in Class::ALL {
            let names: Vec<&str> = self
                .named
                .iter()
                .filter(|(k, _)| *k == c)
                .map(|(_, n)| n.as_str())
                .collect();
            for chunk in names.chunks(6) {
                let _ = writeln!(s, "{indent}.reg {} {};", c.reg_type(), chunk.join(", "));
            }
        }
        s
    }

    /// The instruction lines, one per line.
    pub(crate) fn body(&self) -> String {
        let mut s = String::new();
        self.write_body(&mut s);
        s
    }

    /// Appends [`Asm::body`] to `out`, reserving its length first.
    pub(crate) fn write_body(&self, out: &mut String) {
        out.reserve(self.lines.iter().map(|l| l.len() + 1).sum());
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
    }
}

/// The type suffix of a `mov` for class `c`.
pub(crate) fn mov_type(c: Class) -> &'static str {
    // A register's declared type is the type its moves take.
    c.reg_type()
}

/// The PTX instruction type of scalar type `t` for arithmetic and comparisons (`.s32`, `.u64`,
/// `.f32`, …; `bool` is `.pred`, `f16` is `.f16`).
pub(crate) fn ptx_type(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => ".pred",
        ScalarType::I32 => ".s32",
        ScalarType::I64 => ".s64",
        ScalarType::U32 => ".u32",
        ScalarType::U64 => ".u64",
        ScalarType::F16 => ".f16",
        ScalarType::BF16 => ".bf16",
        ScalarType::F32 => ".f32",
        ScalarType::F64 => ".f64",
    }
}

/// The bit type of the same width as `t` (`.b32`, `.b64`, …).
pub(crate) fn bit_type(t: ScalarType) -> &'static str {
    match t.size_bytes() {
        1 => ".b8",
        2 => ".b16",
        4 => ".b32",
        _ => ".b64",
    }
}
