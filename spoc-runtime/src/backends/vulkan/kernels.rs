//! Generated kernels of the Vulkan backend: checking their SPIR-V against the device, building
//! their pipelines (one per block size and dynamic shared length), and dispatching them.

use super::device::{VkDev, VulkanDeviceProps};
use super::pipeline::{self, Origin, VkKernel};
use super::{spv, VulkanBackend, NAME};
use crate::args::Arg;
use crate::backend::{CompileOptions, Source, Target};
use crate::dims::Dims;
use crate::error::{Error, LaunchProblem, Result};
use spoc_codegen::Code;
use spoc_ir::ValidKernel;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// `words` without the float-controls execution modes `props`'s device lacks
/// (`spoc_codegen::naga::retain_float_controls`).
pub(crate) fn retain_supported_float_controls(
    words: &[u32],
    props: &VulkanDeviceProps,
) -> Vec<u32> {
    spoc_codegen::naga::retain_float_controls(words, |mode, width| {
        let i = match width {
            16 => 0,
            32 => 1,
            64 => 2,
            _ => return false,
        };
        match mode {
            spoc_codegen::naga::FloatMode::DenormPreserve => props.denorm_preserve[i],
            spoc_codegen::naga::FloatMode::SignedZeroInfNanPreserve => {
                props.signed_zero_inf_nan_preserve[i]
            }
        }
    })
}

impl VulkanBackend {
    /// Checks the module's declared needs against the device: [`Error::FeatureNotSupported`]
    /// listing what is missing.
    pub(super) fn check_spirv(
        dev: &VkDev,
        words: &[u32],
        what: &str,
        generated: bool,
    ) -> Result<spv::Scan> {
        let scan = spv::scan(words).map_err(|message| Error::Compile {
            backend: NAME.into(),
            kernel: what.into(),
            message,
        })?;
        let missing = spv::missing(&scan, &dev.props, generated);
        if !missing.is_empty() {
            return Err(Error::unsupported(
                NAME,
                format!(
                    "kernel `{what}` on {}: it needs {}",
                    dev.props.name,
                    missing.join(", ")
                ),
            ));
        }
        Ok(scan)
    }

    /// Builds a generated kernel's pipeline from its SPIR-V, after dropping the float controls
    /// the device lacks, with its dynamic shared array (if any) `dyn_len` elements long.
    pub(super) fn build_generated(
        &self,
        dev: &Arc<VkDev>,
        kernel: &ValidKernel,
        source: &Source,
        options: &CompileOptions,
        dyn_len: Option<u32>,
    ) -> Result<VkKernel> {
        let Code::SpirV(words) = &source.code else {
            return Err(self.core.compile_err(
                &kernel.name,
                format!("expected SPIR-V, got {:?} output", source.target),
            ));
        };
        let words = retain_supported_float_controls(words, &dev.props);
        Self::check_spirv(dev, &words, &kernel.name, true)?;
        let dyn_elem = source.abi.dyn_shared.map(|d| d.elem_bytes);
        let block = options.block.map(Dims::to_array).unwrap_or([1, 1, 1]);
        pipeline::build(
            dev,
            &words,
            &source.entry,
            &kernel.name,
            block,
            dyn_len.filter(|_| dyn_elem.is_some()),
            source.abi.clone(),
            Some(Origin {
                kernel: kernel.clone(),
                dyn_elem,
                options: options.clone(),
            }),
        )
        .map_err(|message| self.core.compile_err(&kernel.name, message))
    }

    /// The pipeline of generated kernel `k` for `shape` (made and kept with `k` on first use).
    pub(super) fn variant(&self, k: &VkKernel, shape: pipeline::Shape) -> Result<Arc<VkKernel>> {
        let (block, dyn_len) = shape;
        let Some(origin) = &k.origin else {
            return Err(Error::invalid_launch(
                &k.name,
                LaunchProblem::Rejected {
                    message: format!(
                        "the module was built for blocks of {:?}, the launch asks {block:?}",
                        k.block
                    ),
                },
            ));
        };
        let mut variants = k.variants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, v)) = variants.iter().find(|(s, _)| *s == shape) {
            return Ok(v.clone());
        }
        let options = CompileOptions {
            block: Some(block.into()),
            ..origin.options.clone()
        };
        let source = self
            .core
            .generate(
                Target::Vulkan,
                &origin.kernel,
                k.dev.props.codegen_caps(),
                &options,
            )?
            .ok_or_else(|| {
                self.core
                    .compile_err(&origin.kernel.name, "no SPIR-V generated")
            })?;
        let v =
            Arc::new(self.build_generated(&k.dev, &origin.kernel, &source, &options, dyn_len)?);
        variants.push((shape, v.clone()));
        Ok(v)
    }

    pub(super) fn dispatch(&self, k: &VkKernel, grid: Dims, args: &[Arg<'_>]) -> Result<()> {
        let timed = self.core.profiling();
        match pipeline::dispatch(k, grid, args, timed) {
            Ok(ran) => {
                if let Some(ms) = ran.ms {
                    tracing::info!(kernel = %k.name, ms, "Vulkan kernel time");
                    self.last_ms.store(ms.to_bits(), Ordering::Relaxed);
                }
                match (&k.origin, ran.fault) {
                    (Some(o), Some(words)) => {
                        match crate::checked_mode::fault_error(&o.kernel, &words) {
                            Some(fault) => Err(fault),
                            None => Ok(()),
                        }
                    }
                    _ => Ok(()),
                }
            }
            Err(Ok(problem)) => Err(Error::invalid_launch(&k.name, problem)),
            Err(Err(message)) => Err(self
                .core
                .driver_err(format!("kernel `{}`: {message}", k.name))),
        }
    }
}
