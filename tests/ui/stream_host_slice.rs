// A slice of a host buffer borrows it: no copy can be queued into the buffer while the slice
// lives (its writes would race the host's), and the buffer cannot be dropped under a slice.
use spoc::HostBuffer;

fn main() -> spoc::Result<()> {
    let dev = spoc::init_device(None)?;
    let s = dev.new_stream()?;
    let y = dev.alloc::<f32>(4)?;
    let mut h = HostBuffer::<f32>::new(&dev, 4)?;
    let mut slice = h.as_mut_slice()?;
    s.download(&y, &mut h)?;
    slice[0] = 1.0;
    drop(slice);
    let first = h.as_slice()?;
    drop(h);
    println!("{}", first[0]);
    Ok(())
}
