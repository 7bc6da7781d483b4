//! The two compile-cache layers: memo hits, per-device keys, builds racing a clear or a device
//! teardown, and many threads compiling at once.

mod support;

use spoc_runtime::backend::CompileOptions;
use spoc_runtime::cache::{self, CacheKey};
use spoc_runtime::{
    clear_cache, compile_kernel, dims1d, init_device, run, Arg, CompiledKernel, Device, Error,
    KernelDef,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use support::{test_backend, Gate, TestBackend, TestModule, IOTA, SAXPY};

/// The caches are process-global: tests of this file run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

const NAME: &str = "CacheJit";

fn jit() -> (Arc<TestBackend>, Vec<Device>) {
    let (b, devs) = test_backend(NAME, 2, 1000);
    assert_eq!(devs.len(), 2);
    (b, devs)
}

fn module(ck: &CompiledKernel) -> &TestModule {
    ck.module()
        .expect("a JIT kernel has a module")
        .handle::<TestModule>()
        .expect("a TestModule")
}

/// Runs `iota` on `dev`, retrying a compile that a concurrent `clear_cache` interrupted.
fn run_iota(dev: &Device, base: u32, n: usize) -> Vec<u32> {
    let mut out = dev.alloc::<u32>(n).unwrap();
    loop {
        match run(
            dev,
            &IOTA,
            vec![Arg::U32(base), (&mut out).into()],
            dims1d((n as u32).div_ceil(64)),
            dims1d(64),
            0,
        ) {
            Ok(()) => break,
            Err(Error::CacheClearedDuringBuild { .. }) => continue,
            Err(e) => panic!("iota on {dev}: {e}"),
        }
    }
    out.to_vec().unwrap()
}

fn iota_want(base: u32, n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| base + i).collect()
}

#[test]
fn a_hit_returns_the_same_arc() {
    let _g = serial();
    let (b, devs) = jit();
    clear_cache();
    let before = b.compiles.load(Ordering::SeqCst);
    let k1 = compile_kernel(&devs[0], &SAXPY).unwrap();
    let k2 = compile_kernel(&devs[0], &SAXPY).unwrap();
    assert!(Arc::ptr_eq(&k1, &k2));
    assert!(Arc::ptr_eq(k1.module().unwrap(), k2.module().unwrap()));
    assert_eq!(b.compiles.load(Ordering::SeqCst), before + 1);
    assert_eq!(module(&k1).kernel, "saxpy");

    // The CPU backends memoize too.
    for name in ["Native", "Interpreter"] {
        let dev = init_device(Some(name)).unwrap();
        let a = compile_kernel(&dev, &SAXPY).unwrap();
        let b = compile_kernel(&dev, &SAXPY).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "{name}");
        assert_eq!(a.device().id, dev.id);
    }
}

#[test]
fn keys_differ_per_global_device() {
    let _g = serial();
    let (b, devs) = jit();
    clear_cache();
    assert_ne!(devs[0].id, devs[1].id);
    assert_eq!((devs[0].backend_id, devs[1].backend_id), (0, 1));
    let k0 = compile_kernel(&devs[0], &SAXPY).unwrap();
    let k1 = compile_kernel(&devs[1], &SAXPY).unwrap();
    assert!(!Arc::ptr_eq(&k0, &k1));
    assert_eq!(k0.device().id, devs[0].id);
    assert_eq!(k1.device().id, devs[1].id);
    assert_eq!(module(&k0).device, 0);
    assert_eq!(module(&k1).device, 1);
    assert_ne!(module(&k0).serial, module(&k1).serial);
    // The backend's own cache is keyed by backend-local index.
    let hash = k0.hash();
    for local in [0, 1] {
        let key = CacheKey::new(local, "saxpy", hash, CompileOptions::default());
        let m = b.cache.get(&key).expect("cached per local device");
        assert_eq!(m.handle::<TestModule>().unwrap().device, local);
    }
    // Same kernel on another backend: another entry again.
    let native = init_device(Some("Native")).unwrap();
    let kn = compile_kernel(&native, &SAXPY).unwrap();
    assert!(kn.module().is_none());
    assert_eq!(kn.hash(), hash);
    // Each device runs what it was given.
    for dev in devs.iter().chain([&native]) {
        assert_eq!(run_iota(dev, 5, 100), iota_want(5, 100), "{dev}");
    }
}

/// Starts compiling `def` on `dev` in another thread, stopped inside the backend's `compile`
/// at `gate`; `during` runs while it is stopped; returns the compile's result.
fn interleave(
    b: &TestBackend,
    dev: &Device,
    def: &'static KernelDef,
    during: impl FnOnce(),
) -> Result<Arc<CompiledKernel>, Error> {
    let gate = Gate::new();
    b.arm(gate.clone());
    let dev = dev.clone();
    let g = gate.clone();
    let h = std::thread::spawn(move || compile_kernel(&dev, def));
    g.entered.wait();
    during();
    g.release.wait();
    h.join().unwrap()
}

#[test]
fn a_build_during_clear_cache_fails_and_a_retry_succeeds() {
    let _g = serial();
    let (b, devs) = jit();
    clear_cache();
    let cleared = Arc::new(AtomicBool::new(false));
    let c = cleared.clone();
    let hook = cache::on_clear(move || c.store(true, Ordering::SeqCst));
    let r = interleave(&b, &devs[0], &IOTA, clear_cache);
    assert!(
        matches!(&r, Err(Error::CacheClearedDuringBuild { kernel }) if kernel == "iota"),
        "{r:?}"
    );
    assert!(cleared.load(Ordering::SeqCst), "clear hooks ran");
    assert!(cache::remove_hook(hook));
    // Nothing stale was installed in either layer: the retry compiles afresh and works.
    let key = |local| {
        CacheKey::new(
            local,
            "iota",
            IOTA.kernel().unwrap().content_hash(),
            CompileOptions::default(),
        )
    };
    assert!(b.cache.get(&key(0)).is_none());
    let before = b.compiles.load(Ordering::SeqCst);
    let k = compile_kernel(&devs[0], &IOTA).unwrap();
    assert_eq!(b.compiles.load(Ordering::SeqCst), before + 1);
    assert_eq!(module(&k).kernel, "iota");
    assert_eq!(run_iota(&devs[0], 7, 300), iota_want(7, 300));
}

#[test]
fn a_build_during_device_teardown_fails() {
    let _g = serial();
    let (b, devs) = jit();
    clear_cache();
    // A kernel memoized for device 1 before the teardown.
    let old = compile_kernel(&devs[1], &SAXPY).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let hook = cache::on_device_teardown(move |backend, local| {
        s.lock().unwrap().push((backend.to_string(), local))
    });
    let r = interleave(&b, &devs[1], &IOTA, || {
        b.cache.teardown_device(1);
        cache::notify_device_teardown(NAME, 1);
    });
    assert!(
        matches!(&r, Err(Error::DeviceDestroyedDuringBuild { kernel, device: 1 }) if kernel == "iota"),
        "{r:?}"
    );
    assert_eq!(*seen.lock().unwrap(), vec![(NAME.to_string(), 1)]);
    assert!(cache::remove_hook(hook));
    // The memo dropped device 1's kernels: a new compile, a new artefact.
    let new = compile_kernel(&devs[1], &SAXPY).unwrap();
    assert!(!Arc::ptr_eq(&old, &new));
    assert_ne!(module(&old).serial, module(&new).serial);
    // Device 0 was not touched.
    let d0 = compile_kernel(&devs[0], &SAXPY).unwrap();
    assert!(Arc::ptr_eq(&d0, &compile_kernel(&devs[0], &SAXPY).unwrap()));
}

#[test]
fn teardown_of_a_cpu_device_drops_its_memo_entries() {
    let _g = serial();
    let dev = init_device(Some("Native")).unwrap();
    let a = compile_kernel(&dev, &SAXPY).unwrap();
    cache::notify_device_teardown("Native", 0);
    let b = compile_kernel(&dev, &SAXPY).unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
}

#[test]
fn eight_threads_hammering_compile_kernel_get_correct_kernels() {
    let _g = serial();
    let (b, jit_devs) = jit();
    clear_cache();
    let mut devs = jit_devs.clone();
    devs.push(init_device(Some("Native")).unwrap());
    devs.push(init_device(Some("Interpreter")).unwrap());
    let defs: [&'static KernelDef; 2] = [&SAXPY, &IOTA];
    b.compile_delay_us.store(300, Ordering::SeqCst);
    let stop = Arc::new(AtomicBool::new(false));
    // A ninth thread keeps clearing the caches: builds may fail with the documented error and
    // succeed on retry, but a wrong kernel must never come back.
    let clearer = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                clear_cache();
                n += 1;
                std::thread::sleep(std::time::Duration::from_micros(1000));
            }
            n
        })
    };
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let devs = devs.clone();
            std::thread::spawn(move || {
                let mut retries = 0;
                for iter in 0..60u32 {
                    let dev = &devs[(t + iter) as usize % devs.len()];
                    let def = defs[(t + iter / 3) as usize % 2];
                    let ck = loop {
                        match compile_kernel(dev, def) {
                            Ok(ck) => break ck,
                            Err(Error::CacheClearedDuringBuild { kernel }) => {
                                assert_eq!(kernel, def.name);
                                retries += 1;
                            }
                            Err(e) => panic!("unexpected error: {e}"),
                        }
                    };
                    assert_eq!(ck.name(), def.name);
                    assert_eq!(ck.device().id, dev.id);
                    assert_eq!(ck.kernel().name, def.name);
                    if dev.framework == NAME {
                        let m = module(&ck);
                        assert_eq!((m.kernel.as_str(), m.device), (def.name, dev.backend_id));
                    }
                    if iter % 5 == 0 {
                        let base = t * 1000 + iter;
                        assert_eq!(run_iota(dev, base, 257), iota_want(base, 257), "{dev}");
                    }
                }
                retries
            })
        })
        .collect();
    let retries: usize = threads.into_iter().map(|h| h.join().unwrap()).sum();
    stop.store(true, Ordering::SeqCst);
    let clears = clearer.join().unwrap();
    assert!(clears > 0);
    eprintln!("{clears} clears, {retries} retried builds");
    b.compile_delay_us.store(0, Ordering::SeqCst);

    // Without clears, concurrent builders of one key all get the winner's Arc.
    clear_cache();
    let results: Vec<Vec<Arc<CompiledKernel>>> = (0..8)
        .map(|_| {
            let devs = devs.clone();
            std::thread::spawn(move || {
                devs.iter()
                    .map(|d| compile_kernel(d, &SAXPY).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    for per_thread in &results[1..] {
        for (a, b) in per_thread.iter().zip(&results[0]) {
            assert!(Arc::ptr_eq(a, b));
        }
    }
    let _ = b;
}
