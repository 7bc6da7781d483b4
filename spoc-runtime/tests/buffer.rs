//! Buffers: round trips on every CPU-memory backend, raw-pointer transfers, device-to-device
//! and cross-device copies, records, untyped buffers, length errors.

mod support;

use spoc_runtime::{
    alloc_custom, alloc_custom_bytes, alloc_f32, alloc_f64, alloc_i32, alloc_i64, free,
    from_device, init_device, to_device, Buffer, Device, DeviceCopy, Error,
};
use support::test_backend;

fn devices() -> Vec<Device> {
    let (_, jit) = test_backend("BufJit", 1, 5);
    let mut v: Vec<Device> = ["Native", "Interpreter"]
        .into_iter()
        .map(|n| init_device(Some(n)).unwrap())
        .collect();
    v.extend(jit);
    v
}

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    id: i64,
    alive: bool,
}
// SAFETY: scalars and arrays of scalars only; all-zero bytes are a valid particle. It has
// padding (4 bytes after `pos`, 7 after `alive`): `write_bytes` writes the fields and zeroes
// the rest, as `#[derive(Record)]` does.
unsafe impl DeviceCopy for Particle {
    const HAS_PADDING: bool = true;
    fn write_bytes(&self, out: &mut [u8]) {
        out.fill(0);
        self.pos.write_bytes(&mut out[0..12]);
        self.id.write_bytes(&mut out[16..24]);
        self.alive.write_bytes(&mut out[24..25]);
    }
}

#[test]
fn uploads_and_downloads_round_trip() {
    for dev in devices() {
        let data: Vec<f64> = (0..1 << 16).map(|i| (i as f64).sqrt() - 3.0).collect();
        let b = dev.upload(&data).unwrap();
        assert_eq!((b.len(), b.is_empty()), (data.len(), false));
        assert_eq!(b.device().id, dev.id);
        assert_eq!(b.to_vec().unwrap(), data, "{dev}");
        let mut back = vec![0.0; data.len()];
        b.download(&mut back).unwrap();
        assert_eq!(back, data);
        let mut back = vec![0.0; data.len()];
        from_device(&b, &mut back).unwrap();
        assert_eq!(back, data);

        let mut c = dev.upload(&[0i32; 5]).unwrap();
        c.upload_from(&[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(c.to_vec().unwrap(), [1, 2, 3, 4, 5]);
        to_device(&[9, 8, 7, 6, 5], &mut c).unwrap();
        assert_eq!(c.to_vec().unwrap(), [9, 8, 7, 6, 5]);

        let empty: Buffer<u64> = dev.upload(&[]).unwrap();
        assert!(empty.is_empty() && empty.to_vec().unwrap().is_empty());
        free(c).unwrap();
    }
}

#[test]
fn lengths_must_match() {
    let dev = init_device(Some("Native")).unwrap();
    let mut b = dev.upload(&[1u32, 2, 3]).unwrap();
    let mismatch = |r: Result<(), Error>, op: &str, got: usize| match r {
        Err(Error::LengthMismatch {
            operation,
            expected,
            got: g,
        }) => {
            assert_eq!((operation, expected, g), (op, 3, got))
        }
        other => panic!("{other:?}"),
    };
    mismatch(b.download(&mut [0; 2]), "download", 2);
    mismatch(b.upload_from(&[0; 4]), "upload_from", 4);
    let other = dev.upload(&[0u32; 5]).unwrap();
    mismatch(b.copy_from(&other), "copy_from", 5);
    let src = [0u32; 4];
    mismatch(
        unsafe { b.upload_from_ptr(src.as_ptr(), 4) },
        "upload_from_ptr",
        4,
    );
    assert_eq!(
        b.to_vec().unwrap(),
        [1, 2, 3],
        "failed transfers changed nothing"
    );
}

#[test]
fn raw_pointer_transfers_touch_a_prefix() {
    for dev in devices() {
        let mut b = dev.upload(&[0i64; 6]).unwrap();
        let src = [5i64, -6, 7];
        unsafe { b.upload_from_ptr(src.as_ptr(), 3) }.unwrap();
        assert_eq!(b.to_vec().unwrap(), [5, -6, 7, 0, 0, 0]);
        let mut dst = [0i64; 2];
        unsafe { b.download_to_ptr(dst.as_mut_ptr(), 2) }.unwrap();
        assert_eq!(dst, [5, -6]);
        let mut dst = [0i64; 7];
        assert!(unsafe { b.download_to_ptr(dst.as_mut_ptr(), 7) }.is_err());
    }
}

#[test]
fn allocations_are_zeroed() {
    for dev in devices() {
        assert_eq!(alloc_f32(&dev, 3).unwrap().to_vec().unwrap(), [0.0f32; 3]);
        assert_eq!(alloc_f64(&dev, 2).unwrap().to_vec().unwrap(), [0.0f64; 2]);
        assert_eq!(alloc_i32(&dev, 4).unwrap().to_vec().unwrap(), [0i32; 4]);
        assert_eq!(alloc_i64(&dev, 1).unwrap().to_vec().unwrap(), [0i64; 1]);
        assert_eq!(dev.alloc::<u32>(0).unwrap().len(), 0);
    }
}

#[test]
fn copies_between_buffers() {
    let devs = devices();
    let data: Vec<u32> = (0..1000).map(|i| i * 7 + 1).collect();
    for src_dev in &devs {
        let src = src_dev.upload(&data).unwrap();
        for dst_dev in &devs {
            let mut dst = dst_dev.alloc::<u32>(data.len()).unwrap();
            dst.copy_from(&src).unwrap();
            assert_eq!(dst.to_vec().unwrap(), data, "{src_dev} -> {dst_dev}");
        }
    }
}

#[test]
fn records_round_trip() {
    for dev in devices() {
        let ps: Vec<Particle> = (0..100)
            .map(|i| Particle {
                pos: [i as f32, -(i as f32), 0.5],
                id: i as i64 * 1_000_000_007,
                alive: i % 3 == 0,
            })
            .collect();
        let b = dev.upload(&ps).unwrap();
        assert_eq!(b.to_vec().unwrap(), ps, "{dev}");
        let z = alloc_custom::<Particle>(&dev, 2).unwrap();
        let zero = Particle {
            pos: [0.0; 3],
            id: 0,
            alive: false,
        };
        assert_eq!(z.to_vec().unwrap(), [zero, zero]);
    }
}

#[test]
fn untyped_buffers_hold_bytes() {
    for dev in devices() {
        let mut raw = alloc_custom_bytes(&dev, 3, 12).unwrap();
        assert_eq!((raw.len(), raw.elem_size(), raw.size_bytes()), (3, 12, 36));
        assert_eq!(raw.to_bytes().unwrap(), vec![0u8; 36]);
        let bytes: Vec<u8> = (0..36).collect();
        // SAFETY: an untyped buffer: no Rust type reads these bytes back.
        unsafe { raw.upload_bytes(&bytes).unwrap() };
        assert_eq!(raw.to_bytes().unwrap(), bytes);
        assert!(matches!(
            // SAFETY: as above (and nothing is written: the length is wrong).
            unsafe { raw.upload_bytes(&bytes[..35]) },
            Err(Error::LengthMismatch {
                expected: 36,
                got: 35,
                ..
            })
        ));
    }
    // Larger than the host's memory (or overflowing usize): refused, nothing allocated.
    assert!(matches!(
        alloc_custom_bytes(&init_device(Some("Native")).unwrap(), usize::MAX, 2),
        Err(Error::BufferTooLarge { .. } | Error::Memory { .. })
    ));
}

#[test]
fn cpu_backends_have_streams_and_events() {
    for dev in devices() {
        let b = dev.backend();
        let s = b.create_stream(dev.backend_id).unwrap();
        b.synchronize_stream(&s).unwrap();
        let (e0, e1) = (
            b.create_event(dev.backend_id).unwrap(),
            b.create_event(dev.backend_id).unwrap(),
        );
        assert!(b.event_elapsed_ms(&e0, &e1).is_err(), "not recorded yet");
        b.record_event(&e0, Some(&s)).unwrap();
        // A stream's event is stamped when its worker reaches it: wait for that before the
        // sleep, so that the sleep lies between the two stamps.
        b.synchronize_stream(&s).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        b.record_event(&e1, None).unwrap();
        let ms = b.event_elapsed_ms(&e0, &e1).unwrap();
        assert!((1.5..1000.0).contains(&ms), "{ms}");
        b.destroy_stream(s).unwrap();
        dev.synchronize().unwrap();
    }
}

/// Padding bytes of a record never reach the device: they are uploaded as zeros, whatever the
/// host's memory held there (here 0xAA, written before the fields).
#[test]
fn padding_is_uploaded_as_zeros() {
    use std::mem::MaybeUninit;
    let mut slots = [MaybeUninit::<Particle>::uninit(); 2];
    for (i, slot) in slots.iter_mut().enumerate() {
        // SAFETY: fill every byte, then write each field in place: the padding keeps 0xAA.
        unsafe {
            std::ptr::write_bytes(slot.as_mut_ptr().cast::<u8>(), 0xAA, size_of::<Particle>());
            let p = slot.as_mut_ptr();
            std::ptr::addr_of_mut!((*p).pos).write([i as f32, 2.0, 3.0]);
            std::ptr::addr_of_mut!((*p).id).write(-7 - i as i64);
            std::ptr::addr_of_mut!((*p).alive).write(i == 1);
        }
    }
    // SAFETY: every field was written.
    let ps: &[Particle] = unsafe { std::slice::from_raw_parts(slots.as_ptr().cast(), 2) };
    const { assert!(Particle::HAS_PADDING) };
    for dev in devices() {
        let mut b = dev.upload(ps).unwrap();
        let bytes = b.raw().to_bytes().unwrap();
        for (i, rec) in bytes.chunks_exact(32).enumerate() {
            assert_eq!(
                &rec[12..16],
                &[0; 4],
                "{dev}: padding after pos, record {i}"
            );
            assert_eq!(
                &rec[25..32],
                &[0; 7],
                "{dev}: padding after alive, record {i}"
            );
            assert_eq!(rec[24], i as u8, "{dev}: alive");
        }
        b.upload_from(ps).unwrap();
        assert_eq!(
            &b.raw().to_bytes().unwrap()[12..16],
            &[0; 4],
            "{dev}: upload_from"
        );
        assert_eq!(b.to_vec().unwrap(), ps, "{dev}");
    }
}
