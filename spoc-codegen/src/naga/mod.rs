//! SPIR-V (Vulkan), WGSL (WebGPU), MSL (Metal) and GLSL (compute) through [naga](https://docs.rs/naga).
//!
//! One `naga::Module` is built from the IR kernel (module `build`), checked by naga's validator with
//! the capabilities the device and the target allow, and written by naga's SPIR-V, WGSL, MSL or
//! GLSL back end. A validation failure is [`CodegenError::Backend`] (a bug of this generator,
//! never silently wrong code); a node a target cannot express is [`CodegenError::Unsupported`]
//! naming the node and the missing capability.
//!
//! # Binding ABI (every target)
//!
//! All resources live in descriptor set / bind group 0:
//!
//! | binding | what | declared as |
//! | --- | --- | --- |
//! | 0 | the scalar parameters (present only if the kernel has any) | read-only storage buffer holding one struct ([`scalar_params_layout`]) |
//! | 1 + j | the j-th buffer parameter, in parameter order | storage buffer (`read` for `&[T]`, `read_write` for `&mut [T]`) holding a runtime-sized array |
//!
//! - The scalar block is laid out like a `#[repr(C)]` struct of the non-buffer parameters in
//!   parameter order: each at the next offset aligned to its own alignment, the total size
//!   rounded up to the largest alignment. Scalars take their Rust size, except `bool`, which takes
//!   4 bytes (a `u32`, nonzero meaning `true`); records are their `#[repr(C)]` bytes; vectors are
//!   their [`spoc_ir::layout`] bytes (2 and 4 lanes: `vec2`/`vec4`, aligned to their size; 3
//!   lanes: `[T; 3]`). [`scalar_params_layout`] gives every offset. The block is a storage buffer
//!   rather than a uniform one so that this C layout is also the shader's (std430) layout.
//! - Buffer elements are laid out as on the host (`#[repr(C)]` records; 2- and 4-lane vectors
//!   as `vec2<T>`/`vec4<T>`, aligned to their size, 3-lane ones as `[T; 3]`; array stride =
//!   element size, so a buffer of `f32x4` is an `array<vec4<f32>>` of stride 16). Buffers of `bool`, or of records holding a `bool`, are refused
//!   ([`CodegenError::Unsupported`]: shaders have no 1-byte `bool` in memory).
//! - A buffer's length is the runtime array's length (`OpArrayLength` / `arrayLength`), so the
//!   host must bind exactly `len * size_of::<T>()` bytes. On Metal, naga passes the lengths in
//!   an extra buffer ("sizes buffer") bound at slot `1 + number of buffer parameters`; buffer j
//!   is at `[[buffer(1 + j)]]` and the scalar block at `[[buffer(0)]]`.
//! - The workgroup size is `opts.block` (default `[1, 1, 1]`), embedded in the module: a launch
//!   must use the block size the module was generated for (`block_dim_x()` is that constant).
//! - Shared arrays are `Workgroup` variables; they are *not* zero-initialised (as in CUDA).
//!   A shared array sized at launch (dynamic shared memory) is, in SPIR-V, sized by
//!   specialization constant [`DYNAMIC_SHARED_SPEC_ID`] (elements), which the Vulkan backend sets
//!   at pipeline creation; the text targets refuse it (naga needs the length when writing).
//!
//! # Semantics kept (spoc-ir's doc comments are the contract)
//!
//! - Integer `+ - *` wrap (naga keeps the target's wrapping; the MSL writer computes signed
//!   arithmetic in unsigned types). Signed `/` and `%` divide by 1 when `lhs == MIN && rhs ==
//!   -1`, so `MIN / -1 == MIN` and `MIN % -1 == 0`; division by zero is not checked (DESIGN §2).
//!   On GLSL, whose `%` is undefined for negative operands, signed `%` is `a - (a / b) * b`.
//! - Shift amounts are taken modulo the bit width explicitly (`amount & (bits - 1)`).
//! - Float `!=` is `!(a == b)` (naga's SPIR-V writer would use an *ordered* not-equal, false
//!   for NaN); `min`/`max` return the other operand when one is NaN, as Rust does.
//! - `as` casts: float → integer clamps explicitly and maps NaN to 0 (SPIR-V's conversions are
//!   undefined out of range); integer casts extend by the source's signedness then reinterpret;
//!   `bool` → integer is a select.
//! - `round` is half-away-from-zero (`trunc(x)`, plus `sign(x)` when `|x - trunc(x)| >= 0.5`),
//!   not naga's half-to-even `round`. `signum` and `copysign` work on the sign bit (`signum(-0.0)
//!   == -1.0`). `powf` handles negative bases, zeros and `±1` as Rust's `powf` (SPIR-V's `Pow` is
//!   undefined for `x < 0`); `powi` multiplies by squaring as compiler-rt's `__powisf2` does;
//!   `hypot` scales to avoid overflow; `log10(x)` is `log2(x) * log10(2)`; `atan2` has IEEE's
//!   zero/infinity cases. Where GLSL.std.450 leaves a result undefined the value is fixed up to
//!   Rust's: NaN in gives NaN out, `sqrt`/`ln` of negatives NaN, `ln(0) = -inf`, `sin(inf)`
//!   NaN, `asin(2)` NaN, `tanh(±30) = ±1`.
//! - Float `%` is Rust's exact `fmod` (a generated routine subtracting power-of-two multiples
//!   of `|y|`), not the targets' rounding `x - y * trunc(x / y)`.
//! - `if` expressions and `&&`/`||` evaluate only the chosen operand: when a branch may have an
//!   effect or trap (a call, an atomic, an array read, an integer division, a warp operation) it
//!   is lowered to an `if` statement writing a local variable; otherwise to naga's `Select` /
//!   logical operators, which evaluate both sides.
//! - `for` loops never overflow their variable: after each iteration the remaining distance to
//!   the bound (computed unsigned) is compared with the step before stepping. A step of 0 (an
//!   error on the Interpreter) runs the body once instead of hanging the GPU.
//! - `compare_exchange` is strong: WGSL/naga's weak compare-exchange is retried while it fails
//!   spuriously (it reports "not exchanged" although the old value equals `expected`).
//!
//! # Correctly rounded `/` and `sqrt`, IEEE float behaviour
//!
//! Vulkan, WGSL and GLSL allow `/` 2.5 ULP and `sqrt` more; NVIDIA's Vulkan driver (H200,
//! driver 580) was 1 ULP off on 28% of random f32 divisions and 17% of square roots. Float `/`,
//! `recip` and `sqrt` therefore call generated routines (`spoc_div_f32`, `spoc_sqrt_f32`, and
//! the f64 ones) that scale the operands to [0.5, 2) from their bits, refine the hardware result
//! with exact remainders (Dekker's product, no `fma`: lavapipe's `Fma` is unfused) and round it
//! by a midpoint test; a subnormal quotient is rounded from the exact quotient directly. With
//! them every division and square root of normal f32 operands matched IEEE on the H200 and on
//! lavapipe (196,608 f32 and 12,288 f64 samples, `tests/naga_vulkan_run.rs`). f64 on GLSL (no
//! 64-bit integers for the bit work) keeps the hardware operations.
//!
//! The SPIR-V also declares the float controls `DenormPreserve` and `SignedZeroInfNanPreserve`
//! for its 32/64-bit floats ([`float_controls`]); a device lacking one must have it removed
//! ([`retain_float_controls`]). NVIDIA's driver has no `shaderDenormPreserveFloat32`: there f32
//! subnormals are flushed to zero, whatever the module says. lavapipe has none either but keeps
//! subnormals.
//!
//! A device whose compiler folds float arithmetic as if NaN, infinities and signed zeros did not
//! exist, although the module declares `SignedZeroInfNanPreserve` (lavapipe of Mesa 22.3 reports
//! the mode and folds `x * 0.0` to `0.0`, `x + 0.0` to `x`, `0.0 - x` to `-x`), or that cannot
//! take the mode, is marked [`crate::Capabilities::float_controls_ignored`]: every float
//! literal is then `bits ^ z` reinterpreted, where `z` is a zero the driver cannot know (derived
//! from a buffer's `OpArrayLength` at the kernel's entry, kept in a private global), and so is
//! the integer operand of every integer-to-float conversion (`(0u32 as f32) * x`, `(p ^ p) as
//! f64 + x`), so no constant is left for such folds to match. The Vulkan backend measures each
//! device when it opens it.
//!
//! An `i32` is widened to 64 bits by zero-extending its bits and computing `(w ^ 2^31) - 2^31`,
//! not by `OpSConvert`, whose results lavapipe (Mesa 22.3) ordered as if zero-extended.
//!
//! # No contraction
//!
//! - **SPIR-V**: naga's writer emits no `NoContraction` decoration, so the words are
//!   post-processed ([`no_contraction`]): every `OpFAdd`, `OpFSub`, `OpFMul` and `OpFDiv` result
//!   gets `OpDecorate %id NoContraction`, inserted at the end of the annotation section. Only
//!   `mul_add` becomes an `Fma`.
//! - **MSL**: the text starts with `#pragma METAL fp math_mode(safe)` and `#pragma METAL fp
//!   contract(off)` (honoured by Metal 3.2 compilers); with older compilers the Metal backend
//!   must compile with `MTLCompileOptions.mathMode = .safe` (`fastMathEnabled = false`), whose
//!   default allows contraction and fast math.
//! - **WGSL** offers no way to forbid contraction: the WebGPU implementation decides.
//! - **GLSL** (for inspection): naga writes no `precise` qualifiers, so a GL compiler may
//!   contract; the Vulkan path is the SPIR-V one.
//!
//! # Barriers
//!
//! `sync_threads()` is an `OpControlBarrier` of the workgroup that makes workgroup and
//! storage-buffer memory available and visible *within the workgroup* (memory scope
//! `Workgroup`, set by [`workgroup_barriers`] after naga's writer, which would give it `Device`
//! scope): CUDA's `__syncthreads()` promises no more, and NVIDIA's driver fences device memory
//! at a `Device`-scope barrier.
//!
//! # Precision caveats (documented, not fixed here)
//!
//! Vulkan allows `Fma` to be unfused: `mul_add` is the target's `Fma`, fused on NVIDIA (checked
//! on the H200) but not on lavapipe, where it rounds twice. With
//! [`crate::Capabilities::unfused_fma_f32`] an `f32` `mul_add` is computed exactly in `f64`
//! instead (exact product, sum rounded to odd, one rounding to `f32`); an `f64` `mul_add` stays
//! the target's `Fma` (the Vulkan backend refuses it on a device where that is unfused).
//! Transcendentals follow the driver:
//! Vulkan bounds trigonometry's error on [-π, π] only (lavapipe's `sin(1e30)` is -1, NVIDIA's
//! `cos(30)` 2e-5 off), lets `asin`/`acos` inherit `atan2`'s error (lavapipe's `asin(0.5)` is
//! 4e-4 off) and may flush subnormals. `f64` transcendentals (`exp`, `ln`, `sin`, `powf`, …)
//! are refused on Vulkan and GLSL: GLSL.std.450 defines them for 32-bit floats only.
//!
//! # Capabilities
//!
//! `f64` needs `caps.fp64` (Metal and WebGPU have none); 64-bit atomics need
//! `caps.int64_atomics`; float atomic add needs `caps.float_atomic_add` (not on WebGPU or GLSL);
//! warp operations need `caps.subgroups` (ballot returns the low 32 lanes). `i64`/`u64` and `f16`
//! have no [`crate::Capabilities`] flag: they are emitted whenever the target language has them
//! (not on WebGPU for 64-bit integers, nor in naga's GLSL for either), and the SPIR-V module
//! then declares `Int64`, or `Float16` + `StorageBuffer16BitAccess` +
//! `UniformAndStorageBuffer16BitAccess`, which the Vulkan backend must check against the
//! device's `shaderInt64`, or `shaderFloat16` + `storageBuffer16BitAccess` +
//! `uniformAndStorageBuffer16BitAccess` features. Memory fences are
//! refused on WebGPU (WGSL has no fence without a barrier) and Metal (naga writes them as
//! `threadgroup_barrier`, a control barrier).

mod build;
mod checks;
mod expr;
mod func;
mod intrin;
mod math;
mod stmt;
mod types;

use crate::{Code, CodegenError, Options, Source, Target};
use naga::back;
use naga::valid::{Capabilities as NCaps, ShaderStages, SubgroupOperationSet, ValidationFlags};
use spoc_ir::Kernel;

pub use types::{scalar_params_layout, ParamSlot};

/// The specialization constant (a `u32`, in elements) that sizes a kernel's dynamic shared
/// array in the SPIR-V: the Vulkan backend sets it at pipeline creation from the launch's
/// dynamic shared-memory size (`bytes / size_of::<T>()`); `len()` of the array reads it too.
pub const DYNAMIC_SHARED_SPEC_ID: u32 = 0;

/// The descriptor binding of the scalar-parameter block.
pub const SCALAR_PARAMS_BINDING: u32 = 0;

/// The descriptor binding of the `j`-th buffer parameter (counting buffer parameters only, in
/// parameter order).
pub fn buffer_binding(j: usize) -> u32 {
    1 + j as u32
}

/// Generates SPIR-V / MSL / WGSL / GLSL for `kernel` (already validated by [`spoc_ir::validate()`]).
///
/// # Errors
/// - [`CodegenError::Unsupported`] when the target or the device's capabilities cannot express a
///   node (the error names the node, the target and the capability);
/// - [`CodegenError::FeatureNotSupported`] for a block size with a zero dimension;
/// - [`CodegenError::Backend`] when naga's validator or writer rejects the module (a bug here).
pub fn generate(
    target: Target,
    kernel: &Kernel,
    opts: &Options<'_>,
) -> Result<Source, CodegenError> {
    let block = opts.block.unwrap_or([1, 1, 1]);
    if block.contains(&0) {
        return Err(CodegenError::FeatureNotSupported {
            backend: target.backend_name().into(),
            feature: format!(
                "block size {block:?} for kernel `{}` (every dimension must be at least 1)",
                kernel.name
            ),
        });
    }
    let (allowed, device) = allowed_capabilities(target, opts);
    let built = build::build_module(target, kernel, opts, block, (allowed, device))?;
    let backend_err = |message: String| CodegenError::Backend {
        kernel: kernel.name.clone(),
        target: target.backend_name(),
        message,
    };

    let mut validator = naga::valid::Validator::new(
        ValidationFlags::all() & !ValidationFlags::CONTROL_FLOW_UNIFORMITY,
        allowed,
    );
    if allowed.contains(NCaps::SUBGROUP) {
        validator
            .subgroup_stages(ShaderStages::COMPUTE)
            .subgroup_operations(SubgroupOperationSet::all());
    }
    // naga's validator and writers may panic on a malformed module: that is a bug here too,
    // reported as an error rather than unwinding into the caller.
    let guarded = |what: &str, f: &mut dyn FnMut() -> Result<(), CodegenError>| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(backend_err(format!("naga {what} panicked: {msg}")))
        })
    };
    let mut info = None;
    guarded("validator", &mut || {
        info = Some(
            validator
                .validate(&built.module)
                .map_err(|e| backend_err(format!("naga validation: {}", error_chain(&e))))?,
        );
        Ok(())
    })?;
    let info = info.expect("set by the validator call");

    let entry = kernel.name.clone();
    let mut written = None;
    guarded("writer", &mut || {
        written = Some(write(target, &built, &info, &entry, &backend_err)?);
        Ok(())
    })?;
    let (code, entry) = written.expect("set by the writer call");
    Ok(Source {
        target,
        entry,
        code,
        abi: crate::abi::describe(target, kernel, opts)?,
    })
}

/// Writes the validated module for `target`: the code and the entry point's name in it.
fn write(
    target: Target,
    built: &build::Built,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    backend_err: &dyn Fn(String) -> CodegenError,
) -> Result<(Code, String), CodegenError> {
    let entry = entry.to_string();
    Ok(match target {
        Target::Vulkan => {
            let binding_map = built
                .bindings
                .iter()
                .map(|&(binding, _)| {
                    (
                        naga::ResourceBinding { group: 0, binding },
                        back::spv::BindingInfo {
                            descriptor_set: 0,
                            binding,
                            binding_array_size: None,
                        },
                    )
                })
                .collect();
            let options = back::spv::Options {
                lang_version: (1, 5),
                binding_map,
                flags: back::spv::WriterFlags::DEBUG,
                fake_missing_bindings: false,
                zero_initialize_workgroup_memory:
                    back::spv::ZeroInitializeWorkgroupMemoryMode::None,
                force_loop_bounding: false,
                emit_int_div_checks: false,
                // Compute shaders have no 16-bit inputs or outputs.
                use_storage_input_output_16: false,
                ..back::spv::Options::default()
            };
            let pipeline = back::spv::PipelineOptions {
                shader_stage: naga::ShaderStage::Compute,
                entry_point: entry.clone(),
            };
            let words = back::spv::write_vec(&built.module, info, &options, Some(&pipeline))
                .map_err(|e| backend_err(format!("naga SPIR-V writer: {}", error_chain(&e))))?;
            let mut words = float_controls(&no_contraction(&words));
            workgroup_barriers(&mut words);
            if let Some(len) = built.dynamic_shared {
                words =
                    specialize_length(&words, len, DYNAMIC_SHARED_SPEC_ID).ok_or_else(|| {
                        backend_err(format!(
                            "the dynamic shared array's length constant {len} is not in the SPIR-V"
                        ))
                    })?;
            }
            (Code::SpirV(words), entry)
        }
        Target::WebGpu => {
            let text =
                back::wgsl::write_string(&built.module, info, back::wgsl::WriterFlags::empty())
                    .map_err(|e| backend_err(format!("naga WGSL writer: {}", error_chain(&e))))?;
            let entry = wgsl_entry_name(&text).unwrap_or(entry);
            // naga writes no `enable subgroups;`, which WGSL requires for subgroup built-ins.
            let text = if built.subgroups {
                format!("enable subgroups;\n{text}")
            } else {
                text
            };
            (Code::Text(text), entry)
        }
        Target::Metal => {
            let options = msl_options(built, &entry);
            let pipeline = back::msl::PipelineOptions {
                entry_point: Some((naga::ShaderStage::Compute, entry.clone())),
                ..Default::default()
            };
            let (text, tinfo) =
                back::msl::write_string(&built.module, info, &options, &pipeline)
                    .map_err(|e| backend_err(format!("naga MSL writer: {}", error_chain(&e))))?;
            let entry = match tinfo.entry_point_names.first() {
                Some(Ok(name)) => name.clone(),
                Some(Err(e)) => return Err(backend_err(format!("naga MSL writer: {e}"))),
                None => return Err(backend_err("naga MSL writer wrote no entry point".into())),
            };
            let text = format!(
                "// spoc: IEEE-754 float semantics, no contraction (see spoc_codegen::naga)\n\
                 #pragma METAL fp math_mode(safe)\n#pragma METAL fp contract(off)\n{text}"
            );
            (Code::Text(text), entry)
        }
        Target::Glsl => {
            let options = back::glsl::Options {
                version: back::glsl::Version::Desktop(450),
                writer_flags: back::glsl::WriterFlags::empty(),
                binding_map: Default::default(),
                zero_initialize_workgroup_memory: false,
            };
            let pipeline = back::glsl::PipelineOptions {
                shader_stage: naga::ShaderStage::Compute,
                entry_point: entry.clone(),
                multiview: None,
            };
            let mut text = String::new();
            let mut writer = back::glsl::Writer::new(
                &mut text,
                &built.module,
                info,
                &options,
                &pipeline,
                naga::proc::BoundsCheckPolicies::default(),
            )
            .map_err(|e| backend_err(format!("naga GLSL writer: {}", error_chain(&e))))?;
            writer
                .write()
                .map_err(|e| backend_err(format!("naga GLSL writer: {}", error_chain(&e))))?;
            (Code::Text(text), "main".to_string())
        }
        other => {
            return Err(backend_err(format!(
                "the naga generator does not write {}",
                other.backend_name()
            )))
        }
    })
}

/// The capabilities naga may use for `target` (what the device offers, `opts.caps`, and the
/// target language can express), and the device's alone. `i64`/`u64` and `f16` have no device
/// flag (see the module doc).
fn allowed_capabilities(target: Target, opts: &Options<'_>) -> (NCaps, NCaps) {
    let mut device = NCaps::SHADER_INT64 | NCaps::SHADER_FLOAT16;
    if opts.caps.fp64 {
        device |= NCaps::FLOAT64;
    }
    if opts.caps.int64_atomics {
        device |= NCaps::SHADER_INT64_ATOMIC_ALL_OPS | NCaps::SHADER_INT64_ATOMIC_MIN_MAX;
    }
    if opts.caps.float_atomic_add {
        device |= NCaps::SHADER_FLOAT32_ATOMIC;
    }
    if opts.caps.subgroups {
        device |= NCaps::SUBGROUP | NCaps::SUBGROUP_BARRIER;
    }
    let language = match target {
        Target::Vulkan => back::spv::supported_capabilities(),
        Target::Metal => back::msl::supported_capabilities(),
        // naga's GLSL writer declares 64-bit integers and f16 but can write neither.
        Target::Glsl => {
            back::glsl::supported_capabilities()
                - NCaps::SHADER_INT64
                - NCaps::SHADER_FLOAT16
                - NCaps::SHADER_INT64_ATOMIC_ALL_OPS
                - NCaps::SHADER_INT64_ATOMIC_MIN_MAX
        }
        // Standard WGSL (what browsers accept): `enable f16;` and `enable subgroups;` exist;
        // 64-bit types, float atomics and subgroup barriers do not.
        Target::WebGpu => NCaps::SHADER_FLOAT16 | NCaps::SUBGROUP,
        _ => NCaps::empty(),
    };
    (device & language, device)
}

/// naga's MSL options: the scalar block at buffer 0, buffer j at `1 + j`, the sizes buffer after
/// them; no workgroup zeroing, no integer-division guards (spoc handles `MIN / -1` itself).
fn msl_options(built: &build::Built, entry: &str) -> back::msl::Options {
    let mut resources = back::msl::BindingMap::default();
    for &(binding, mutable) in &built.bindings {
        resources.insert(
            naga::ResourceBinding { group: 0, binding },
            back::msl::BindTarget {
                buffer: Some(binding as u8),
                mutable,
                ..Default::default()
            },
        );
    }
    let sizes = built
        .bindings
        .iter()
        .map(|&(b, _)| b + 1)
        .max()
        .unwrap_or(1)
        .max(1);
    let mut per_entry_point_map = back::msl::EntryPointResourceMap::default();
    per_entry_point_map.insert(
        entry.to_string(),
        back::msl::EntryPointResources {
            resources,
            immediates_buffer: None,
            sizes_buffer: Some(sizes as u8),
        },
    );
    back::msl::Options {
        lang_version: (3, 0),
        per_entry_point_map,
        fake_missing_bindings: false,
        zero_initialize_workgroup_memory: false,
        force_loop_bounding: true,
        emit_int_div_checks: false,
        ..Default::default()
    }
}

/// The name of the `@compute` entry point in WGSL text (naga may rename a reserved word).
fn wgsl_entry_name(text: &str) -> Option<String> {
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("@compute") {
            for l in lines.by_ref() {
                if let Some(rest) = l.trim_start().strip_prefix("fn ") {
                    return rest.split('(').next().map(|s| s.trim().to_string());
                }
            }
        }
    }
    None
}

/// An error and its sources, joined by `": "`.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}

/// The words of a SPIR-V module header (magic number, version, generator, bound, schema).
const HEADER: usize = 5;

/// The instructions of the SPIR-V module `words` after its header, each as its word offset, its
/// opcode and its words; `None` where an instruction's word count is 0 or runs past the end.
/// The stream is checked whole first, then walked without collecting it.
fn instructions(words: &[u32]) -> Option<Instructions<'_>> {
    let mut at = HEADER;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return None;
        }
        at += count;
    }
    Some(Instructions { words, at: HEADER })
}

/// The iterator [`instructions`] returns, over a stream it has checked.
struct Instructions<'w> {
    words: &'w [u32],
    at: usize,
}

impl<'w> Iterator for Instructions<'w> {
    type Item = (usize, u32, &'w [u32]);

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.at;
        let first = *self.words.get(at)?;
        let count = (first >> 16) as usize;
        self.at += count;
        Some((at, first & 0xffff, &self.words[at..at + count]))
    }
}

/// [`instructions`] of `words` if they start with a SPIR-V header and parse; `None` otherwise.
fn module_instructions(words: &[u32]) -> Option<Instructions<'_>> {
    if words.len() < HEADER || words[0] != 0x0723_0203 {
        return None;
    }
    instructions(words)
}

/// Declares IEEE float behaviour for the module's 32- and 64-bit floats (SPIR-V 1.4 float
/// controls, §3.6 execution modes 4459 and 4461; `OpExtension "SPV_KHR_float_controls"` too in a
/// module older than 1.4): `OpCapability DenormPreserve` and `SignedZeroInfNanPreserve`, and the
/// matching `OpExecutionMode %entry DenormPreserve <width>` / `SignedZeroInfNanPreserve <width>`
/// for every entry point. Without them a Vulkan driver may flush subnormals (NVIDIA's does) and
/// assume no NaN, infinity or signed zero. The device must report
/// `shaderDenormPreserveFloat32/64` and `shaderSignedZeroInfNanPreserveFloat32/64`
/// (`VkPhysicalDeviceFloatControlsProperties`) for the widths the module uses. Words that do not
/// parse as a module are returned unchanged.
pub fn float_controls(words: &[u32]) -> Vec<u32> {
    let Some(insts) = module_instructions(words) else {
        return words.to_vec();
    };
    let (mut widths, mut entries) = (Vec::new(), Vec::new());
    let (mut after_caps, mut after_modes) = (None, None);
    for (at, op, inst) in insts {
        let end = Some(at + inst.len());
        match op {
            spv_op::CAPABILITY => after_caps = end,
            spv_op::ENTRY_POINT if inst.len() >= 3 => {
                entries.push(inst[2]);
                after_modes = end;
            }
            spv_op::EXECUTION_MODE | spv_op::EXECUTION_MODE_ID => after_modes = end,
            spv_op::TYPE_FLOAT if inst.len() >= 3 => {
                let w = inst[2];
                if (w == 32 || w == 64) && !widths.contains(&w) {
                    widths.push(w);
                }
            }
            _ => {}
        }
    }
    let (Some(after_caps), Some(after_modes)) = (after_caps, after_modes) else {
        return words.to_vec();
    };
    if widths.is_empty() {
        return words.to_vec();
    }
    widths.sort_unstable();
    let mut caps = Vec::new();
    for cap in [
        naga::back::spv::Capability::DenormPreserve,
        naga::back::spv::Capability::SignedZeroInfNanPreserve,
    ] {
        caps.extend_from_slice(&[(2 << 16) | spv_op::CAPABILITY, cap as u32]);
    }
    // Core in SPIR-V 1.4; before it, the capabilities come from SPV_KHR_float_controls.
    if words[1] < 0x0001_0400 {
        let name = b"SPV_KHR_float_controls\0";
        let mut ext: Vec<u32> = name
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect();
        ext.insert(0, ((ext.len() as u32 + 1) << 16) | spv_op::EXTENSION);
        caps.extend_from_slice(&ext);
    }
    let mut modes = Vec::new();
    for e in &entries {
        for w in &widths {
            for mode in [
                spv_op::MODE_DENORM_PRESERVE,
                spv_op::MODE_SIGNED_ZERO_INF_NAN,
            ] {
                modes.extend_from_slice(&[(4 << 16) | spv_op::EXECUTION_MODE, *e, mode, *w]);
            }
        }
    }
    let mut out = Vec::with_capacity(words.len() + caps.len() + modes.len());
    out.extend_from_slice(&words[..after_caps]);
    out.extend_from_slice(&caps);
    out.extend_from_slice(&words[after_caps..after_modes]);
    out.extend_from_slice(&modes);
    out.extend_from_slice(&words[after_modes..]);
    out
}

/// Turns the 32-bit unsigned `OpConstant` holding `value` into an `OpSpecConstant` with
/// `SpecId spec_id` (its default stays `value`). `None` if no such constant exists.
fn specialize_length(words: &[u32], value: u32, spec_id: u32) -> Option<Vec<u32>> {
    let mut uint = None;
    let mut target = None;
    let mut first_type = None;
    for (at, op, inst) in instructions(words)? {
        let count = inst.len();
        match op {
            spv_op::TYPE_INT if count == 4 && inst[2] == 32 && inst[3] == 0 => {
                uint = Some(inst[1]);
            }
            spv_op::CONSTANT if count == 4 && Some(inst[1]) == uint && inst[3] == value => {
                target = Some((at, inst[2]));
            }
            _ => {}
        }
        if first_type.is_none() && (spv_op::TYPE_FIRST..=spv_op::TYPE_LAST).contains(&op) {
            first_type = Some(at);
        }
    }
    let (at, id) = target?;
    let first_type = first_type?;
    let mut out = words.to_vec();
    out[at] = (out[at] & 0xffff_0000) | spv_op::SPEC_CONSTANT;
    out.splice(
        first_type..first_type,
        [(4 << 16) | spv_op::DECORATE, id, spv_op::SPEC_ID, spec_id],
    );
    Some(out)
}

/// A float-controls execution mode that [`float_controls`] declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatMode {
    /// Subnormals are kept, not flushed to zero (`shaderDenormPreserveFloat{32,64}`).
    DenormPreserve,
    /// NaN, infinities and signed zeros behave as IEEE-754 says
    /// (`shaderSignedZeroInfNanPreserveFloat{32,64}`).
    SignedZeroInfNanPreserve,
}

/// Removes the float-controls execution modes that `keep(mode, width)` rejects, and the
/// capability of a mode no entry point uses any more. A Vulkan backend calls it for a device
/// whose `VkPhysicalDeviceFloatControlsProperties` lack a mode (lavapipe has no
/// `shaderDenormPreserveFloat32`, although it keeps subnormals): declaring an unsupported mode
/// is invalid usage, and dropping it loses that guarantee on that device only. Words that do
/// not parse as a module are returned unchanged.
pub fn retain_float_controls(words: &[u32], keep: impl Fn(FloatMode, u32) -> bool) -> Vec<u32> {
    let Some(insts) = module_instructions(words) else {
        return words.to_vec();
    };
    let mode_of = |m: u32| match m {
        spv_op::MODE_DENORM_PRESERVE => Some(FloatMode::DenormPreserve),
        spv_op::MODE_SIGNED_ZERO_INF_NAN => Some(FloatMode::SignedZeroInfNanPreserve),
        _ => None,
    };
    let mut used = Vec::new();
    let mut kept = Vec::with_capacity(words.len());
    kept.extend_from_slice(&words[..HEADER]);
    for (_, op, inst) in insts {
        if op == spv_op::EXECUTION_MODE && inst.len() == 4 {
            if let Some(mode) = mode_of(inst[2]) {
                if !keep(mode, inst[3]) {
                    continue;
                }
                used.push(mode);
            }
        }
        kept.extend_from_slice(inst);
    }
    // Drop the capabilities of modes no longer declared.
    let mut out = Vec::with_capacity(kept.len());
    out.extend_from_slice(&kept[..HEADER]);
    // `kept` holds whole instructions of a module that parsed.
    for (_, op, inst) in instructions(&kept).into_iter().flatten() {
        let unused_cap = op == spv_op::CAPABILITY
            && inst.len() == 2
            && [
                (
                    naga::back::spv::Capability::DenormPreserve,
                    FloatMode::DenormPreserve,
                ),
                (
                    naga::back::spv::Capability::SignedZeroInfNanPreserve,
                    FloatMode::SignedZeroInfNanPreserve,
                ),
            ]
            .iter()
            .any(|(cap, mode)| inst[1] == *cap as u32 && !used.contains(mode));
        if !unused_cap {
            out.extend_from_slice(inst);
        }
    }
    out
}

/// SPIR-V opcodes, decorations and execution modes used by [`no_contraction`] and
/// [`float_controls`] (SPIR-V 1.5 specification, section 3).
mod spv_op {
    pub const NAME_FIRST: [u32; 12] = [
        2,  // OpSourceContinued
        3,  // OpSource
        4,  // OpSourceExtension
        5,  // OpName
        6,  // OpMemberName
        7,  // OpString
        8,  // OpLine
        10, // OpExtension
        11, // OpExtInstImport
        14, // OpMemoryModel
        15, // OpEntryPoint
        16, // OpExecutionMode
    ];
    pub const PREAMBLE_MORE: [u32; 11] = [
        17,   // OpCapability
        71,   // OpDecorate
        72,   // OpMemberDecorate
        73,   // OpDecorationGroup
        74,   // OpGroupDecorate
        75,   // OpGroupMemberDecorate
        317,  // OpNoLine
        330,  // OpModuleProcessed
        331,  // OpExecutionModeId
        332,  // OpDecorateId
        5632, // OpDecorateString
    ];
    pub const MEMBER_DECORATE_STRING: u32 = 5633;
    pub const CAPABILITY: u32 = 17;
    pub const EXTENSION: u32 = 10;
    pub const ENTRY_POINT: u32 = 15;
    pub const EXECUTION_MODE: u32 = 16;
    pub const EXECUTION_MODE_ID: u32 = 331;
    pub const TYPE_FLOAT: u32 = 22;
    pub const TYPE_INT: u32 = 21;
    /// OpTypeVoid … OpTypeForwardPointer: the first and last type declarations.
    pub const TYPE_FIRST: u32 = 19;
    pub const TYPE_LAST: u32 = 39;
    pub const CONSTANT: u32 = 43;
    pub const SPEC_CONSTANT: u32 = 50;
    /// Decoration SpecId.
    pub const SPEC_ID: u32 = 1;
    /// Execution mode DenormPreserve (float controls).
    pub const MODE_DENORM_PRESERVE: u32 = 4459;
    /// Execution mode SignedZeroInfNanPreserve (float controls).
    pub const MODE_SIGNED_ZERO_INF_NAN: u32 = 4461;
    pub const DECORATE: u32 = 71;
    pub const NO_CONTRACTION: u32 = 42;
    pub const CONTROL_BARRIER: u32 = 224;
    /// Scope `Device` and `Workgroup` (SPIR-V §3.27).
    pub const SCOPE_DEVICE: u32 = 1;
    pub const SCOPE_WORKGROUP: u32 = 2;
    /// OpFAdd, OpFSub, OpFMul, OpFDiv.
    pub const FLOAT_ARITH: [u32; 4] = [129, 131, 133, 136];
}

/// Gives every block barrier (`sync_threads()`) `Workgroup` memory scope instead of the
/// `Device` scope naga writes, keeping its semantics (acquire-release of workgroup and
/// storage-buffer memory): the meaning of CUDA's `__syncthreads()` (PTX `bar.sync`, which
/// orders the memory accesses of the CTA's threads among those threads: PTX ISA §9.7.13.1,
/// "bar, barrier"), and of GLSL's `groupMemoryBarrier(); barrier();`.
///
/// naga's writer gives a barrier on `Barrier::STORAGE` `Device` memory scope (every invocation
/// of the device sees the writes made before it), more than a block barrier promises and far
/// dearer: NVIDIA's driver fences device memory at each such barrier, which made the
/// barrier-bound programs (`scan`, `reduction`, `radix_sort`) 5-20x slower on its Vulkan than
/// on CUDA. The rewrite is an operand swap in place: `OpControlBarrier %exec %mem %sem` whose
/// execution scope is the constant `Workgroup` (2) and memory scope the constant `Device` (1)
/// takes the execution-scope constant as its memory scope too (SPIR-V §3.27 "Scope", §3.42.20
/// `OpControlBarrier`). Fences (`fence_block()`, `fence_device()`) and subgroup barriers are left
/// as they are. Words that do not parse as a module are left unchanged.
pub fn workgroup_barriers(words: &mut [u32]) {
    let Some(insts) = module_instructions(words) else {
        return;
    };
    let mut uint = None;
    // Every 32-bit unsigned constant: a scope operand is one (its id, its value).
    let mut scopes = Vec::new();
    let mut barriers = Vec::new();
    for (at, op, inst) in insts {
        match op {
            spv_op::TYPE_INT if inst.len() == 4 && inst[2] == 32 && inst[3] == 0 => {
                uint = Some(inst[1]);
            }
            spv_op::CONSTANT if inst.len() == 4 && Some(inst[1]) == uint => {
                scopes.push((inst[2], inst[3]));
            }
            spv_op::CONTROL_BARRIER if inst.len() == 4 => barriers.push((at, inst[1], inst[2])),
            _ => {}
        }
    }
    let scope = |id: u32| scopes.iter().find(|&&(c, _)| c == id).map(|&(_, v)| v);
    for (at, exec, mem) in barriers {
        if scope(exec) == Some(spv_op::SCOPE_WORKGROUP) && scope(mem) == Some(spv_op::SCOPE_DEVICE)
        {
            words[at + 2] = exec;
        }
    }
}

/// Adds `OpDecorate %r NoContraction` for the result `%r` of every `OpFAdd`, `OpFSub`, `OpFMul`
/// and `OpFDiv` of a SPIR-V module, so that no consumer fuses them into an FMA (IR semantics:
/// only `mul_add` is fused). The decorations go at the end of the annotation section (before
/// the first type or constant declaration), where the logical layout requires them. Words that do
/// not parse as a module are returned unchanged.
pub fn no_contraction(words: &[u32]) -> Vec<u32> {
    let Some(insts) = module_instructions(words) else {
        return words.to_vec();
    };
    let mut results = Vec::new();
    let mut insert_at = None;
    for (at, op, inst) in insts {
        let preamble = spv_op::NAME_FIRST.contains(&op)
            || spv_op::PREAMBLE_MORE.contains(&op)
            || op == spv_op::MEMBER_DECORATE_STRING;
        if insert_at.is_none() && !preamble {
            insert_at = Some(at);
        }
        if spv_op::FLOAT_ARITH.contains(&op) && inst.len() >= 3 {
            results.push(inst[2]);
        }
    }
    let Some(insert_at) = insert_at else {
        return words.to_vec();
    };
    let mut out = Vec::with_capacity(words.len() + 3 * results.len());
    out.extend_from_slice(&words[..insert_at]);
    for id in results {
        out.extend_from_slice(&[(3 << 16) | spv_op::DECORATE, id, spv_op::NO_CONTRACTION]);
    }
    out.extend_from_slice(&words[insert_at..]);
    out
}
