//! External kernels of the Vulkan backend ([`crate::Executor::run_source`]): SPIR-V (as words or
//! hexadecimal text) and GLSL compute, built into pipelines whose ABI is read off the
//! arguments, cached by source, entry point, block and argument kinds.

use super::device::VkDev;
use super::pipeline::{self, VkKernel};
use super::{glsl, spv, VulkanBackend, NAME};
use crate::args::Arg;
use crate::backend::{CompileOptions, Module, SourceLang};
use crate::cache::CacheKey;
use crate::dims::Dims;
use crate::error::{Error, LaunchProblem, Result};
#[cfg(doc)]
use crate::executor::Backend;
use spoc_ir::ContentHash;
use std::sync::Arc;

/// SPIR-V words as little-endian bytes (for hashing).
fn spirv_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// SPIR-V words as the text [`crate::Executor::run_source`] takes for [`SourceLang::SpirV`]: each
/// word as 8 hexadecimal digits, 8 words a line.
pub fn spirv_words_to_text(words: &[u32]) -> String {
    words
        .chunks(8)
        .map(|c| {
            c.iter()
                .map(|w| format!("{w:08x}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parses [`spirv_words_to_text`]'s format: hexadecimal words (an optional `0x` prefix)
/// separated by whitespace or commas.
///
/// # Errors
/// [`Error::Compile`] naming the first token that is not a 32-bit hexadecimal number.
pub fn spirv_text_to_words(text: &str) -> Result<Vec<u32>> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            let h = t
                .strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .unwrap_or(t);
            u32::from_str_radix(h, 16).map_err(|_| Error::Compile {
                backend: NAME.into(),
                kernel: "<external SPIR-V>".into(),
                message: format!(
                    "`{t}` is not a SPIR-V word (expected hexadecimal words, see spirv_words_to_text)"
                ),
            })
        })
        .collect()
}

impl VulkanBackend {
    /// Compiles (cached per device, source, entry point, block and argument kinds) and runs
    /// the SPIR-V compute entry point `entry` of `words`, binding `args` per the
    /// [module's ABI](super) for external kernels, after checking grid and block against the
    /// device's limits, the module's workgroup size against `block`, and its capabilities
    /// against the device's features. Waits for the kernel.
    ///
    /// # Errors
    /// [`Error::InvalidLaunch`] for a grid or block the device refuses or the module does not
    /// declare, or a non-zero `shared_mem`; [`Error::FeatureNotSupported`] for a capability
    /// the device lacks; [`Error::Compile`] for words that are not SPIR-V, a missing entry
    /// point, or a driver's refusal; [`Error::Driver`] for a failed submission.
    #[allow(clippy::too_many_arguments)]
    pub fn run_spirv(
        &self,
        device: usize,
        words: &[u32],
        entry: &str,
        grid: Dims,
        block: Dims,
        shared_mem: usize,
        args: &[Arg<'_>],
    ) -> Result<()> {
        self.run_external(
            device,
            SourceLang::SpirV,
            ContentHash::of_parts([spirv_bytes(words).as_slice()]),
            entry,
            grid,
            block,
            shared_mem,
            args,
            |dev| {
                let scan = Self::check_spirv(dev, words, entry, false)?;
                let Some(ep) = scan.entry_points.iter().find(|e| e.name == entry) else {
                    return Err(self.core.compile_err(
                        entry,
                        format!(
                            "the SPIR-V has no compute entry point `{entry}` (it has: {})",
                            scan.entry_points
                                .iter()
                                .map(|e| e.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
                Ok((words.to_vec(), entry.to_string(), ep.local_size))
            },
        )
    }

    /// The shared path of external kernels: `make` turns the source into (words, entry point,
    /// declared workgroup size) on a cache miss.
    #[allow(clippy::too_many_arguments)]
    fn run_external(
        &self,
        device: usize,
        lang: SourceLang,
        hash: ContentHash,
        name: &str,
        grid: Dims,
        block: Dims,
        shared_mem: usize,
        args: &[Arg<'_>],
        make: impl FnOnce(&VkDev) -> Result<(Vec<u32>, String, Option<[u32; 3]>)>,
    ) -> Result<()> {
        let dev = self.dev(device)?;
        crate::dims::check_dims(name, &dev.caps, grid, block, shared_mem)?;
        if shared_mem > 0 {
            return Err(Error::invalid_launch(
                name,
                LaunchProblem::Rejected {
                    message: format!(
                        "{shared_mem} bytes of dynamic shared memory: Vulkan kernels declare \
                         their shared arrays, pass 0"
                    ),
                },
            ));
        }
        let abi = spoc_codegen::Abi::external_bindings(crate::bind::external_params(args));
        let signature = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(_) | Arg::BufferMut(_) => "b",
                Arg::I64(_) | Arg::U64(_) | Arg::F64(_) => "s8",
                _ => "s4",
            })
            .collect::<Vec<_>>()
            .join(",");
        let key = CacheKey::new(
            device,
            format!("{lang:?}:{name}"),
            hash,
            CompileOptions {
                block: Some(block),
                flags: vec![format!("args:{signature}")],
                ..CompileOptions::default()
            },
        );
        let b = block.to_array();
        let module = self.core.cache().get_or_build(key, || {
            let (words, entry, local) = make(dev)?;
            if let Some(local) = local {
                if local != b {
                    return Err(Error::invalid_launch(
                        name,
                        LaunchProblem::Rejected {
                            message: format!(
                                "the shader's workgroup size is {local:?}, the launch's block \
                                 {b:?}: they must be equal"
                            ),
                        },
                    ));
                }
            }
            let k = pipeline::build(dev, &words, &entry, name, b, None, abi, None)
                .map_err(|message| self.core.compile_err(name, message))?;
            Ok(Arc::new(Module::new(device, Box::new(k))))
        })?;
        let k = self
            .core
            .module::<VkKernel>(&module, "not a Vulkan module")?;
        self.dispatch(k, grid, args)?;
        // Waits for the kernel, as `run_source` does on every backend.
        crate::backend::DeviceMemory::synchronize(self, device)
    }

    /// [`crate::Executor::run_source`]: SPIR-V text or GLSL compute, run as [`VulkanBackend::run_spirv`]
    /// runs words; `launch` is (grid, block, dynamic shared bytes).
    pub(super) fn run_external_source(
        &self,
        device: usize,
        source: &str,
        lang: SourceLang,
        kernel_name: &str,
        launch: (Dims, Dims, usize),
        args: &[Arg<'_>],
    ) -> Result<()> {
        match lang {
            SourceLang::SpirV => {
                let words = spirv_text_to_words(source)?;
                self.run_spirv(
                    device,
                    &words,
                    kernel_name,
                    launch.0,
                    launch.1,
                    launch.2,
                    args,
                )
            }
            SourceLang::Glsl => self.run_external(
                device,
                lang,
                ContentHash::of_parts([source.as_bytes()]),
                kernel_name,
                launch.0,
                launch.1,
                launch.2,
                args,
                |dev| {
                    let v = spv::max_spirv_for(dev.props.api_version).min((1, 5));
                    let c = glsl::compile(source, (v.0 as u8, v.1 as u8))
                        .map_err(|message| self.core.compile_err(kernel_name, message))?;
                    Self::check_spirv(dev, &c.words, kernel_name, false)?;
                    Ok((c.words, c.entry, Some(c.local_size)))
                },
            ),
            _ => Err(Error::unsupported(
                NAME,
                format!("external {lang:?} kernels"),
            )),
        }
    }
}
