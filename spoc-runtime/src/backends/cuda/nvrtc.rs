//! CUDA C to a loadable image through NVRTC (loaded at run time, probed first like the driver).

use super::driver::panic_message;
use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

/// The loaded NVRTC: its version and the real architectures it compiles for (`90` for sm_90).
pub(crate) struct Nvrtc {
    pub(crate) version: (u32, u32),
    pub(crate) archs: Vec<u32>,
}

static NVRTC: OnceLock<Result<Nvrtc, String>> = OnceLock::new();

/// NVRTC, loaded on first call, or why it cannot be used.
pub(crate) fn nvrtc() -> Result<&'static Nvrtc, &'static str> {
    NVRTC.get_or_init(load).as_ref().map_err(String::as_str)
}

fn text(r: nvrtcResult) -> String {
    // SAFETY: returns a static NUL-terminated string for any status.
    let p = unsafe { sys::nvrtcGetErrorString(r) };
    if p.is_null() {
        format!("nvrtcResult {}", r as i32)
    } else {
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(r: nvrtcResult, what: &str) -> Result<(), String> {
    if r == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what}: {}", text(r)))
    }
}

fn load() -> Result<Nvrtc, String> {
    super::probe::check_library("NVRTC", &["nvrtc"], super::probe::NVRTC_SYMBOLS)?;
    let probe = || -> Result<Nvrtc, String> {
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: valid out-pointers.
        check(
            unsafe { sys::nvrtcVersion(&mut major, &mut minor) },
            "nvrtcVersion",
        )?;
        let mut n: c_int = 0;
        // SAFETY: valid out-pointer.
        check(
            unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) },
            "nvrtcGetNumSupportedArchs",
        )?;
        let mut archs = vec![0 as c_int; n.max(0) as usize];
        // SAFETY: the buffer holds the number of entries NVRTC just reported.
        check(
            unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) },
            "nvrtcGetSupportedArchs",
        )?;
        Ok(Nvrtc {
            version: (major.max(0) as u32, minor.max(0) as u32),
            archs: archs.into_iter().map(|a| a.max(0) as u32).collect(),
        })
    };
    match catch_unwind(AssertUnwindSafe(probe)) {
        Ok(r) => r,
        Err(p) => Err(format!("loading NVRTC failed: {}", panic_message(&*p))),
    }
}

/// Destroys a program on drop.
struct Program(nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram, destroyed once.
        unsafe {
            let _ = sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

/// What NVRTC produced: a cubin for the device's own architecture, or NUL-terminated PTX for
/// the newest virtual architecture below it (the driver then JIT-compiles it).
pub(crate) struct Image {
    pub(crate) bytes: Vec<u8>,
    /// The `--gpu-architecture` value used.
    pub(crate) arch: String,
}

/// Compiles CUDA C `src` for a device of compute capability `cc` with `--fmad=false` (no
/// contraction into FMA, DESIGN §2) and `flags`. `Err` holds the message and NVRTC's log.
pub(crate) fn compile(
    src: &str,
    name: &str,
    cc: (u32, u32),
    flags: &[String],
) -> Result<Image, String> {
    let nv = nvrtc().map_err(str::to_string)?;
    let want = cc.0 * 10 + cc.1;
    let (arch, cubin) = if nv.archs.contains(&want) {
        (format!("sm_{want}"), true)
    } else if let Some(&best) = nv.archs.iter().filter(|&&a| a <= want).max() {
        (format!("compute_{best}"), false)
    } else {
        return Err(format!(
            "NVRTC {}.{} cannot compile for compute capability {}.{} (it supports {:?})",
            nv.version.0, nv.version.1, cc.0, cc.1, nv.archs
        ));
    };
    let csrc = CString::new(src).map_err(|_| "the source contains a NUL byte".to_string())?;
    let cname = CString::new(format!("{name}.cu")).map_err(|_| "bad name".to_string())?;
    let mut prog: nvrtcProgram = std::ptr::null_mut();
    // SAFETY: valid out-pointer, NUL-terminated source and name, no headers.
    check(
        unsafe {
            sys::nvrtcCreateProgram(
                &mut prog,
                csrc.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        },
        "nvrtcCreateProgram",
    )?;
    let prog = Program(prog);
    let mut opts = vec![format!("--gpu-architecture={arch}"), "--fmad=false".into()];
    opts.extend(flags.iter().cloned());
    let copts = opts
        .iter()
        .map(|o| CString::new(o.as_str()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| "a compiler flag contains a NUL byte".to_string())?;
    let ptrs: Vec<*const c_char> = copts.iter().map(|c| c.as_ptr()).collect();
    // SAFETY: a live program; `ptrs` holds `ptrs.len()` NUL-terminated strings.
    let r = unsafe { sys::nvrtcCompileProgram(prog.0, ptrs.len() as c_int, ptrs.as_ptr()) };
    if r != nvrtcResult::NVRTC_SUCCESS {
        return Err(format!(
            "NVRTC ({}): {}\n{}",
            opts.join(" "),
            text(r),
            log(&prog).trim_end()
        ));
    }
    let mut size = 0usize;
    let bytes = if cubin {
        // SAFETY: a compiled program; the buffer has the reported size.
        unsafe {
            check(
                sys::nvrtcGetCUBINSize(prog.0, &mut size),
                "nvrtcGetCUBINSize",
            )?;
            let mut b = vec![0u8; size];
            check(
                sys::nvrtcGetCUBIN(prog.0, b.as_mut_ptr().cast()),
                "nvrtcGetCUBIN",
            )?;
            b
        }
    } else {
        // SAFETY: as above; the PTX size includes its NUL terminator.
        unsafe {
            check(sys::nvrtcGetPTXSize(prog.0, &mut size), "nvrtcGetPTXSize")?;
            let mut b = vec![0u8; size];
            check(
                sys::nvrtcGetPTX(prog.0, b.as_mut_ptr().cast()),
                "nvrtcGetPTX",
            )?;
            if b.last() != Some(&0) {
                b.push(0);
            }
            b
        }
    };
    Ok(Image { bytes, arch })
}

fn log(prog: &Program) -> String {
    let mut size = 0usize;
    // SAFETY: a live program; the buffer has the reported size.
    unsafe {
        if sys::nvrtcGetProgramLogSize(prog.0, &mut size) != nvrtcResult::NVRTC_SUCCESS {
            return String::new();
        }
        let mut b = vec![0u8; size.max(1)];
        if sys::nvrtcGetProgramLog(prog.0, b.as_mut_ptr().cast()) != nvrtcResult::NVRTC_SUCCESS {
            return String::new();
        }
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        String::from_utf8_lossy(&b[..end]).into_owned()
    }
}
