// An asynchronous copy takes host memory whose use the runtime tracks (`HostBuffer`), never a
// plain `Vec` or slice that the host could free or rewrite while the copy runs.
fn main() -> spoc::Result<()> {
    let dev = spoc::init_device(None)?;
    let s = dev.new_stream()?;
    let mut y = dev.alloc::<f32>(4)?;
    let v = vec![1.0f32; 4];
    s.upload(&v, &mut y)?;
    Ok(())
}
