//! # spoc-codegen
//!
//! Code generators from spoc IR (DESIGN.md §4): one module per target.
//!
//! | [`Target`] | output | module |
//! | --- | --- | --- |
//! | `CudaPtx` | PTX text, written directly (PTX ISA 7.8) | [`ptx`] |
//! | `CudaC` | CUDA C for NVRTC | [`c`] |
//! | `Hip` | HIP C for hiprtc | [`c`] |
//! | `OpenCl` | OpenCL C 1.2 | [`c`] |
//! | `Vulkan` | SPIR-V words from a `naga::Module` | [`mod@naga`] |
//! | `Metal` / `WebGpu` / `Glsl` | MSL / WGSL / GLSL from the same module | [`mod@naga`] |
//! | `Native` / `Interpreter` | nothing (`Ok(None)`) | — |

pub mod abi;
pub mod c;
pub mod checked;
mod error;
pub mod naga;
pub mod names;
pub mod ptx;

pub use abi::Abi;
pub use error::CodegenError;
use spoc_ir::AsValid;

/// A code-generation target: one per source-generating backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// PTX text for `cuModuleLoadData` (the default CUDA path).
    CudaPtx,
    /// CUDA C for NVRTC.
    CudaC,
    /// HIP C for hiprtc.
    Hip,
    /// OpenCL C 1.2.
    OpenCl,
    /// SPIR-V for Vulkan.
    Vulkan,
    /// Metal Shading Language.
    Metal,
    /// WGSL for WebGPU.
    WebGpu,
    /// GLSL compute (for inspection and GL users).
    Glsl,
    /// The Native backend runs the macro's Rust code: no source.
    Native,
    /// The Interpreter runs the IR: no source.
    Interpreter,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 10] = [
        Target::CudaPtx,
        Target::CudaC,
        Target::Hip,
        Target::OpenCl,
        Target::Vulkan,
        Target::Metal,
        Target::WebGpu,
        Target::Glsl,
        Target::Native,
        Target::Interpreter,
    ];

    /// The backend name this target belongs to (`"CUDA/PTX"`, `"OpenCL"`, …).
    pub fn backend_name(self) -> &'static str {
        match self {
            Target::CudaPtx => "CUDA/PTX",
            Target::CudaC => "CUDA/C",
            Target::Hip => "HIP",
            Target::OpenCl => "OpenCL",
            Target::Vulkan => "Vulkan",
            Target::Metal => "Metal",
            Target::WebGpu => "WebGPU",
            Target::Glsl => "GLSL",
            Target::Native => "Native",
            Target::Interpreter => "Interpreter",
        }
    }

    /// The file extension of generated source (`"ptx"`, `"cu"`, `"cl"`, `"spv"`, …).
    pub fn file_extension(self) -> &'static str {
        match self {
            Target::CudaPtx => "ptx",
            Target::CudaC => "cu",
            Target::Hip => "hip",
            Target::OpenCl => "cl",
            Target::Vulkan => "spv",
            Target::Metal => "metal",
            Target::WebGpu => "wgsl",
            Target::Glsl => "comp",
            Target::Native | Target::Interpreter => "txt",
        }
    }
}

/// What a target device can do, as far as code generation cares. Defaults describe a capable
/// device of the target ([`Capabilities::for_target`]); a backend passes its device's real values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// 64-bit floats.
    pub fp64: bool,
    /// 64-bit integer atomics.
    pub int64_atomics: bool,
    /// Float atomic add.
    pub float_atomic_add: bool,
    /// Warp / subgroup operations (shuffles, votes, ballot).
    pub subgroups: bool,
    /// CUDA compute capability (major, minor), for PTX's `.target`; `None` means sm_70.
    pub compute_capability: Option<(u32, u32)>,
    /// The device's shader compiler rewrites float arithmetic as if NaN, infinities and signed
    /// zeros did not exist (`x * 0.0` to `0.0`, `x + 0.0` to `x`, `0.0 - x` to `-x`), although
    /// the module declares SPIR-V's `SignedZeroInfNanPreserve` (lavapipe of Mesa 22.3 does), or
    /// the device cannot take that execution mode. The SPIR-V generator then hides the value of
    /// every float constant from the driver's optimiser (Vulkan only; see [`naga`]).
    pub float_controls_ignored: bool,
    /// The device's `f32` fused multiply-add rounds twice (GLSL.std.450 `Fma` may, and does on
    /// lavapipe). The SPIR-V generator then computes `f32` `mul_add` exactly in `f64` (the
    /// product is exact, the sum is rounded to odd, the result once to `f32`) when the target
    /// has `f64` and 64-bit integers (Vulkan only; see [`naga`]).
    pub unfused_fma_f32: bool,
    /// The device's OpenCL C compiler takes NVIDIA inline PTX (`asm("…" : outputs : inputs)`):
    /// NVIDIA's OpenCL driver does. The OpenCL C generator then writes the integer operations
    /// that NVVM would otherwise fold on wrong assumptions (signed `abs`, `min`, `max`:
    /// difftest/FINDINGS.md F9, F13) as inline PTX, as the CUDA C generator always does.
    /// Ignored by every other target.
    pub inline_ptx: bool,
}

impl Capabilities {
    /// Capabilities of a typical device of `target` (everything on for CUDA and HIP; OpenCL 1.2
    /// and Vulkan without 64-bit atomics or subgroups unless the device says so).
    pub fn for_target(target: Target) -> Capabilities {
        let gpu_full = matches!(target, Target::CudaPtx | Target::CudaC | Target::Hip);
        Capabilities {
            fp64: !matches!(target, Target::Metal | Target::WebGpu),
            int64_atomics: gpu_full,
            float_atomic_add: gpu_full,
            subgroups: gpu_full,
            compute_capability: None,
            float_controls_ignored: false,
            unfused_fma_f32: false,
            inline_ptx: false,
        }
    }
}

/// Options of one code-generation request.
#[derive(Clone, Debug)]
pub struct Options<'a> {
    /// Block size, embedded as the workgroup size where the target needs one (Vulkan, WGSL,
    /// Metal, GLSL); `None` means (1, 1, 1) there and is ignored elsewhere.
    pub block: Option<[u32; 3]>,
    /// Record-buffer parameters to lower as Structure-of-Arrays (CUDA/PTX only; every other
    /// source target refuses a non-empty list).
    pub soa_params: &'a [&'a str],
    /// The device's capabilities.
    pub caps: Capabilities,
    /// Checked mode ([`checked`]): every buffer, shared and local array access is bounds-checked
    /// and every integer division checked for zero, and a fault is recorded in the fault record
    /// (one more kernel argument) instead of touching memory. CUDA C, HIP, OpenCL C, PTX and
    /// SPIR-V; the other targets refuse it with [`CodegenError::FeatureNotSupported`].
    pub checked: bool,
}

/// Generated code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Code {
    /// Source text (PTX, CUDA C, HIP C, OpenCL C, MSL, WGSL, GLSL).
    Text(String),
    /// SPIR-V words.
    SpirV(Vec<u32>),
}

/// The output of a code generator: the code and the parameter ABI it was generated with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The target it was generated for.
    pub target: Target,
    /// Entry-point name in the generated code.
    pub entry: String,
    /// The code.
    pub code: Code,
    /// How the kernel takes its parameters ([`abi::describe`]): what a backend binds the
    /// launch's arguments from. Empty ([`Abi::default`]) for source a generator did not write.
    pub abi: Abi,
}

impl Source {
    /// The source text, or a disassembly-free placeholder for SPIR-V (`None`).
    pub fn text(&self) -> Option<&str> {
        match &self.code {
            Code::Text(t) => Some(t),
            Code::SpirV(_) => None,
        }
    }
}

/// Generates source for `target` with default capabilities (see [`generate_source_with`]).
///
/// # Errors
/// As [`generate_source_with`].
pub fn generate_source(
    target: Target,
    kernel: &(impl AsValid + ?Sized),
    block: Option<[u32; 3]>,
    soa_params: &[&str],
) -> Result<Option<Source>, CodegenError> {
    generate_source_with(
        target,
        kernel,
        &Options {
            block,
            soa_params,
            caps: Capabilities::for_target(target),
            checked: false,
        },
    )
}

/// Generates source for `target`. Native and Interpreter return `Ok(None)`.
///
/// `kernel` is a [`spoc_ir::ValidKernel`], generated from as it is, or a [`spoc_ir::Kernel`], validated
/// first.
///
/// # Errors
/// - [`CodegenError::Invalid`] if a [`spoc_ir::Kernel`] does not validate;
/// - [`CodegenError::FeatureNotSupported`] for a non-empty `soa_params` on any target but
///   CUDA/PTX, Native and Interpreter included ([`abi::refuse_soa`]);
/// - [`CodegenError::Unsupported`] naming the node, the target and the missing capability when
///   the target cannot express a node (never wrong code).
pub fn generate_source_with(
    target: Target,
    kernel: &(impl AsValid + ?Sized),
    opts: &Options<'_>,
) -> Result<Option<Source>, CodegenError> {
    let generates = !matches!(target, Target::Native | Target::Interpreter);
    if !generates && opts.soa_params.is_empty() {
        return Ok(None);
    }
    let kernel = kernel.as_valid()?;
    abi::refuse_soa(target, &kernel.name, opts.soa_params)?;
    if !generates {
        return Ok(None);
    }
    // Every GPU target gets the loops `unroll(…)` marks as straight-line code.
    let mut unrolled = spoc_ir::unroll::unrolled(kernel);
    // ptxas unrolls little and gets every local array as `.local` memory: PTX gets the loop
    // unrolling and the registers for constant-indexed arrays that NVVM would give (in place
    // on the unrolled copy when there is one: the SGEMM's IR is large to copy).
    if target == Target::CudaPtx {
        let mut k = unrolled.take().unwrap_or_else(|| kernel.clone());
        spoc_ir::unroll::prepare_for_ptx(&mut k);
        unrolled = Some(k);
    }
    // NVIDIA's Vulkan driver folds some float constant arithmetic wrongly (a tie rounded
    // toward zero: difftest/FINDINGS.md F16): the SPIR-V gets Rust's values instead.
    if matches!(target, Target::Vulkan) {
        let mut k = unrolled.take().unwrap_or_else(|| kernel.clone());
        spoc_ir::unroll::fold_constants(&mut k);
        // …and kills the process on some kernels with a constant `if` (F20): it gets the branch
        // taken instead.
        spoc_ir::unroll::fold_constant_branches(&mut k);
        unrolled = Some(k);
    }
    let kernel = unrolled.as_ref().unwrap_or(kernel);
    let source = match target {
        Target::CudaPtx => ptx::generate(kernel, opts)?,
        Target::CudaC | Target::Hip | Target::OpenCl => c::generate(target, kernel, opts)?,
        Target::Vulkan | Target::Metal | Target::WebGpu | Target::Glsl => {
            naga::generate(target, kernel, opts)?
        }
        Target::Native | Target::Interpreter => unreachable!("handled above"),
    };
    Ok(Some(source))
}
