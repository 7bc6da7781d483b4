//! A problem too large for a device is refused before its inputs are made: every program
//! checks its buffers against the device's limits first (`programs::need`), so a size no device
//! can take fails at once with `Error::BufferTooLarge` instead of filling the host's memory.

use spoc::Error;

#[test]
fn a_problem_too_large_for_the_device_is_refused_before_anything_is_made() {
    for dev in spoc::all_devices(None).unwrap() {
        // 2^20 x 2^20 f32 matrices: 4 TiB each.
        let t0 = std::time::Instant::now();
        let r = programs::matrix_mul_tiled::run(&dev, 1 << 20);
        assert!(
            matches!(r, Err(Error::BufferTooLarge { .. })),
            "{dev}: {:?}",
            r.map(|o| o.shape)
        );
        assert!(
            t0.elapsed().as_secs() < 5,
            "{dev}: the refusal took {:?}",
            t0.elapsed()
        );
        println!("{dev}: {}", r.unwrap_err());
    }
}
