//! Host time of a typed launch: `saxpy` (1024 elements) launched N times (default 300 000,
//! the first argument) on a stream and on the default stream of the `CUDA/PTX` device (or the
//! device the second argument names, e.g. `Vulkan`), µs per launch of the loop, and of the
//! default-stream loop with the synchronisation that ends it. With tools/cuda-stub's do-nothing driver it is spoc's own cost per
//! launch, without a GPU (tools/cuda-stub/README.md); on a GPU `cuda_bench` compares it with
//! cudarc.

use programs::kernels::saxpy;
use spoc::prelude::*;
use std::time::Instant;

fn main() -> spoc::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300_000);
    let framework = std::env::args().nth(2);
    let dev = spoc::init_device(Some(framework.as_deref().unwrap_or("CUDA/PTX")))?;
    let x = dev.upload(&vec![1.0f32; 1024])?;
    let mut y = dev.upload(&vec![1.0f32; 1024])?;
    let stream = dev.new_stream()?;
    let (grid, block) = (dims1d(4), dims1d(256));
    for _ in 0..1000 {
        saxpy.launch_on(&stream, grid, block, (0.5f32, &x, &mut y))?;
    }
    let t = Instant::now();
    for _ in 0..n {
        saxpy.launch_on(&stream, grid, block, (0.5f32, &x, &mut y))?;
    }
    let on_stream = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    stream.synchronize()?;
    let t = Instant::now();
    for _ in 0..n {
        saxpy.launch(&dev, grid, block, (0.5f32, &x, &mut y))?;
    }
    let default = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    dev.synchronize()?;
    let synced = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    println!("launch_cost: {n} launches, on a stream {on_stream:.3} µs, on the default stream {default:.3} µs per launch ({synced:.3} µs with the final synchronize)");
    Ok(())
}
