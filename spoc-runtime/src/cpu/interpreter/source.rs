//! The source files of kernels and helpers, as the code `#[kernel]` and `#[device]` generate
//! records them (`file!()` of the attribute), so that the Interpreter's reports name
//! `file:line:column`.
//!
//! The IR carries each statement's line and column but not its file. The generated IR accessor
//! calls [`__register_kernel_file`] (or [`__register_helper_file`]) once, when the IR is first
//! decoded; the Interpreter looks the file up when it prepares a kernel. Entries are keyed by a
//! fingerprint of the function's statement locations (and, for kernels, its name), which
//! linking (that may rename a helper) leaves unchanged. Two helpers with the same fingerprint in
//! different files (same lines and columns throughout) are ambiguous: their file is unknown.

use spoc_ir::{Function, Kernel, Stmt, StmtKind};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{OnceLock, RwLock};

/// Fingerprint -> file (`None`: registered from two different files).
type Table = RwLock<HashMap<u64, Option<&'static str>>>;

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| RwLock::new(HashMap::new()))
}

/// Feeds the location of every statement of `body` (nested blocks included, in order) to `h`;
/// returns whether any statement has one.
fn hash_locs(body: &[Stmt], h: &mut impl Hasher) -> bool {
    let mut any = false;
    for s in body {
        if let Some(l) = s.loc {
            (l.line, l.column).hash(h);
            any = true;
        } else {
            0u64.hash(h);
        }
        let mut sub = |b: &[Stmt], h: &mut _| {
            1u8.hash(h);
            any |= hash_locs(b, h);
        };
        match &s.kind {
            StmtKind::Block(b) | StmtKind::Pragma { body: b, .. } => sub(b, h),
            StmtKind::If { then, els, .. } => {
                sub(then, h);
                if let Some(e) = els {
                    sub(e, h);
                }
            }
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => sub(body, h),
            StmtKind::Match { arms, .. } => {
                for (_, b) in arms {
                    sub(b, h);
                }
            }
            _ => {}
        }
    }
    any
}

fn kernel_key(kernel: &Kernel) -> Option<u64> {
    let mut h = std::hash::DefaultHasher::new();
    ("kernel", kernel.name.as_str(), kernel.params.len()).hash(&mut h);
    hash_locs(&kernel.body, &mut h).then(|| h.finish())
}

fn helper_key(f: &Function) -> Option<u64> {
    let mut h = std::hash::DefaultHasher::new();
    ("helper", f.params.len()).hash(&mut h);
    hash_locs(&f.body, &mut h).then(|| h.finish())
}

fn register(key: Option<u64>, file: &'static str) {
    let Some(key) = key else { return };
    let mut t = table().write().unwrap_or_else(|e| e.into_inner());
    t.entry(key)
        .and_modify(|f| {
            if *f != Some(file) {
                *f = None;
            }
        })
        .or_insert(Some(file));
}

fn lookup(key: Option<u64>) -> Option<&'static str> {
    let t = table().read().unwrap_or_else(|e| e.into_inner());
    t.get(&key?).copied().flatten()
}

/// Records that `kernel` (as its IR accessor returns it) was written in `file`. Called by the
/// code `#[kernel]` generates; not an API. A kernel without statement locations is ignored.
#[doc(hidden)]
pub fn __register_kernel_file(kernel: &Kernel, file: &'static str) {
    register(kernel_key(kernel), file);
}

/// Records that helper `function` (as its IR accessor returns it) was written in `file`. Called
/// by the code `#[device]` generates; not an API.
#[doc(hidden)]
pub fn __register_helper_file(function: &Function, file: &'static str) {
    register(helper_key(function), file);
}

/// The file `kernel`'s body was registered from.
pub(crate) fn kernel_file(kernel: &Kernel) -> Option<&'static str> {
    lookup(kernel_key(kernel))
}

/// The file helper `f` was registered from.
pub(crate) fn helper_file(f: &Function) -> Option<&'static str> {
    lookup(helper_key(f))
}
