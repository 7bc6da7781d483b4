//! The layering of spoc-runtime's folders (docs/DESIGN.md §5): every `crate::…` path (in `use`
//! trees, in code, in `$crate::…` macro bodies) and every `super::…` path of a module must lead
//! to its own folder or to a folder below it. The layer table is [`LAYERS`]; the upward imports
//! still known are [`KNOWN`] (each with whose work removes it).
//!
//! The test reads the crate's sources next to its manifest: on a machine that has only the built
//! test binary (the GPU machine), it says so and passes without checking anything.
//!
//! What it reads: comments, string and character literals are blanked first; `#[cfg(test)]`
//! modules (inline, or a file declared `#[cfg(test)] mod x;`) are left out, since a unit test may
//! drive the whole runtime from inside any module without the library depending on it. Paths
//! through the crate root's re-exports (`crate::Device`, `crate::backend::…`) are followed to the
//! module they name; a path the test cannot place fails it, so nothing slips through unread.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The folders of `spoc-runtime/src`, bottom first: a module may import from its own folder and
/// from the folders before it in this list, never from a later one (the crate root, `lib.rs`,
/// sits above them all and re-exports).
const LAYERS: &[(&str, &str)] = &[
    (
        "core",
        "backend traits and handles, errors, env, dims, capabilities, caches, kernel ABI",
    ),
    (
        "memory",
        "Device, buffers, records, SoA, kernel arguments and the Executor that takes them, host memory",
    ),
    ("cpu", "the SIMT scheduler, Native, the Interpreter"),
    (
        "backends",
        "CUDA, HIP, OpenCL, Vulkan, source-only; builtin_backends()",
    ),
    ("devices", "the backend registry, device discovery"),
    (
        "launch",
        "compile memo, launches and their checks, SPOC_CHECK, generics",
    ),
];

/// Upward imports that are known and owned by other work: (importing file, imported module).
/// Each is a path prefix as written after `crate::` once re-exports are followed.
const KNOWN: &[(&str, &str, &str)] = &[];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `text` with comments, string literals and character literals replaced by spaces (lengths
/// and line breaks kept).
fn blank_literals(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let prev_ident = i > 0 && ident(b[i - 1]);
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !prev_ident && (b[i] == b'r' || b[i..].starts_with(b"br")) && {
            let k = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[k..].iter().take_while(|&&c| c == b'#').count();
            b.get(k + hashes) == Some(&b'"')
        } {
            let k = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[k..].iter().take_while(|&&c| c == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = k + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p + 1)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// Tokens: identifiers (with a leading `$` kept), `::`, and single punctuation characters.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c.is_alphanumeric() || c == '_' || c == '$' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(text[i..end].to_string());
        } else if c == ':' && chars.peek().map(|&(_, d)| d) == Some(':') {
            chars.next();
            out.push("::".into());
        } else {
            out.push(c.to_string());
        }
    }
    out
}

/// The tokens without `#[cfg(test)]` items (`mod tests { … }` and the like), and the names of
/// modules declared `#[cfg(test)] mod name;` (their files are left out).
fn without_test_items(toks: &[String]) -> (Vec<String>, Vec<String>) {
    let is_cfg_test = |i: usize| {
        toks.get(i..i + 7).is_some_and(|w| {
            w.iter()
                .map(String::as_str)
                .eq(["#", "[", "cfg", "(", "test", ")", "]"])
        })
    };
    let (mut out, mut test_files) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < toks.len() {
        if !is_cfg_test(i) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        // Skip the attribute, then the item up to its `;` or its balanced `{ … }`.
        let mut j = i + 7;
        if toks[j..].first().map(String::as_str) == Some("mod")
            && toks.get(j + 2).map(String::as_str) == Some(";")
        {
            test_files.push(toks[j + 1].clone());
        }
        while j < toks.len() && toks[j] != ";" && toks[j] != "{" {
            j += 1;
        }
        if toks.get(j).map(String::as_str) == Some("{") {
            let mut depth = 0;
            while j < toks.len() {
                match toks[j].as_str() {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        i = j + 1;
    }
    (out, test_files)
}

/// The paths of a `use` tree starting at `toks[*i]`, each with its last segment's local name
/// (the `as` rename, or the segment), prefixed by `prefix`.
fn use_tree(
    toks: &[String],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(*i).map(String::as_str) {
            Some("{") => {
                *i += 1;
                loop {
                    if toks.get(*i).map(String::as_str) == Some("}") {
                        *i += 1;
                        return;
                    }
                    use_tree(toks, i, &path, out);
                    match toks.get(*i).map(String::as_str) {
                        Some(",") => *i += 1,
                        Some("}") => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                }
            }
            Some("*") => {
                *i += 1;
                out.push((path, "*".into()));
                return;
            }
            Some(seg) if seg != "::" && seg != "," && seg != "}" && seg != ";" => {
                path.push(seg.to_string());
                *i += 1;
                if toks.get(*i).map(String::as_str) == Some("::") {
                    *i += 1;
                    continue;
                }
                let mut name = path.last().cloned().unwrap_or_default();
                if toks.get(*i).map(String::as_str) == Some("as") {
                    name = toks[*i + 1].clone();
                    *i += 2;
                }
                if path.last().map(String::as_str) == Some("self") {
                    path.pop();
                    if name == "self" {
                        name = path.last().cloned().unwrap_or_default();
                    }
                }
                out.push((path, name));
                return;
            }
            _ => return,
        }
    }
}

/// Every `use` path and every other `crate::a::b…` / `super::a…` path of `toks`, as written.
fn paths(toks: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].as_str();
        if t == "use" {
            let mut tree = Vec::new();
            i += 1;
            if toks.get(i).map(String::as_str) == Some("::") {
                i += 1;
            }
            use_tree(toks, &mut i, &[], &mut tree);
            out.extend(tree.into_iter().map(|(p, _)| p));
            continue;
        }
        if (t == "crate" || t == "$crate" || t == "super")
            && toks.get(i + 1).map(String::as_str) == Some("::")
            && !(i > 0 && toks[i - 1] == "::")
        {
            let mut path = vec![t.to_string()];
            let mut j = i + 1;
            while toks.get(j).map(String::as_str) == Some("::")
                && toks
                    .get(j + 1)
                    .is_some_and(|s| s.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                path.push(toks[j + 1].clone());
                j += 2;
            }
            out.push(path);
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// A source file: its path under `src/` and its module path.
struct SourceFile {
    rel: String,
    module: Vec<String>,
    toks: Vec<String>,
}

fn read_sources(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir.join(rel))
        .expect("readable source folder")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .into_string()
                .expect("UTF-8 name")
        })
        .collect();
    entries.sort();
    for name in entries {
        let child = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let path = dir.join(&child);
        if path.is_dir() {
            read_sources(dir, &child, out);
        } else if name.ends_with(".rs") {
            out.push((
                child,
                std::fs::read_to_string(&path).expect("readable source"),
            ));
        }
    }
}

fn module_of(rel: &str) -> Vec<String> {
    let mut m: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if m.last().map(String::as_str) == Some("mod") || rel == "lib.rs" {
        m.pop();
    }
    m
}

/// Where a path leads: the folder (layer) its module is in, once the crate root's re-exports
/// are followed; `Err` with the path if it cannot be placed.
fn place(
    from: &[String],
    path: &[String],
    root: &HashMap<String, Vec<Vec<String>>>,
    root_items: &BTreeSet<String>,
    macros: &HashMap<String, String>,
) -> Result<Option<String>, String> {
    let segs: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") | Some("$crate") => path[1..].to_vec(),
        Some("super") => {
            let mut base = from.to_vec();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                if base.pop().is_none() {
                    return Err(path.join("::"));
                }
                rest = &rest[1..];
            }
            if !base.is_empty() {
                // Still inside the importing module's top folder, or a sibling of it.
                base.extend(rest.iter().cloned());
                return Ok(Some(base[0].clone()));
            }
            rest.to_vec()
        }
        _ => return Ok(None),
    };
    resolve(&segs, root, root_items, macros, 0)
        .map(Some)
        .ok_or_else(|| path.join("::"))
}

/// The folder `segs` (a path from the crate root) leads to, following the root's names; a root
/// name may stand for several things (a module alias and a function of the same name), so each
/// is tried.
fn resolve(
    segs: &[String],
    root: &HashMap<String, Vec<Vec<String>>>,
    root_items: &BTreeSet<String>,
    macros: &HashMap<String, String>,
    depth: u32,
) -> Option<String> {
    let first = segs.first()?;
    if depth > 16 {
        return None;
    }
    if LAYERS.iter().any(|(l, _)| l == first) {
        return Some(first.clone());
    }
    for to in root.get(first).into_iter().flatten() {
        let mut next: Vec<String> = to
            .iter()
            .filter(|s| *s != "self" && *s != "crate")
            .cloned()
            .collect();
        if next.first() == Some(first) && next.len() > 1 {
            continue; // `pub use checking::{checking, …}`: the name through itself
        }
        next.extend(segs[1..].iter().cloned());
        if let Some(found) = resolve(&next, root, root_items, macros, depth + 1) {
            return Some(found);
        }
    }
    if let Some(folder) = macros.get(first) {
        return Some(folder.clone());
    }
    root_items.contains(first).then(|| "lib.rs".to_string())
}

/// `segs` with the crate root's re-exports followed as far as they go (for the report).
fn canonical(segs: &[String], root: &HashMap<String, Vec<Vec<String>>>) -> Vec<String> {
    let mut segs = segs.to_vec();
    for _ in 0..16 {
        let Some(first) = segs.first() else { break };
        if LAYERS.iter().any(|(l, _)| l == first) {
            break;
        }
        let Some(to) = root
            .get(first)
            .into_iter()
            .flatten()
            .find(|to| !(to.first() == Some(first) && to.len() > 1))
        else {
            break;
        };
        let mut next: Vec<String> = to
            .iter()
            .filter(|s| *s != "self" && *s != "crate")
            .cloned()
            .collect();
        next.extend(segs[1..].iter().cloned());
        segs = next;
    }
    segs
}

fn rank(layer: &str) -> usize {
    LAYERS
        .iter()
        .position(|(l, _)| *l == layer)
        .unwrap_or(LAYERS.len())
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let dir = src_dir();
    if !dir.join("lib.rs").exists() {
        println!(
            "layering: the sources are not here ({}); nothing checked",
            dir.display()
        );
        return;
    }
    let mut raw = Vec::new();
    read_sources(&dir, "", &mut raw);
    let mut files = Vec::new();
    let mut test_modules: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut macros = HashMap::new();
    for (rel, text) in &raw {
        let blanked = blank_literals(text);
        let (toks, tests) = without_test_items(&tokens(&blanked));
        let module = module_of(rel);
        for t in tests {
            let mut m = module.clone();
            m.push(t);
            test_modules.insert(m);
        }
        // `#[macro_export]` macros live at the crate root but belong to their file's folder.
        for w in toks.windows(7) {
            if w[..4]
                .iter()
                .map(String::as_str)
                .eq(["#", "[", "macro_export", "]"])
                && w[4] == "macro_rules"
                && w[5] == "!"
            {
                macros.insert(w[6].clone(), module.first().cloned().unwrap_or_default());
            }
        }
        files.push(SourceFile {
            rel: rel.clone(),
            module,
            toks,
        });
    }
    let lib = files.iter().find(|f| f.rel == "lib.rs").expect("lib.rs");
    // The crate root's names: re-exports (`use`, `pub use`) and its own items.
    let mut root: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    let mut root_items = BTreeSet::new();
    let mut i = 0;
    while i < lib.toks.len() {
        let t = lib.toks[i].as_str();
        if t == "use" {
            i += 1;
            let mut tree = Vec::new();
            use_tree(&lib.toks, &mut i, &[], &mut tree);
            for (path, name) in tree {
                root.entry(name).or_default().push(path);
            }
            continue;
        }
        if matches!(
            t,
            "fn" | "mod" | "struct" | "enum" | "trait" | "type" | "const" | "static"
        ) {
            if let Some(name) = lib.toks.get(i + 1) {
                if !LAYERS.iter().any(|(l, _)| l == name) {
                    root_items.insert(name.clone());
                }
            }
        }
        i += 1;
    }
    assert!(
        root.contains_key("Device") && root.contains_key("backend"),
        "the scan of lib.rs found no re-exports: the test's parser is broken"
    );

    let mut upward = BTreeSet::new();
    let mut unplaced = BTreeSet::new();
    let mut checked = 0;
    for f in &files {
        let Some(own) = f.module.first() else {
            continue;
        };
        if test_modules.iter().any(|m| f.module.starts_with(m))
            || !LAYERS.iter().any(|(l, _)| l == own)
        {
            continue;
        }
        for path in paths(&f.toks) {
            match place(&f.module, &path, &root, &root_items, &macros) {
                Ok(None) => {}
                Ok(Some(to)) => {
                    checked += 1;
                    if rank(&to) > rank(own) {
                        // The path with re-exports followed, for the report and KNOWN.
                        let shown = canonical(&path[1..], &root);
                        upward.insert((f.rel.clone(), shown.join("::")));
                    }
                }
                Err(p) => {
                    unplaced.insert((f.rel.clone(), p));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} crate paths found: the test's parser is broken"
    );
    assert!(
        unplaced.is_empty(),
        "paths the layering test cannot place: {unplaced:#?}"
    );

    let known = |file: &str, path: &str| {
        KNOWN
            .iter()
            .any(|(f, p, _)| *f == file && (path == *p || path.starts_with(&format!("{p}::"))))
    };
    let new: Vec<_> = upward.iter().filter(|(f, p)| !known(f, p)).collect();
    for (f, p, who) in KNOWN {
        if !upward
            .iter()
            .any(|(uf, up)| uf == f && (up == p || up.starts_with(&format!("{p}::"))))
        {
            println!(
                "layering: the known upward import {f} -> {p} ({who}) is gone: \
                 remove it from KNOWN"
            );
        }
    }
    let table: Vec<String> = LAYERS
        .iter()
        .enumerate()
        .map(|(i, (l, what))| format!("  {} {l}/: {what}", i + 1))
        .collect();
    assert!(
        new.is_empty(),
        "imports from a layer above the importing module (layers, bottom first:\n{}\n): {new:#?}",
        table.join("\n")
    );
}

#[test]
fn the_scanner_reads_use_trees_and_skips_literals_and_tests() {
    let text = r##"
        use crate::{a::{b, c as d}, e::*, f::self};
        // crate::comment::ignored
        let s = "crate::string::ignored"; let r = r#"crate::raw::ignored"#; let c = '{';
        fn g<'a>() { crate::h::i(); $crate::j::k!(); super::super::l::m; }
        #[cfg(test)]
        mod tests { use crate::only::in_tests; }
        #[cfg(test)]
        mod file_tests;
    "##;
    let (toks, tests) = without_test_items(&tokens(&blank_literals(text)));
    assert_eq!(tests, ["file_tests"]);
    let found: Vec<String> = paths(&toks).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "crate::a::b",
            "crate::a::c",
            "crate::e",
            "crate::f",
            "crate::h::i",
            "$crate::j::k",
            "super::super::l::m",
        ]
    );
}
