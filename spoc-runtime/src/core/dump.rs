//! `SPOC_DUMP=<dir>`: every kernel the runtime compiles is written out, so users can read what
//! runs — its IR as text (`<kernel>.<hash>.ir`) and, for backends that generate source, that
//! source (`<kernel>.<hash>.<backend>.<ext>`, e.g. `saxpy.1a2b3c4d.cuda-ptx.ptx`; SPIR-V as a
//! binary `.spv`). The hash is the first 8 hex digits of the kernel's content hash.

use crate::backend::{Code, Source};
use spoc_ir::{ContentHash, Kernel};
use std::path::PathBuf;
use std::sync::OnceLock;

fn dump_dir() -> Option<&'static PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        std::env::var_os("SPOC_DUMP")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
    .as_ref()
}

/// Writes the kernel's IR and, when there is one, its generated source, if `SPOC_DUMP` is set.
/// A write failure is reported on stderr (once per file) and never fails the launch.
pub(crate) fn dump(kernel: &Kernel, hash: ContentHash, backend: &str, source: Option<&Source>) {
    let Some(dir) = dump_dir() else { return };
    let stem = format!("{}.{}", kernel.name, &hash.to_string()[..8]);
    let write = |name: String, bytes: &[u8]| {
        let path = dir.join(name);
        if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, bytes)) {
            eprintln!("spoc: SPOC_DUMP: cannot write {}: {e}", path.display());
        }
    };
    write(format!("{stem}.ir"), kernel.to_string().as_bytes());
    if let Some(src) = source {
        let tag = backend
            .to_ascii_lowercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
        let name = format!("{stem}.{tag}.{}", src.target.file_extension());
        match &src.code {
            Code::Text(t) => write(name, t.as_bytes()),
            Code::SpirV(words) => {
                let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
                write(name, &bytes)
            }
        }
    }
}
