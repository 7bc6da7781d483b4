//! Seeing the code: a kernel handle returns its source for any target, and `SPOC_DUMP=<dir>`
//! writes what the runtime compiles (one file per kernel and backend, plus the IR).

use spoc::prelude::*;
use spoc::{Code, Target};

#[kernel]
fn scale(k: f32, x: &mut [f32]) {
    let i = global_id_x();
    if i < x.len() {
        x[i] *= k;
    }
}

#[test]
fn handle_returns_source_for_every_target() {
    for target in Target::ALL {
        let src = scale.source(target).unwrap();
        match target {
            Target::Native | Target::Interpreter => assert!(src.is_none(), "{target:?}"),
            _ => {
                let src = src.unwrap_or_else(|| panic!("{target:?} generated nothing"));
                assert_eq!(src.target, target);
                match &src.code {
                    Code::Text(t) => assert!(t.contains("scale"), "{target:?}:\n{t}"),
                    // SPIR-V magic number, and the entry point name in the words.
                    Code::SpirV(w) => {
                        assert_eq!(w[0], 0x0723_0203);
                        let bytes: Vec<u8> = w.iter().flat_map(|w| w.to_le_bytes()).collect();
                        assert!(bytes.windows(5).any(|s| s == b"scale"));
                    }
                }
            }
        }
    }
    let ptx = scale.source(Target::CudaPtx).unwrap().unwrap();
    let ptx = ptx.text().unwrap();
    assert!(
        ptx.contains(".version 7.8") && ptx.contains(".entry"),
        "{ptx}"
    );
    let cl = scale.source(Target::OpenCl).unwrap().unwrap();
    assert!(cl.text().unwrap().contains("__kernel"));
}

#[test]
fn spoc_dump_writes_ir_and_sources() {
    let dir = std::env::temp_dir().join(format!("spoc-dump-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // Read once per process, at the first compile: this test binary has only this launcher.
    std::env::set_var("SPOC_DUMP", &dir);
    let mut jit_backends = Vec::new();
    for dev in spoc::all_devices(None).unwrap() {
        let mut x = dev.upload(&[1.0f32, 2.0, 3.0]).unwrap();
        scale
            .launch(&dev, dims1d(1), dims1d(32), (2.0, &mut x))
            .unwrap();
        assert_eq!(
            x.to_vec().unwrap(),
            vec![2.0, 4.0, 6.0],
            "on {}",
            dev.framework
        );
        if dev.backend().execution_model() == spoc::ExecutionModel::Jit {
            jit_backends.push(dev.framework.to_string());
        }
    }
    let files: Vec<String> = std::fs::read_dir(&dir)
        .expect("SPOC_DUMP directory was created")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let ir = files
        .iter()
        .find(|f| f.starts_with("scale.") && f.ends_with(".ir"))
        .unwrap_or_else(|| panic!("no IR dump in {files:?}"));
    let text = std::fs::read_to_string(dir.join(ir)).unwrap();
    assert!(text.contains("kernel scale("), "{text}");
    for b in &jit_backends {
        let tag = b
            .to_ascii_lowercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-");
        assert!(
            files
                .iter()
                .any(|f| f.starts_with("scale.") && f.contains(&format!(".{tag}."))),
            "no source dump for {b} in {files:?}"
        );
    }
    println!(
        "SPOC_DUMP wrote {} files (JIT backends: {jit_backends:?})",
        files.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
