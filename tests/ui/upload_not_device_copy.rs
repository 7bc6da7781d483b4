// Buffers hold plain-old-data (`spoc::DeviceCopy`): references and types that own host memory
// cannot be uploaded.
fn main() {
    let dev = spoc::init_device(None).unwrap();
    let x = 1.0f32;
    let _refs = dev.upload(&[&x]);
    let _strings = dev.upload(&vec![String::from("a")]);
}
