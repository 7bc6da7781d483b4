//! The Vulkan backend with `SPOC_VULKAN_FORCE_STAGING=1`: every transfer goes through the
//! staging buffer and `vkCmdCopyBuffer`, and allocations are zeroed by `vkCmdFillBuffer`, as on
//! a discrete GPU, whatever the device (lavapipe here); and with `SPOC_VULKAN_NO_TIMELINE=1`:
//! each batch of commands is waited for with a fence, as on a device without timeline
//! semaphores. One test, so that the variables are set before anything opens the devices.
//!
//! Without a Vulkan device it prints why and passes, unless `SPOC_REQUIRE_BACKENDS` names
//! `vulkan`.
#![cfg(feature = "vulkan")]

mod support;

use spoc_runtime::backend::SourceLang;
use spoc_runtime::vulkan::VulkanBackend;
use spoc_runtime::{dims1d, init_device, run, Arg};

#[test]
fn staged_transfers_and_launches() {
    // Before any device is opened in this process (this binary has this one test).
    std::env::set_var("SPOC_VULKAN_FORCE_STAGING", "1");
    std::env::set_var("SPOC_VULKAN_NO_TIMELINE", "1");
    let dev = match init_device(Some("Vulkan")) {
        Ok(d) => d,
        Err(e) => {
            spoc_testkit::backends::skip("Vulkan", "staged_transfers_and_launches", &e);
            return;
        }
    };
    let props = VulkanBackend::new()
        .device_properties(dev.backend_id)
        .unwrap();
    assert!(!props.mapped_buffers, "the variable forces staging");
    assert!(
        !props.timeline_semaphore,
        "the variable hides timeline semaphores"
    );

    // Zeroed without a mapping.
    let z = dev.alloc::<u64>(5000).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&v| v == 0));
    // Several staging buffers' worth (16 MiB each), at an unaligned offset.
    let n = (37 << 20) / 4 + 3;
    let big: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9) ^ 0x1234_5678)
        .collect();
    let mut b = dev.upload(&big).unwrap();
    assert!(b.to_vec().unwrap() == big, "37 MiB round trip");
    let backend = dev.backend();
    backend
        .copy_h2d(b.raw().mem(), 17 << 20 | 1, &[9, 8, 7])
        .unwrap();
    let mut got = [0u8; 5];
    backend
        .copy_d2h(b.raw().mem(), (17 << 20) - 1, &mut got)
        .unwrap();
    let bytes: Vec<u8> = big.iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(got, [bytes[(17 << 20) - 1], bytes[17 << 20], 9, 8, 7]);
    b.upload_from(&big).unwrap();
    let mut c = dev.alloc::<u32>(n).unwrap();
    c.copy_from(&b).unwrap();
    assert!(c.to_vec().unwrap() == big, "device-to-device copy");

    // A generated kernel and an external one on staged buffers.
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 100.0).collect();
    let xb = dev.upload(&x).unwrap();
    let mut yb = dev.upload(&vec![1.0f32; 1000]).unwrap();
    run(
        &dev,
        &support::SAXPY,
        vec![Arg::F32(3.0), (&xb).into(), (&mut yb).into()],
        dims1d(8),
        dims1d(128),
        0,
    )
    .unwrap();
    let want: Vec<f32> = x.iter().map(|x| 3.0 * x + 1.0).collect();
    assert_eq!(yb.to_vec().unwrap(), want);
    const NEG: &str = "#version 450\nlayout(local_size_x = 64) in;\n\
        layout(set = 0, binding = 1) buffer Y { float y[]; };\n\
        void main() { uint i = gl_GlobalInvocationID.x; if (i < uint(y.length())) y[i] = -y[i]; }\n";
    backend
        .run_source(
            dev.backend_id,
            NEG,
            SourceLang::Glsl,
            "neg",
            dims1d(16),
            dims1d(64),
            0,
            &[Arg::BufferMut(yb.raw_mut())],
        )
        .unwrap();
    let want: Vec<f32> = want.iter().map(|v| -v).collect();
    assert_eq!(yb.to_vec().unwrap(), want);

    support::batched_launches_keep_order_arguments_and_buffers(&dev);
}
