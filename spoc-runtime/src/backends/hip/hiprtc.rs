//! HIP C to a code object through hiprtc.
//!
//! `hip-sys` 0.1 has no hiprtc bindings, so the few functions used are declared here from
//! `hip/hiprtc.h`. In ROCm 5.x (Debian's 5.2 included) they live in `libamdhip64`, which
//! `hip-sys` links already. Statuses are read as plain integers (`hiprtcResult`), so an
//! unknown value is reported rather than being undefined behaviour.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Mutex;

/// Serialises hiprtc: two programs compiled at once on different threads abort the process in
/// Debian's hiprtc 5.2 (LLVM's command-line options registered twice inside comgr).
static HIPRTC: Mutex<()> = Mutex::new(());

type HiprtcProgram = *mut c_void;
/// `hiprtcResult`; 0 is `HIPRTC_SUCCESS`.
type HiprtcResult = c_int;

#[link(name = "amdhip64")]
extern "C" {
    fn hiprtcGetErrorString(result: HiprtcResult) -> *const c_char;
    fn hiprtcVersion(major: *mut c_int, minor: *mut c_int) -> HiprtcResult;
    fn hiprtcCreateProgram(
        prog: *mut HiprtcProgram,
        src: *const c_char,
        name: *const c_char,
        num_headers: c_int,
        headers: *const *const c_char,
        include_names: *const *const c_char,
    ) -> HiprtcResult;
    fn hiprtcCompileProgram(
        prog: HiprtcProgram,
        num_options: c_int,
        options: *const *const c_char,
    ) -> HiprtcResult;
    fn hiprtcDestroyProgram(prog: *mut HiprtcProgram) -> HiprtcResult;
    fn hiprtcGetProgramLogSize(prog: HiprtcProgram, size: *mut usize) -> HiprtcResult;
    fn hiprtcGetProgramLog(prog: HiprtcProgram, log: *mut c_char) -> HiprtcResult;
    fn hiprtcGetCodeSize(prog: HiprtcProgram, size: *mut usize) -> HiprtcResult;
    fn hiprtcGetCode(prog: HiprtcProgram, code: *mut c_char) -> HiprtcResult;
}

fn text(r: HiprtcResult) -> String {
    // SAFETY: returns a static NUL-terminated string (or null) for any status.
    let p = unsafe { hiprtcGetErrorString(r) };
    if p.is_null() {
        format!("hiprtcResult {r}")
    } else {
        // SAFETY: non-null, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(r: HiprtcResult, what: &str) -> Result<(), String> {
    if r == 0 {
        Ok(())
    } else {
        Err(format!("{what}: {}", text(r)))
    }
}

/// hiprtc's version (major, minor).
pub(crate) fn version() -> Result<(u32, u32), String> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: valid out-pointers.
    check(
        unsafe { hiprtcVersion(&mut major, &mut minor) },
        "hiprtcVersion",
    )?;
    Ok((major.max(0) as u32, minor.max(0) as u32))
}

/// The options every compile gets: the device's architecture and no FMA contraction (the
/// generated source also says `#pragma clang fp contract(off)`), then `extra`.
pub(crate) fn options(arch: &str, extra: &[String]) -> Vec<String> {
    let mut o = vec![
        format!("--offload-arch={arch}"),
        "-ffp-contract=off".to_string(),
    ];
    o.extend(extra.iter().cloned());
    o
}

/// A program destroyed on drop.
struct Program(HiprtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by hiprtcCreateProgram, destroyed once.
        let r = unsafe { hiprtcDestroyProgram(&mut self.0) };
        if let Err(m) = check(r, "hiprtcDestroyProgram") {
            tracing::warn!("{m}");
        }
    }
}

impl Program {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: a live program; valid out-pointer.
        if unsafe { hiprtcGetProgramLogSize(self.0, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size + 1];
        // SAFETY: the buffer holds the size hiprtc just reported, plus a NUL.
        if unsafe { hiprtcGetProgramLog(self.0, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).trim_end().to_string()
    }
}

/// Compiles HIP C `src` (`name` names the program in messages) for `arch` with
/// [`options`]`(arch, flags)`, returning the code object. The error carries hiprtc's log.
pub(crate) fn compile(
    src: &str,
    name: &str,
    arch: &str,
    flags: &[String],
) -> Result<Vec<u8>, String> {
    let csrc = CString::new(src).map_err(|_| "the source contains a NUL byte".to_string())?;
    let cname = CString::new(format!("{name}.hip"))
        .map_err(|_| format!("kernel name `{name}` contains a NUL byte"))?;
    let opts = options(arch, flags)
        .into_iter()
        .map(|o| CString::new(o).map_err(|_| "a compiler flag contains a NUL byte".to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let n_opts = c_int::try_from(opt_ptrs.len()).map_err(|_| "too many compiler flags")?;
    // The HIP runtime must be initialised before hiprtc's first compile: initialised after
    // it, Debian's 5.2 aborts the process (LLVM's command-line options registered twice).
    // Its outcome (no device, typically) does not matter to hiprtc.
    let _ = super::runtime::runtime();
    // A poisoned lock only means another compile panicked; hiprtc's state is still usable.
    let _serial = HIPRTC.lock().unwrap_or_else(|p| p.into_inner());
    let mut prog: HiprtcProgram = std::ptr::null_mut();
    // SAFETY: NUL-terminated source and name; no headers.
    check(
        unsafe {
            hiprtcCreateProgram(
                &mut prog,
                csrc.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        },
        "hiprtcCreateProgram",
    )?;
    let prog = Program(prog);
    // SAFETY: a live program; `opt_ptrs` points at NUL-terminated strings alive for the call.
    let r = unsafe { hiprtcCompileProgram(prog.0, n_opts, opt_ptrs.as_ptr()) };
    if r != 0 {
        let log = prog.log();
        return Err(format!(
            "hiprtcCompileProgram ({}): {}{}{}",
            opts.iter()
                .map(|o| o.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            text(r),
            if log.is_empty() { "" } else { "\n" },
            log
        ));
    }
    let mut size = 0usize;
    // SAFETY: a compiled program; valid out-pointer.
    check(
        unsafe { hiprtcGetCodeSize(prog.0, &mut size) },
        "hiprtcGetCodeSize",
    )?;
    let mut code = vec![0u8; size];
    if size > 0 {
        // SAFETY: the buffer holds the size hiprtc just reported.
        check(
            unsafe { hiprtcGetCode(prog.0, code.as_mut_ptr().cast()) },
            "hiprtcGetCode",
        )?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_name_the_arch_and_forbid_contraction() {
        let o = options("gfx90a:sramecc+:xnack-", &["-O3".to_string()]);
        assert_eq!(
            o,
            [
                "--offload-arch=gfx90a:sramecc+:xnack-",
                "-ffp-contract=off",
                "-O3"
            ]
        );
    }
}
