use spoc::prelude::*;

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_id_x();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

fn launch(dev: &Device, x: &Buffer<f32>) -> spoc::Result<()> {
    saxpy.launch(dev, dims1d(1), dims1d(32), (2.0, x))
}

fn main() {}
