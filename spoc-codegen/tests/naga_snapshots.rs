//! Snapshots of the naga generator's output for every corpus kernel: WGSL, MSL and GLSL text,
//! the SPIR-V disassembly (`spirv-dis`, Debian package `spirv-tools`), or the error a target
//! gives. Update with `INSTA_UPDATE=always cargo test -p spoc-codegen --test naga_snapshots`.

mod naga_support;

use naga_support::{corpus, gen};
use spoc_codegen::{Code, Target};
use std::io::Write;
use std::process::Command;

/// `spirv-dis` of `words`, or `None` when the tool is missing.
fn disassemble(name: &str, words: &[u32]) -> Option<String> {
    let dir = std::env::temp_dir().join(format!("spoc-naga-dis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join(format!("{name}.spv"));
    let mut f = std::fs::File::create(&path).ok()?;
    for w in words {
        f.write_all(&w.to_le_bytes()).ok()?;
    }
    drop(f);
    let out = Command::new("spirv-dis").arg(&path).output().ok();
    let _ = std::fs::remove_file(&path);
    let out = out?;
    assert!(
        out.status.success(),
        "spirv-dis failed on {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("spirv-dis prints UTF-8"))
}

fn snapshot(target: Target) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("naga_snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| {
        for (name, k) in corpus() {
            let text = match gen(target, &k) {
                Ok(src) => match src.code {
                    Code::Text(t) => format!("// entry: {}\n{t}", src.entry),
                    Code::SpirV(words) => {
                        assert_eq!(words[0], 0x0723_0203, "{name}: SPIR-V magic");
                        match disassemble(name, &words) {
                            Some(d) => d,
                            None => {
                                if std::env::var("SPOC_REQUIRE_TOOLCHAINS").as_deref() == Ok("1") {
                                    panic!("spirv-dis is missing and SPOC_REQUIRE_TOOLCHAINS=1");
                                }
                                eprintln!(
                                    "SKIPPED: SPIR-V snapshot of {name} (spirv-dis not found)"
                                );
                                continue;
                            }
                        }
                    }
                },
                Err(e) => format!("error: {e}\n"),
            };
            insta::assert_snapshot!(format!("{name}.{}", target.file_extension()), text);
        }
    });
}

/// One `#[test]` per target: `name => Target`.
macro_rules! snapshot_tests {
    ($($name:ident => $target:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                snapshot(Target::$target);
            }
        )*
    };
}

snapshot_tests! {
    spirv_snapshots => Vulkan,
    wgsl_snapshots => WebGpu,
    msl_snapshots => Metal,
    glsl_snapshots => Glsl,
}

/// The operands of every `OpControlBarrier` (224) and `OpMemoryBarrier` (225) of `words`, with
/// the scope and semantics constants resolved: `(opcode, [scope or semantics values])`.
fn barriers(words: &[u32]) -> Vec<(u32, Vec<u32>)> {
    let (mut constants, mut found) = (Vec::new(), Vec::new());
    let mut at = 5;
    while at < words.len() {
        let (count, op) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        let inst = &words[at..at + count];
        match op {
            43 if count == 4 => constants.push((inst[2], inst[3])),
            224 | 225 => found.push((op, inst[1..].to_vec())),
            _ => {}
        }
        at += count;
    }
    let value = |id: &u32| {
        constants
            .iter()
            .find(|(c, _)| c == id)
            .expect("a constant")
            .1
    };
    found
        .into_iter()
        .map(|(op, ids)| (op, ids.iter().map(value).collect()))
        .collect()
}

/// `sync_threads()` promises what CUDA's `__syncthreads()` does: the workgroup's threads see
/// each other's shared- and global-memory writes. So its SPIR-V barrier has `Workgroup` (2)
/// execution and memory scope (not naga's `Device` (1), which NVIDIA pays for with a device-wide
/// fence) and acquire-release semantics (0x8) on workgroup (0x100) and storage-buffer (uniform,
/// 0x40) memory; a device fence keeps `Device` scope.
#[test]
fn block_barriers_have_workgroup_scope_and_order_buffers_too() {
    let k = naga_support::shared_atomics();
    let src = gen(Target::Vulkan, &k).expect("SPIR-V generates");
    let Code::SpirV(words) = src.code else {
        panic!("SPIR-V is words");
    };
    let found = barriers(&words);
    let controls: Vec<_> = found.iter().filter(|(op, _)| *op == 224).collect();
    assert_eq!(controls.len(), 2, "two sync_threads(): {found:?}");
    for (_, ops) in controls {
        assert_eq!(&ops[..2], &[2, 2], "execution and memory scope: {ops:?}");
        assert_eq!(ops[2], 0x8 | 0x40 | 0x100, "semantics: {ops:?}");
    }
    let fences: Vec<_> = found.iter().filter(|(op, _)| *op == 225).collect();
    assert_eq!(fences.len(), 1, "one fence_device(): {found:?}");
    assert_eq!(
        fences[0].1[0], 1,
        "a device fence has Device scope: {fences:?}"
    );
}
