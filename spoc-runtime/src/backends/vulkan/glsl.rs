//! External GLSL compute shaders: naga's GLSL front end, its validator and its SPIR-V writer.

use naga::valid::{Capabilities, ShaderStages, SubgroupOperationSet, ValidationFlags, Validator};

/// A GLSL compute shader compiled to SPIR-V.
pub(crate) struct Compiled {
    pub(crate) words: Vec<u32>,
    /// The entry point's name in the SPIR-V (`main`).
    pub(crate) entry: String,
    /// The shader's `local_size_*`.
    pub(crate) local_size: [u32; 3],
}

/// Compiles `source` (GLSL 4.50 compute, `#version 450`) to SPIR-V `spirv_version`.
///
/// # Errors
/// The front end's or the validator's diagnostics, rendered against the source.
pub(crate) fn compile(source: &str, spirv_version: (u8, u8)) -> Result<Compiled, String> {
    let mut frontend = naga::front::glsl::Frontend::default();
    let options = naga::front::glsl::Options::from(naga::ShaderStage::Compute);
    let module = frontend
        .parse(&options, source)
        .map_err(|e| e.emit_to_string(source))?;
    let Some(ep) = module
        .entry_points
        .iter()
        .find(|ep| ep.stage == naga::ShaderStage::Compute)
    else {
        return Err("the GLSL source has no compute entry point".into());
    };
    let (entry, local_size) = (ep.name.clone(), ep.workgroup_size);
    let mut validator = Validator::new(ValidationFlags::all(), Capabilities::all());
    validator
        .subgroup_stages(ShaderStages::COMPUTE)
        .subgroup_operations(SubgroupOperationSet::all());
    let info = validator
        .validate(&module)
        .map_err(|e| e.emit_to_string(source))?;
    let options = naga::back::spv::Options {
        lang_version: spirv_version,
        ..naga::back::spv::Options::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Compute,
        entry_point: entry.clone(),
    };
    let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| format!("naga SPIR-V writer: {e}"))?;
    Ok(Compiled {
        words,
        entry,
        local_size,
    })
}
