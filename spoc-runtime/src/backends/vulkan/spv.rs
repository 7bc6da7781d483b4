//! What a SPIR-V module asks of a device, read from its words before anything is created: the
//! SPIR-V version, the declared capabilities (checked against the device's features), and the
//! workgroup size of a compute entry point.

use super::device::VulkanDeviceProps;
use spirv::{Capability, ExecutionMode, ExecutionModel, Op};

/// The SPIR-V magic number.
const MAGIC: u32 = 0x0723_0203;
/// `Fma` in the GLSL.std.450 extended instruction set.
const GLSL_STD_FMA: u32 = 50;

/// A compute entry point of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EntryPoint {
    pub(crate) name: String,
    /// `LocalSize`, if declared with literals (not `LocalSizeId` or a `WorkgroupSize` constant).
    pub(crate) local_size: Option<[u32; 3]>,
}

/// What a module declares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// `(major, minor)`.
    pub(crate) version: (u32, u32),
    pub(crate) capabilities: Vec<u32>,
    pub(crate) entry_points: Vec<EntryPoint>,
    /// Bit widths of the floats (or float vectors' components) a GLSL.std.450 `Fma` computes.
    pub(crate) fma_widths: Vec<u32>,
}

/// Reads the module's header and preamble.
///
/// # Errors
/// A message when the words are not a SPIR-V module.
pub(crate) fn scan(words: &[u32]) -> Result<Scan, String> {
    if words.len() < 5 {
        return Err(format!(
            "{} words is too short for a SPIR-V module",
            words.len()
        ));
    }
    if words[0] != MAGIC {
        return Err(format!(
            "not SPIR-V: the magic number is {:#010x}, expected {MAGIC:#010x} (words in the host's byte order)",
            words[0]
        ));
    }
    let mut out = Scan {
        version: ((words[1] >> 16) & 0xff, (words[1] >> 8) & 0xff),
        ..Scan::default()
    };
    // (entry id, name) of GLCompute entry points; local sizes by entry id.
    let mut entries: Vec<(u32, String)> = Vec::new();
    let mut sizes: Vec<(u32, [u32; 3])> = Vec::new();
    let mut workgroup_size_builtin = false;
    let mut glsl_std = None;
    // Float widths by type id (vectors by their component's), and the types Fma results have.
    let mut float_types: Vec<(u32, u32)> = Vec::new();
    let mut fma_types: Vec<u32> = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let count = (words[i] >> 16) as usize;
        let opcode = words[i] & 0xffff;
        if count == 0 || i + count > words.len() {
            return Err(format!("malformed SPIR-V instruction at word {i}"));
        }
        let ops = &words[i + 1..i + count];
        match Op::from_u32(opcode) {
            Some(Op::Capability) if !ops.is_empty() => out.capabilities.push(ops[0]),
            Some(Op::EntryPoint)
                if ops.len() >= 3 && ops[0] == ExecutionModel::GLCompute as u32 =>
            {
                entries.push((ops[1], literal_string(&ops[2..])));
            }
            Some(Op::ExecutionMode)
                if ops.len() >= 5 && ops[1] == ExecutionMode::LocalSize as u32 =>
            {
                sizes.push((ops[0], [ops[2], ops[3], ops[4]]));
            }
            // OpDecorate %id BuiltIn WorkgroupSize: the size is a constant we do not read.
            Some(Op::Decorate)
                if ops.len() >= 3
                    && ops[1] == spirv::Decoration::BuiltIn as u32
                    && ops[2] == spirv::BuiltIn::WorkgroupSize as u32 =>
            {
                workgroup_size_builtin = true;
            }
            Some(Op::ExtInstImport)
                if ops.len() >= 2 && literal_string(&ops[1..]) == "GLSL.std.450" =>
            {
                glsl_std = Some(ops[0]);
            }
            Some(Op::TypeFloat) if ops.len() >= 2 => float_types.push((ops[0], ops[1])),
            Some(Op::TypeVector) if ops.len() >= 2 => {
                if let Some(&(_, w)) = float_types.iter().find(|(id, _)| *id == ops[1]) {
                    float_types.push((ops[0], w));
                }
            }
            Some(Op::ExtInst)
                if ops.len() >= 4 && Some(ops[2]) == glsl_std && ops[3] == GLSL_STD_FMA =>
            {
                fma_types.push(ops[0]);
            }
            _ => {}
        }
        i += count;
    }
    out.fma_widths = float_types
        .iter()
        .filter(|(id, _)| fma_types.contains(id))
        .map(|&(_, w)| w)
        .collect();
    out.fma_widths.sort_unstable();
    out.fma_widths.dedup();
    out.entry_points = entries
        .into_iter()
        .map(|(id, name)| EntryPoint {
            name,
            local_size: if workgroup_size_builtin {
                None
            } else {
                sizes.iter().find(|(e, _)| *e == id).map(|(_, s)| *s)
            },
        })
        .collect();
    Ok(out)
}

/// A nul-terminated UTF-8 literal packed in words (little-endian within each word).
fn literal_string(words: &[u32]) -> String {
    let mut bytes = Vec::new();
    'outer: for w in words {
        for b in w.to_le_bytes() {
            if b == 0 {
                break 'outer;
            }
            bytes.push(b);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The highest SPIR-V version a Vulkan version accepts.
pub(crate) fn max_spirv_for(api: (u32, u32, u32)) -> (u32, u32) {
    match (api.0, api.1) {
        (1, 0) => (1, 0),
        (1, 1) => (1, 3),
        (1, 2) => (1, 5),
        _ => (1, 6),
    }
}

/// The device features a capability needs, and whether the device has them; `None` for
/// capabilities every Vulkan compute device has, or that this check does not know (the driver
/// then decides).
fn requirement(cap: u32, p: &VulkanDeviceProps) -> Option<(&'static str, bool)> {
    let sub = |op: &str| p.subgroup_ops.contains(&op);
    let c = Capability::from_u32(cap)?;
    Some(match c {
        Capability::Float64 => ("shaderFloat64", p.shader_float64),
        Capability::Int64 => ("shaderInt64", p.shader_int64),
        Capability::Int16 => ("shaderInt16", p.shader_int16),
        Capability::Float16 => ("shaderFloat16", p.shader_float16),
        Capability::Int8 => ("shaderInt8", p.shader_int8),
        Capability::Int64Atomics => (
            "shaderBufferInt64Atomics",
            p.buffer_int64_atomics || p.shared_int64_atomics,
        ),
        Capability::StorageBuffer16BitAccess => ("storageBuffer16BitAccess", p.storage_16bit.0),
        Capability::UniformAndStorageBuffer16BitAccess => {
            ("uniformAndStorageBuffer16BitAccess", p.storage_16bit.1)
        }
        Capability::StorageBuffer8BitAccess => ("storageBuffer8BitAccess", p.storage_8bit.0),
        Capability::UniformAndStorageBuffer8BitAccess => {
            ("uniformAndStorageBuffer8BitAccess", p.storage_8bit.1)
        }
        Capability::AtomicFloat32AddEXT => (
            "shaderBufferFloat32AtomicAdd",
            p.buffer_float32_atomic_add || p.shared_float32_atomic_add,
        ),
        Capability::AtomicFloat64AddEXT => {
            ("shaderBufferFloat64AtomicAdd", p.buffer_float64_atomic_add)
        }
        Capability::GroupNonUniform => ("subgroup operations (basic)", sub("basic")),
        Capability::GroupNonUniformVote => ("subgroup vote operations", sub("vote")),
        Capability::GroupNonUniformArithmetic => {
            ("subgroup arithmetic operations", sub("arithmetic"))
        }
        Capability::GroupNonUniformBallot => ("subgroup ballot operations", sub("ballot")),
        Capability::GroupNonUniformShuffle => ("subgroup shuffle operations", sub("shuffle")),
        Capability::GroupNonUniformShuffleRelative => (
            "subgroup relative shuffle operations",
            sub("shuffle_relative"),
        ),
        Capability::GroupNonUniformClustered => ("subgroup clustered operations", sub("clustered")),
        Capability::GroupNonUniformQuad => ("subgroup quad operations", sub("quad")),
        _ => return None,
    })
}

/// The device features `scan` needs that the device lacks, each as
/// `"<capability> (<feature>)"`; a too-new SPIR-V version is one too. With `fused_fma` (code
/// generated from Rust, whose `mul_add` rounds once), an `Fma` the device does not fuse is
/// missing too; external shaders get GLSL's `fma`, which Vulkan allows to round twice.
pub(crate) fn missing(scan: &Scan, p: &VulkanDeviceProps, fused_fma: bool) -> Vec<String> {
    let mut out = Vec::new();
    let max = max_spirv_for(p.api_version);
    if scan.version > max {
        out.push(format!(
            "SPIR-V {}.{} (the device's Vulkan {}.{} accepts up to SPIR-V {}.{})",
            scan.version.0, scan.version.1, p.api_version.0, p.api_version.1, max.0, max.1
        ));
    }
    for (w, fused) in [(32, p.fused_fma_f32), (64, p.fused_fma_f64)] {
        if fused_fma && scan.fma_widths.contains(&w) && !fused {
            out.push(format!(
                "a fused f{w} multiply-add (`mul_add`): this device's GLSL.std.450 Fma on f{w} \
                 rounds twice"
            ));
        }
    }
    for &cap in &scan.capabilities {
        if let Some((feature, false)) = requirement(cap, p) {
            let name = Capability::from_u32(cap)
                .map(|c| format!("{c:?}"))
                .unwrap_or_else(|| cap.to_string());
            let line = format!("SPIR-V capability {name} (device feature {feature})");
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(caps: &[u32], local: [u32; 3]) -> Vec<u32> {
        let mut w = vec![MAGIC, 0x0001_0500, 0, 100, 0];
        for &c in caps {
            w.extend([(2 << 16) | Op::Capability as u32, c]);
        }
        // OpEntryPoint GLCompute %7 "main"
        let name = u32::from_le_bytes(*b"main");
        w.extend([(5 << 16) | Op::EntryPoint as u32, 5, 7, name, 0]);
        w.extend([
            (6 << 16) | Op::ExecutionMode as u32,
            7,
            ExecutionMode::LocalSize as u32,
            local[0],
            local[1],
            local[2],
        ]);
        w
    }

    #[test]
    fn scans_header_capabilities_and_local_size() {
        let s = scan(&module(&[1, 10], [64, 2, 1])).unwrap();
        assert_eq!(s.version, (1, 5));
        assert_eq!(s.capabilities, vec![1, 10]);
        assert_eq!(
            s.entry_points,
            vec![EntryPoint {
                name: "main".into(),
                local_size: Some([64, 2, 1])
            }]
        );
    }

    #[test]
    fn rejects_non_spirv() {
        assert!(scan(&[1, 2, 3]).is_err());
        assert!(scan(&[0x0302_2307, 0, 0, 0, 0])
            .unwrap_err()
            .contains("magic"));
        assert!(scan(&[MAGIC, 0, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn spirv_versions_per_vulkan_version() {
        assert_eq!(max_spirv_for((1, 1, 0)), (1, 3));
        assert_eq!(max_spirv_for((1, 2, 200)), (1, 5));
        assert_eq!(max_spirv_for((1, 3, 0)), (1, 6));
    }
}
