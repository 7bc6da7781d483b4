//! State shared by the whole translation unit: the dialect, type names, the prelude helpers and
//! constructors used so far, and the OpenCL extensions the code needs.

use super::dialect::{Dialect, Storage, BUILTINS};
use crate::names::is_reserved;
use crate::{Capabilities, CodegenError, Target};
use spoc_ir::{Const, Kernel, MemSpace, ScalarType, Type};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// OpenCL extensions a kernel needs (each becomes `#pragma OPENCL EXTENSION … : enable`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Extensions {
    pub fp64: bool,
    pub int64_base_atomics: bool,
    pub int64_extended_atomics: bool,
    pub subgroups: bool,
    pub subgroup_shuffle: bool,
    pub subgroup_shuffle_relative: bool,
    pub subgroup_ballot: bool,
}

/// A constructor function the code calls (`spoc_make_<Type>(…)`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Ctor {
    Record(String),
    /// Variant name, case index.
    Variant(String, usize),
    /// Scalar-type index (in `ScalarType::ALL`), lanes.
    Vector(usize, u8),
}

/// Translation-unit state.
pub(crate) struct Ctx<'k> {
    pub d: Dialect,
    pub target: Target,
    pub kernel: &'k Kernel,
    pub caps: &'k Capabilities,
    /// C identifiers of record and variant types, by IR name.
    type_idents: HashMap<String, String>,
    /// Prelude helper functions used, by name (sorted, so the output is deterministic).
    pub helpers: BTreeMap<String, String>,
    /// Constructors used.
    pub ctors: BTreeSet<Ctor>,
    /// Vector types used (`ScalarType::ALL` index, lanes).
    pub vectors: BTreeSet<(usize, u8)>,
    pub ext: Extensions,
    /// Helpers whose calls may write memory ([`super::scan::impure_functions`]).
    pub impure: std::collections::HashSet<String>,
    /// Checked mode ([`crate::Options::checked`]).
    pub checked: bool,
}

/// A field or union-member identifier: the source name unless a C-family language reserves it.
pub(crate) fn field_ident(name: &str) -> String {
    if is_reserved(name) {
        format!("f_{name}")
    } else {
        name.to_string()
    }
}

fn scalar_index(t: ScalarType) -> usize {
    ScalarType::ALL
        .iter()
        .position(|s| *s == t)
        .expect("ScalarType::ALL lists every scalar type")
}

impl<'k> Ctx<'k> {
    pub(crate) fn new(
        d: Dialect,
        target: Target,
        kernel: &'k Kernel,
        caps: &'k Capabilities,
    ) -> Ctx<'k> {
        let mut type_idents = HashMap::new();
        let names = kernel
            .records
            .iter()
            .map(|r| &r.name)
            .chain(kernel.variants.iter().map(|v| &v.name));
        for n in names {
            let ident =
                if is_reserved(n) || BUILTINS.contains(&n.as_str()) || n.starts_with("spoc_") {
                    format!("T_{n}")
                } else {
                    n.clone()
                };
            type_idents.insert(n.clone(), ident);
        }
        Ctx {
            d,
            target,
            kernel,
            caps,
            type_idents,
            helpers: BTreeMap::new(),
            ctors: BTreeSet::new(),
            vectors: BTreeSet::new(),
            ext: Extensions::default(),
            impure: super::scan::impure_functions(kernel),
            checked: false,
        }
    }

    /// An [`CodegenError::Unsupported`] for `node`, which needs `capability`.
    pub(crate) fn unsupported(&self, node: impl Into<String>, capability: &str) -> CodegenError {
        CodegenError::Unsupported {
            kernel: self.kernel.name.clone(),
            target: self.target.backend_name(),
            node: node.into(),
            capability: capability.to_string(),
        }
    }

    /// Records that prelude helper `name` is used; `text` builds its definition.
    pub(crate) fn helper(&mut self, name: &str, text: impl FnOnce(Dialect) -> String) {
        if !self.helpers.contains_key(name) {
            let t = text(self.d);
            self.helpers.insert(name.to_string(), t);
        }
    }

    /// The C identifier of record or variant type `name`.
    pub(crate) fn type_ident(&self, name: &str) -> String {
        self.type_idents
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    /// The name of a vector type (`spoc_f32x4`).
    pub(crate) fn vector_ident(elem: ScalarType, lanes: u8) -> String {
        format!("spoc_{}x{lanes}", elem.rust_name())
    }

    /// The spelling of a value type (not an array); `void` for `()`.
    pub(crate) fn ty(&mut self, ty: &Type, storage: Storage) -> String {
        match ty {
            // A validated kernel has no pending types.
            Type::Unit | Type::Pending(_) => "void".into(),
            Type::Scalar(s) => self.d.scalar(*s, storage).into(),
            Type::Record(n) | Type::Variant(n) => self.type_ident(n),
            Type::Vector { elem, lanes } => {
                self.vectors.insert((scalar_index(*elem), *lanes));
                Ctx::vector_ident(*elem, *lanes)
            }
            Type::Array { elem, .. } => format!("{}*", self.ty(elem, storage)),
        }
    }

    /// A declaration of `ident` with type `ty`: `float x`, or `float a[4][8]` for local arrays.
    pub(crate) fn decl(&mut self, ty: &Type, ident: &str, storage: Storage) -> String {
        let mut dims = String::new();
        let mut t = ty;
        while let Type::Array {
            elem,
            len: Some(n),
            space: MemSpace::Local,
        } = t
        {
            dims.push_str(&format!("[{n}]"));
            t = elem;
        }
        format!("{} {ident}{dims}", self.ty(t, storage))
    }

    /// A pointer to elements `elem` in `space` (`__global const float*`).
    pub(crate) fn pointer(&mut self, elem: &Type, space: MemSpace, mutable: bool) -> String {
        let qual = match space {
            MemSpace::Global => self.d.global_space(),
            MemSpace::Shared => self.d.shared_space(),
            MemSpace::Local => "",
        };
        let c = if mutable { "" } else { "const " };
        let e = self.ty(elem, storage_of(space));
        format!("{qual}{c}{e}*")
    }

    /// The literal of constant `c`, and whether it is a single token (else it is a unary minus
    /// or a parenthesised expression).
    pub(crate) fn literal(&self, c: Const) -> (String, bool) {
        let cl = self.d.is_opencl();
        let neg = |s: String| {
            let simple = !s.starts_with('-');
            (s, simple)
        };
        match c {
            Const::Bool(b) => (b.to_string(), true),
            Const::I32(i32::MIN) => ("(-2147483647 - 1)".into(), true),
            Const::I32(v) => neg(v.to_string()),
            Const::I64(i64::MIN) => (
                if cl {
                    "(-9223372036854775807L - 1L)".into()
                } else {
                    "(-9223372036854775807LL - 1LL)".into()
                },
                true,
            ),
            Const::I64(v) => neg(format!("{v}{}", if cl { "L" } else { "LL" })),
            Const::U32(v) => (u32_literal(v), true),
            Const::U64(v) => (format!("{v}{}", if cl { "ul" } else { "ull" }), true),
            Const::F16(bits) | Const::BF16(bits) => (
                format!(
                    "(({})0x{bits:04x}u)",
                    self.d.scalar(ScalarType::F16, Storage::Value)
                ),
                true,
            ),
            Const::F32(bits) => {
                let v = f32::from_bits(bits);
                if v.is_finite() {
                    neg(format!("{v:?}f"))
                } else {
                    (format!("{}(0x{bits:08x}u)", self.d.f32_from_bits()), true)
                }
            }
            Const::F64(bits) => {
                let v = f64::from_bits(bits);
                if v.is_finite() {
                    neg(format!("{v:?}"))
                } else {
                    let u = if cl {
                        format!("0x{bits:016x}ul")
                    } else {
                        format!("0x{bits:016x}ull")
                    };
                    (self.d.f64_from_bits(&u), true)
                }
            }
        }
    }

    /// The name of the constructor of record `name`, recording its use.
    pub(crate) fn record_ctor(&mut self, name: &str) -> String {
        self.ctors.insert(Ctor::Record(name.to_string()));
        format!("spoc_make_{}", self.type_ident(name))
    }

    /// The position (tag) of case `case` of variant `name`; 0 if either is unknown (the
    /// validator rejects that).
    pub(crate) fn case_index(&self, name: &str, case: &str) -> usize {
        self.kernel
            .variant(name)
            .and_then(|v| v.case_index(case))
            .unwrap_or(0)
    }

    /// The name of the constructor of case `case` of variant `name`, recording its use.
    pub(crate) fn variant_ctor(&mut self, name: &str, case: usize) -> String {
        self.ctors.insert(Ctor::Variant(name.to_string(), case));
        self.variant_ctor_name(name, case)
    }

    fn variant_ctor_name(&self, name: &str, case: usize) -> String {
        let case_name = self
            .kernel
            .variant(name)
            .and_then(|v| v.cases.get(case))
            .map_or("case", |c| c.name.as_str());
        format!("spoc_make_{}_{case}_{case_name}", self.type_ident(name))
    }

    /// The name of the constructor of a vector type, recording its use.
    pub(crate) fn vector_ctor(&mut self, elem: ScalarType, lanes: u8) -> String {
        self.vectors.insert((scalar_index(elem), lanes));
        self.ctors.insert(Ctor::Vector(scalar_index(elem), lanes));
        format!("spoc_make_{}x{lanes}", elem.rust_name())
    }

    /// Typedefs of the vector, record and variant types (records in dependency order), then the
    /// constructors used.
    pub(crate) fn type_section(&mut self) -> String {
        let mut out = String::new();
        // Records and variants first (they may register vector types), vectors before them.
        let mut body = String::new();
        for i in self.record_order() {
            let r = &self.kernel.records[i];
            body.push_str("typedef struct {\n");
            for f in &r.fields {
                let d = self.decl(&f.ty, &field_ident(&f.name), Storage::Memory);
                body.push_str(&format!("    {d};\n"));
            }
            body.push_str(&format!("}} {};\n\n", self.type_ident(&r.name)));
        }
        for v in &self.kernel.variants {
            body.push_str("typedef struct {\n    unsigned int tag;\n");
            let with_payload: Vec<_> = v.cases.iter().filter(|c| !c.payload.is_empty()).collect();
            if !with_payload.is_empty() {
                body.push_str("    union {\n");
                for c in with_payload {
                    let fields: Vec<String> = c
                        .payload
                        .iter()
                        .enumerate()
                        .map(|(k, t)| self.decl(t, &format!("p{k}"), Storage::Memory) + ";")
                        .collect();
                    body.push_str(&format!(
                        "        struct {{ {} }} {};\n",
                        fields.join(" "),
                        field_ident(&c.name)
                    ));
                }
                body.push_str("    } data;\n");
            }
            body.push_str(&format!("}} {};\n\n", self.type_ident(&v.name)));
        }
        let ctors = self.ctor_section();
        for &(s, lanes) in &self.vectors {
            let elem = ScalarType::ALL[s];
            let t = self.d.scalar(elem, Storage::Memory);
            let fields: Vec<String> = spoc_ir::LANE_NAMES[..lanes as usize]
                .iter()
                .map(|l| format!("{t} {l};"))
                .collect();
            // 2 and 4 lanes are aligned to the whole vector, as `spoc_ir::layout` lays them out
            // (CUDA's `float4`, OpenCL's `float4`), so that a whole-vector copy is one vector
            // load or store (`ld.global.v4.f32`); NVRTC, hipRTC (clang) and OpenCL C all take
            // the GNU attribute. 3 lanes keep the lane's alignment.
            let align = if lanes.is_power_of_two() {
                format!(
                    " __attribute__((aligned({})))",
                    elem.size_bytes() * usize::from(lanes)
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "typedef struct{align} {{ {} }} {};\n",
                fields.join(" "),
                Ctx::vector_ident(elem, lanes)
            ));
        }
        if !self.vectors.is_empty() {
            out.push('\n');
        }
        out.push_str(&body);
        out.push_str(&ctors);
        out
    }

    /// Records in an order where every record comes after the records it contains.
    fn record_order(&self) -> Vec<usize> {
        fn visit(k: &Kernel, i: usize, done: &mut Vec<bool>, out: &mut Vec<usize>) {
            if done[i] {
                return;
            }
            done[i] = true;
            for f in &k.records[i].fields {
                if let Type::Record(n) = &f.ty {
                    if let Some(j) = k.records.iter().position(|r| &r.name == n) {
                        visit(k, j, done, out);
                    }
                }
            }
            out.push(i);
        }
        let mut done = vec![false; self.kernel.records.len()];
        let mut out = Vec::new();
        for i in 0..self.kernel.records.len() {
            visit(self.kernel, i, &mut done, &mut out);
        }
        out
    }

    fn ctor_section(&mut self) -> String {
        let mut out = String::new();
        let q = self.d.device_fn();
        let ctors: Vec<Ctor> = self.ctors.iter().cloned().collect();
        for c in ctors {
            match c {
                Ctor::Record(name) => {
                    let Some(r) = self.kernel.record(&name) else {
                        continue;
                    };
                    let t = self.type_ident(&name);
                    let params: Vec<String> = r
                        .fields
                        .iter()
                        .map(|f| self.decl(&f.ty, &field_ident(&f.name), Storage::Value))
                        .collect();
                    out.push_str(&format!(
                        "{q} inline {t} spoc_make_{t}({}) {{\n    {t} r;\n",
                        params.join(", ")
                    ));
                    for f in &r.fields {
                        let fi = field_ident(&f.name);
                        out.push_str(&format!("    r.{fi} = {fi};\n"));
                    }
                    out.push_str("    return r;\n}\n\n");
                }
                Ctor::Variant(name, case) => {
                    let Some(v) = self.kernel.variant(&name) else {
                        continue;
                    };
                    let Some(c) = v.cases.get(case) else { continue };
                    let t = self.type_ident(&name);
                    let params: Vec<String> = c
                        .payload
                        .iter()
                        .enumerate()
                        .map(|(k, ty)| self.decl(ty, &format!("p{k}"), Storage::Value))
                        .collect();
                    let params = if params.is_empty() {
                        "void".to_string()
                    } else {
                        params.join(", ")
                    };
                    out.push_str(&format!(
                        "{q} inline {t} {}({params}) {{\n    {t} r;\n    r.tag = {case}u;\n",
                        self.variant_ctor_name(&name, case)
                    ));
                    let member = field_ident(&c.name);
                    for k in 0..c.payload.len() {
                        out.push_str(&format!("    r.data.{member}.p{k} = p{k};\n"));
                    }
                    out.push_str("    return r;\n}\n\n");
                }
                Ctor::Vector(s, lanes) => {
                    let elem = ScalarType::ALL[s];
                    let t = Ctx::vector_ident(elem, lanes);
                    let lane_names = &spoc_ir::LANE_NAMES[..lanes as usize];
                    let et = self.d.scalar(elem, Storage::Value);
                    let params: Vec<String> =
                        lane_names.iter().map(|l| format!("{et} {l}")).collect();
                    out.push_str(&format!(
                        "{q} inline {t} spoc_make_{}x{lanes}({}) {{\n    {t} r;\n",
                        elem.rust_name(),
                        params.join(", ")
                    ));
                    for l in lane_names {
                        out.push_str(&format!("    r.{l} = {l};\n"));
                    }
                    out.push_str("    return r;\n}\n\n");
                }
            }
        }
        out
    }
}

/// The literal of `u32` constant `v` (`42u`), written without the formatting machinery: the
/// unrolled kernels hold thousands.
fn u32_literal(v: u32) -> String {
    let mut s = String::with_capacity(11);
    crate::names::write_decimal(&mut s, v);
    s.push('u');
    s
}

/// The storage of elements in memory space `space`.
pub(crate) fn storage_of(space: MemSpace) -> Storage {
    match space {
        MemSpace::Global | MemSpace::Shared => Storage::Memory,
        MemSpace::Local => Storage::Value,
    }
}
