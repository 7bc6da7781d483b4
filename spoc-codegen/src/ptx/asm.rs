//! A tiny PTX assembler-side helper: typed virtual registers, labels, instruction lines.
//!
//! Registers come in six classes ([`Class`]); temporaries are numbered (`%f3`) and declared with
//! PTX's range form (`.reg .f32 %f<4>;`), variables get readable names (`%f_acc`, `%r_i_1`)
//! declared one by one. Both kinds live in the same function scope and never collide: a named
//! register always has `_` right after its class prefix.

use spoc_ir::ScalarType;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

/// The hasher of the generator's sets of names (std's SipHash costs more than the rest of a
/// lookup).
type FastHash = foldhash::fast::FixedState;

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
    pub text: Text,
    pub class: Class,
    pub imm: bool,
}

impl Opd {
    /// An immediate operand.
    pub(crate) fn imm(text: impl Into<Text>, class: Class) -> Opd {
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

/// The text of an operand: kept inline up to [`Text::INLINE`] bytes (every temporary, every
/// immediate, most variables' registers), in a shared allocation beyond. Operands are cloned
/// at every use of a variable, so a clone copies 24 bytes and allocates nothing.
#[derive(Clone)]
pub(crate) struct Text(Repr);

#[derive(Clone)]
enum Repr {
    /// `buf[..len]`, always UTF-8 (only whole `&str`s are ever copied in).
    Inline {
        len: u8,
        buf: [u8; Text::INLINE],
    },
    Shared(Rc<str>),
}

impl Text {
    /// The longest text kept inline.
    const INLINE: usize = 22;

    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, buf } => {
                let bytes = &buf[..usize::from(*len)];
                // SAFETY: `buf[..len]` is only ever written from whole `&str`s (`write_str`),
                // so it is valid UTF-8.
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Shared(s) => s,
        }
    }
}

impl Default for Text {
    fn default() -> Text {
        Text(Repr::Inline {
            len: 0,
            buf: [0; Text::INLINE],
        })
    }
}

impl std::fmt::Write for Text {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        match &mut self.0 {
            Repr::Inline { len, buf } if usize::from(*len) + s.len() <= Text::INLINE => {
                let at = usize::from(*len);
                buf[at..at + s.len()].copy_from_slice(s.as_bytes());
                *len += s.len() as u8;
            }
            _ => {
                let mut long = String::with_capacity(self.as_str().len() + s.len());
                long.push_str(self.as_str());
                long.push_str(s);
                self.0 = Repr::Shared(long.into());
            }
        }
        Ok(())
    }

    fn write_char(&mut self, c: char) -> std::fmt::Result {
        match &mut self.0 {
            Repr::Inline { len, buf } if c.is_ascii() && usize::from(*len) < Text::INLINE => {
                buf[usize::from(*len)] = c as u8;
                *len += 1;
                Ok(())
            }
            _ => self.write_str(c.encode_utf8(&mut [0; 4])),
        }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        let mut t = Text::default();
        let _ = t.write_str(s);
        t
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text::from(s.as_str())
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text {}

impl std::hash::Hash for Text {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The PTX immediate for an `f32` of bits `b`.
pub(crate) fn f32_imm(b: u32) -> Opd {
    let mut t = Text::default();
    let _ = write!(t, "0f{b:08X}");
    Opd::imm(t, Class::F32)
}

/// The PTX immediate for an `f64` of bits `b`.
pub(crate) fn f64_imm(b: u64) -> Opd {
    let mut t = Text::default();
    let _ = write!(t, "0d{b:016X}");
    Opd::imm(t, Class::F64)
}

/// A 32-bit integer immediate.
pub(crate) fn b32_imm(v: i64) -> Opd {
    let mut t = Text::default();
    let _ = write!(t, "{v}");
    Opd::imm(t, Class::B32)
}

/// A 64-bit integer immediate.
pub(crate) fn b64_imm(v: i128) -> Opd {
    if v > i64::MAX as i128 {
        let mut t = Text::default();
        let _ = write!(t, "0x{:016X}", v as u64);
        Opd::imm(t, Class::B64)
    } else {
        let mut t = Text::default();
        let _ = write!(t, "{v}");
        Opd::imm(t, Class::B64)
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
    /// The instruction lines, each ended by `\n`, written in place (one buffer, not a
    /// `String` per line: the unrolled SGEMM has some ten thousand).
    lines: String,
    temps: [u32; 6],
    named: Vec<(Class, Text)>,
    taken: HashSet<String, FastHash>,
    labels: HashSet<String, FastHash>,
    /// Per label stem, the suffix [`Asm::label`] tries next.
    label_next: HashMap<String, u32, FastHash>,
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
        let mut text = Text::from(c.prefix());
        crate::names::write_decimal(&mut text, *n);
        Opd {
            text,
            class: c,
            imm: false,
        }
    }

    /// A fresh named register of class `c` (`%f_<stem>`, made unique with `_2`, `_3`, …).
    /// `stem` is sanitised to PTX identifier characters.
    pub(crate) fn named(&mut self, c: Class, stem: &str) -> Opd {
        let mut name = String::with_capacity(c.prefix().len() + 1 + stem.len());
        name.push_str(c.prefix());
        name.push('_');
        name.extend(stem.chars().map(|ch| {
            if ch.is_ascii_alphanumeric() || ch == '_' || ch == '$' {
                ch
            } else {
                '_'
            }
        }));
        if self.taken.contains(&name) {
            let base = name;
            let mut k = 2;
            name = format!("{base}_{k}");
            while self.taken.contains(&name) {
                k += 1;
                name = format!("{base}_{k}");
            }
        }
        let text = Text::from(name.as_str());
        self.named.push((c, text.clone()));
        self.taken.insert(name);
        Opd {
            text,
            class: c,
            imm: false,
        }
    }

    /// A fresh label `$L_<stem>_<n>` (or `$L_<stem>` the first time `stem` is used).
    pub(crate) fn label(&mut self, stem: &str) -> String {
        let mut name = format!("$L_{stem}");
        if self.labels.contains(&name) {
            // The first free suffix: those below the last one given for `stem` are taken (the
            // set only grows), so the search starts there.
            let k = self.label_next.entry(stem.to_string()).or_insert(1);
            loop {
                name.truncate(3 + stem.len());
                let _ = write!(name, "_{k}");
                *k += 1;
                if !self.labels.contains(&name) {
                    break;
                }
            }
        }
        self.labels.insert(name.clone());
        name
    }

    /// Starts a line at the current indentation.
    fn indent(&mut self) {
        self.lines.extend(std::iter::repeat_n('\t', self.depth + 1));
    }

    /// Emits one instruction (without the trailing `;`): a `&str`, a `String` or, cheapest,
    /// `format_args!(…)` (written straight into the body).
    pub(crate) fn ins(&mut self, text: impl std::fmt::Display) {
        self.indent();
        let _ = writeln!(self.lines, "{text};");
    }

    /// The position of the next line, for [`Asm::ins_at`].
    pub(crate) fn mark(&self) -> usize {
        self.lines.len()
    }

    /// Inserts one instruction (without the trailing `;`) at position `at` (from
    /// [`Asm::mark`]) at the function's top indentation: for a value the generator finds it
    /// needs only after the place where it must be computed has been emitted.
    pub(crate) fn ins_at(&mut self, at: usize, text: impl AsRef<str>) {
        self.lines
            .insert_str(at, &format!("\t{};\n", text.as_ref()));
    }

    /// Emits a raw line at the current indentation (declarations inside call scopes).
    pub(crate) fn raw(&mut self, text: impl AsRef<str>) {
        self.indent();
        self.lines.push_str(text.as_ref());
        self.lines.push('\n');
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
            // `// ` and the line with its trailing blanks trimmed; `//` alone for a blank line.
            let l = l.trim_end();
            self.indent();
            self.lines.push_str(if l.is_empty() { "//" } else { "// " });
            self.lines.push_str(l);
            self.lines.push('\n');
        }
    }

    /// Places label `l` here.
    pub(crate) fn put(&mut self, l: &str) {
        self.lines.push_str(l);
        self.lines.push_str(":\n");
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
    pub(crate) fn un(&mut self, op: impl OpName, c: Class, a: &Opd) -> Opd {
        let d = self.tmp(c);
        self.op(op, &[&d, a]);
        d
    }

    /// `d = op a, b` into a fresh temporary of class `c`.
    pub(crate) fn bin(&mut self, op: impl OpName, c: Class, a: &Opd, b: &Opd) -> Opd {
        let d = self.tmp(c);
        self.op(op, &[&d, a, b]);
        d
    }

    /// `d = op a, b, c` into a fresh temporary of class `cl`.
    pub(crate) fn tri(&mut self, op: impl OpName, cl: Class, a: &Opd, b: &Opd, c: &Opd) -> Opd {
        let d = self.tmp(cl);
        self.op(op, &[&d, a, b, c]);
        d
    }

    /// Emits `op o0, o1, …;`, the operands copied in as they are (no formatting machinery
    /// per operand: these are most of a kernel's lines).
    fn op(&mut self, op: impl OpName, operands: &[&Opd]) {
        self.indent();
        op.write_to(&mut self.lines);
        let mut sep = " ";
        for o in operands {
            self.lines.push_str(sep);
            self.lines.push_str(&o.text);
            sep = ", ";
        }
        self.lines.push_str(";\n");
    }

    /// `mov` of `src` into the existing register `dst` (nothing if they are the same).
    pub(crate) fn mov_to(&mut self, dst: &Opd, src: &Opd) {
        if dst.text != src.text {
            self.indent();
            self.lines.push_str("mov");
            self.lines.push_str(mov_type(dst.class));
            self.lines.push(' ');
            self.lines.push_str(&dst.text);
            self.lines.push_str(", ");
            self.lines.push_str(&src.text);
            self.lines.push_str(";\n");
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
        self.lines.clone()
    }

    /// Reserves room for `bytes` more bytes of instruction lines.
    pub(crate) fn reserve(&mut self, bytes: usize) {
        self.lines.reserve(bytes);
    }

    /// The instruction lines, taken out of the assembler (which is left empty).
    pub(crate) fn take_body(&mut self) -> String {
        std::mem::take(&mut self.lines)
    }
}

/// An instruction's name for [`Asm::un`], [`Asm::bin`] and [`Asm::tri`]: a `&str`, a pair of
/// them written one after the other (`("fma.rn", ".f32")`), or `format_args!(…)`.
pub(crate) trait OpName {
    /// Appends the name to `out`.
    fn write_to(&self, out: &mut String);
}

impl OpName for &str {
    fn write_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl OpName for &String {
    fn write_to(&self, out: &mut String) {
        out.push_str(self);
    }
}

impl OpName for (&str, &str) {
    fn write_to(&self, out: &mut String) {
        out.push_str(self.0);
        out.push_str(self.1);
    }
}

impl OpName for std::fmt::Arguments<'_> {
    fn write_to(&self, out: &mut String) {
        match self.as_str() {
            Some(s) => out.push_str(s),
            None => {
                let _ = out.write_fmt(*self);
            }
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
