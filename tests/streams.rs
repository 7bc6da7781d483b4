//! Streams, events and host buffers (`spoc::Stream`, `Event`, `HostBuffer`) on every device:
//! work on one stream runs in order; work on two streams ordered by an event, or only by the
//! buffers' use tracking, gives the sequential result; host reads wait for queued work without
//! a synchronize; dropping (or forgetting) streams, buffers and host buffers with work in
//! flight loses nothing; event times are ordered and within the host's clock. Every value is
//! checked against the same arithmetic on the host.

mod common;
mod stream_kernels;

use spoc::prelude::*;
use spoc::{Error, HostBuffer, Record, Stream};
use spoc_testkit::devices::check_each_device;
use std::time::Instant;
use stream_kernels::{data, grid, minus, twice_plus_one, twice_plus_one_host, N};

#[test]
fn upload_launches_and_download_on_one_stream_run_in_order() {
    let x = data(N);
    let want: Vec<f32> = x.iter().map(|&v| twice_plus_one_host(v, 3) - v).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let s = dev.new_stream()?;
        let hx = HostBuffer::from_slice(dev, &x)?;
        let mut y = dev.alloc::<f32>(N)?;
        let mut xd = dev.alloc::<f32>(N)?;
        let mut out = dev.alloc::<f32>(N)?;
        s.upload(&hx, &mut y)?;
        s.upload(&hx, &mut xd)?;
        // Three launches on y, then one reading it: only in-order execution gives `want`.
        for _ in 0..3 {
            twice_plus_one.launch_on(&s, grid(), dims1d(64), (&mut y, 1))?;
        }
        minus.launch_on(&s, grid(), dims1d(64), (&y, &xd, &mut out))?;
        let mut back = HostBuffer::new(dev, N)?;
        s.download(&out, &mut back)?;
        // No synchronize: reading the host buffer waits for the download.
        check.eq("downloaded", &back.as_slice()?, &want);
        check.eq("out.to_vec", &out.to_vec()?, &want);
        Ok(())
    });
}

#[test]
fn an_event_orders_two_streams() {
    let x = data(N);
    let want: Vec<f32> = x.iter().map(|&v| twice_plus_one_host(v, 40) - v).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let (a, b) = (dev.new_stream()?, dev.new_stream()?);
        let xd = dev.upload(&x)?;
        let mut y = dev.upload(&x)?;
        let mut out = dev.alloc::<f32>(N)?;
        twice_plus_one.launch_on(&a, grid(), dims1d(64), (&mut y, 40))?;
        let done = a.record()?;
        b.wait_for(&done)?;
        minus.launch_on(&b, grid(), dims1d(64), (&y, &xd, &mut out))?;
        let mut back = HostBuffer::new(dev, N)?;
        b.download(&out, &mut back)?;
        b.synchronize()?;
        check.eq("out", &back.to_vec()?, &want);
        Ok(())
    });
}

#[test]
fn buffers_order_streams_without_events_and_host_reads_wait() {
    let x = data(N);
    let want_y: Vec<f32> = x.iter().map(|&v| twice_plus_one_host(v, 60)).collect();
    let want: Vec<f32> = x.iter().map(|&v| twice_plus_one_host(v, 60) - v).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let (a, b) = (dev.new_stream()?, dev.new_stream()?);
        let xd = dev.upload(&x)?;
        let mut y = dev.upload(&x)?;
        let mut out = dev.alloc::<f32>(N)?;
        twice_plus_one.launch_on(&a, grid(), dims1d(64), (&mut y, 60))?;
        // `y` was last written on `a`: the launch on `b` waits for it.
        minus.launch_on(&b, grid(), dims1d(64), (&y, &xd, &mut out))?;
        // Host reads and a default-stream launch wait for the streams too.
        check.eq("y", &y.to_vec()?, &want_y);
        let mut again = dev.alloc::<f32>(N)?;
        minus.launch(dev, grid(), dims1d(64), (&out, &xd, &mut again))?;
        let want_again: Vec<f32> = want.iter().zip(&x).map(|(o, v)| o - v).collect();
        check.eq("out", &out.to_vec()?, &want);
        // Work on a stream after a default-stream launch sees its result.
        twice_plus_one.launch(dev, grid(), dims1d(64), (&mut again, 2))?;
        let mut back = HostBuffer::new(dev, N)?;
        b.download(&again, &mut back)?;
        let want_back: Vec<f32> = want_again
            .iter()
            .map(|&v| twice_plus_one_host(v, 2))
            .collect();
        check.eq("again", &back.as_slice()?, &want_back);
        Ok(())
    });
}

#[test]
fn dropping_or_forgetting_everything_mid_flight_loses_nothing() {
    let x = data(N);
    let want: Vec<f32> = x.iter().map(|&v| twice_plus_one_host(v, 200)).collect();
    check_each_device(common::devices(), 2, |dev, check| {
        // Everything dropped right after queuing: each drop waits for the work it holds.
        for _ in 0..3 {
            let s = dev.new_stream()?;
            let hx = HostBuffer::from_slice(dev, &x)?;
            let mut y = dev.alloc::<f32>(N)?;
            s.upload(&hx, &mut y)?;
            twice_plus_one.launch_on(&s, grid(), dims1d(64), (&mut y, 200))?;
            let mut back = HostBuffer::new(dev, N)?;
            s.download(&y, &mut back)?;
            drop(hx);
            drop(s);
            drop(y);
            drop(back);
        }
        // The stream forgotten and the host buffer dropped first: the buffers still hold the
        // stream, so the download is waited for when `back` is read.
        let s = dev.new_stream()?;
        let mut y = dev.upload(&x)?;
        twice_plus_one.launch_on(&s, grid(), dims1d(64), (&mut y, 200))?;
        let mut back = HostBuffer::<f32>::new(dev, N)?;
        s.download(&y, &mut back)?;
        std::mem::forget(s.clone());
        drop(s);
        check.eq("back", &back.as_slice()?, &want);
        check.eq("y", &y.to_vec()?, &want);
        // A host buffer rewritten after its upload was queued: the write waits for the copy.
        let s = dev.new_stream()?;
        let mut h = HostBuffer::from_slice(dev, &x)?;
        let mut z = dev.alloc::<f32>(N)?;
        s.upload(&h, &mut z)?;
        h.as_mut_slice()?.fill(7.0);
        check.eq("z", &z.to_vec()?, &x);
        check.eq("h", &h.as_slice()?, &vec![7.0; N]);
        Ok(())
    });
}

#[test]
fn event_times_are_ordered_and_within_the_host_clock() {
    check_each_device(common::devices(), 2, |dev, check| {
        let s = dev.new_stream()?;
        let mut y = dev.upload(&data(N))?;
        let t0 = Instant::now();
        let e0 = s.record()?;
        twice_plus_one.launch_on(&s, grid(), dims1d(64), (&mut y, 500))?;
        let e1 = s.record()?;
        twice_plus_one.launch_on(&s, grid(), dims1d(64), (&mut y, 500))?;
        let e2 = s.record()?;
        e2.synchronize()?;
        let host_ms = t0.elapsed().as_secs_f64() * 1e3;
        let (t01, t02) = (e0.elapsed_ms(&e1)?, e0.elapsed_ms(&e2)?);
        if !(t01 >= 0.0 && t02 >= t01) {
            check.wrong(format!("event times not ordered: {t01} ms, then {t02} ms"));
        }
        // The device's clock and the host's differ; 5 ms covers their resolution and skew.
        if f64::from(t02) > host_ms + 5.0 {
            check.wrong(format!("events say {t02} ms, the host {host_ms} ms"));
        }
        Ok(())
    });
}

#[test]
fn bad_copies_are_errors_before_anything_runs() {
    check_each_device(common::devices(), 2, |dev, check| {
        let s: Stream = dev.new_stream()?;
        let h = HostBuffer::from_slice(dev, &[1.0f32, 2.0, 3.0])?;
        let mut y = dev.upload(&[5.0f32; 4])?;
        match s.upload(&h, &mut y) {
            Err(Error::LengthMismatch {
                expected: 4,
                got: 3,
                ..
            }) => {}
            other => check.wrong(format!("a short upload gave {other:?}")),
        }
        check.eq("y untouched", &y.to_vec()?, &[5.0; 4]);
        let other = common::devices()
            .into_iter()
            .find(|d| d.id != dev.id)
            .expect("a second device");
        let mut z = other.upload(&[1.0f32, 2.0, 3.0])?;
        match s.upload(&h, &mut z) {
            Err(Error::Memory { message, .. }) if message.contains("device") => {}
            other => check.wrong(format!("an upload to another device gave {other:?}")),
        }
        Ok(())
    });
}

/// Writes one element past the end of `y`.
#[kernel]
fn write_past_end(y: &mut [f32]) {
    let i = global_id_x();
    y[i + 1] = 1.0;
}

#[test]
fn a_fault_on_a_stream_is_reported_at_its_wait_and_breaks_a_native_stream() {
    let x = data(N);
    let want: Vec<f32> = x.iter().map(|&v| twice_plus_one_host(v, 1)).collect();
    for dev in common::checking_devices() {
        let s = dev.new_stream().unwrap();
        let mut y = dev.alloc::<f32>(64).unwrap();
        let mut z = dev.upload(&x).unwrap();
        // Native queues it and reports the fault at the next wait; the Interpreter, which runs
        // work as it is queued, at the launch.
        let r = write_past_end
            .launch_on(&s, dims1d(1), dims1d(64), (&mut y,))
            .and_then(|()| twice_plus_one.launch_on(&s, grid(), dims1d(64), (&mut z, 1)))
            .and_then(|()| s.synchronize());
        match r {
            Err(Error::KernelFault { kernel, .. }) => assert!(kernel.contains("write_past_end")),
            other => panic!("{dev}: a fault on a stream gave {other:?}"),
        }
        if dev.framework == "Native" {
            // The stream stays broken: the launch after the fault did not run, and no wait
            // (nor a read of a buffer it would have written) pretends it did.
            assert!(
                matches!(s.synchronize(), Err(Error::KernelFault { .. })),
                "{dev}"
            );
            assert!(
                matches!(z.to_vec(), Err(Error::KernelFault { .. })),
                "{dev}"
            );
        }
        // A new stream runs.
        let s = dev.new_stream().unwrap();
        let mut w = dev.upload(&x).unwrap();
        twice_plus_one
            .launch_on(&s, grid(), dims1d(64), (&mut w, 1))
            .unwrap();
        assert_eq!(w.to_vec().unwrap(), want, "{dev}");
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Record)]
#[repr(C)]
struct Padded {
    x: f32,
    mass: f64,
    id: u32,
}

#[test]
fn uploads_from_a_host_buffer_never_copy_padding() {
    let v: Vec<Padded> = (0..5)
        .map(|i| Padded {
            x: i as f32,
            mass: 0.5 * i as f64,
            id: i,
        })
        .collect();
    check_each_device(common::devices(), 2, |dev, check| {
        let s = dev.new_stream()?;
        let mut h = HostBuffer::<Padded>::new(dev, v.len())?;
        h.as_mut_slice()?.copy_from_slice(&v);
        let mut b = dev.alloc::<Padded>(v.len())?;
        s.upload(&h, &mut b)?;
        let bytes = b.raw().to_bytes()?;
        let size = std::mem::size_of::<Padded>();
        for (k, rec) in bytes.chunks(size).enumerate() {
            // Padding: bytes 4..8 (before the f64) and 20..24 (after the u32).
            if rec[4..8] != [0; 4] || rec[20..24] != [0; 4] {
                check.wrong(format!(
                    "record {k}: padding {:?} {:?}",
                    &rec[4..8],
                    &rec[20..24]
                ));
            }
        }
        check.eq("records", &b.to_vec()?, &v);
        Ok(())
    });
}

#[test]
fn the_backends_own_transfers_and_frees_wait_for_native_streams() {
    use spoc::{Arg, LaunchConfig};
    let dev = spoc::init_device(Some("Native")).unwrap();
    let be = dev.backend().clone();
    let raw = be.create_stream(dev.backend_id).unwrap();
    let mut y = dev.alloc::<f32>(256).unwrap();
    let config = LaunchConfig {
        stream: Some(&raw),
        ..LaunchConfig::new(dims1d(4), dims1d(64), 0)
    };
    let kernel = twice_plus_one.ir().unwrap();
    let launch = |y: &mut spoc::Buffer<f32>| {
        let args = [Arg::BufferMut(y.raw_mut()), Arg::U32(20_000)];
        be.execute_direct(
            dev.backend_id,
            twice_plus_one.def(),
            kernel,
            None,
            &config,
            &args,
        )
        .unwrap();
    };
    // Untracked work queued through the backend itself: its own download waits for it.
    launch(&mut y);
    let mut bytes = vec![0u8; 256 * 4];
    be.copy_d2h(y.raw().mem(), 0, &mut bytes).unwrap();
    let want = twice_plus_one_host(0.0, 20_000);
    assert!(bytes
        .chunks(4)
        .all(|b| f32::from_le_bytes(b.try_into().unwrap()).to_bits() == want.to_bits()));
    // And freeing the buffer waits, so the next allocation is never written by the old job.
    launch(&mut y);
    drop(y);
    let fresh = dev.alloc::<f32>(256).unwrap();
    be.synchronize_stream(&raw).unwrap();
    assert_eq!(fresh.to_vec().unwrap(), vec![0.0; 256]);
}

#[test]
fn native_streams_waited_on_from_rayon_threads_do_not_deadlock() {
    use rayon::prelude::*;
    let dev = spoc::init_device(Some("Native")).unwrap();
    let n = rayon::current_num_threads() * 2;
    let streams: Vec<Stream> = (0..n).map(|_| dev.new_stream().unwrap()).collect();
    let got: Vec<f32> = (0..n)
        .into_par_iter()
        .map(|k| {
            let mut y = dev.upload(&vec![k as f32; 256]).unwrap();
            twice_plus_one
                .launch_on(&streams[k], dims1d(4), dims1d(64), (&mut y, 3))
                .unwrap();
            y.to_vec().unwrap()[0]
        })
        .collect();
    let want: Vec<f32> = (0..n).map(|k| twice_plus_one_host(k as f32, 3)).collect();
    assert_eq!(got, want);
}
