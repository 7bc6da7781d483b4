//! The global registry of backends, and the global device id space.
//!
//! # Priorities
//! Each backend is registered with a priority; [`crate::init_device`] picks the device of
//! highest *rank*, where a device's rank is its backend's priority, except that a CPU device
//! (`Capabilities::is_cpu`) of a backend ranked above Native is demoted by
//! [`priority::CPU_DEMOTION`]. With the built-in numbers this orders GPU backends (CUDA/PTX 400,
//! CUDA/C 390, HIP 380, Vulkan 360, OpenCL 340) above Native (200), above OpenCL and Vulkan on a
//! CPU (40 and 60: PoCL, lavapipe), above the Interpreter (0). Ties go to the backend registered
//! first, then to the lower backend-local index.
//!
//! # Switches
//! `SPOC_DISABLE_<NAME>=1` hides a backend: `<NAME>` is the backend's name upper-cased with every
//! character other than a letter or digit replaced by `_` (`SPOC_DISABLE_NATIVE`,
//! `SPOC_DISABLE_CUDA_PTX`); a family switch hides every refinement (`SPOC_DISABLE_CUDA` hides
//! CUDA/PTX and CUDA/C). `SPOC_DISABLE_GPU=1` hides every GPU device. The switches take the
//! values of [`crate::env`] (`1`/`true`/`on`/`yes`, `0`/`false`/`off`/`no`; anything else makes
//! the query an [`Error::InvalidEnvironment`]); they are read at every device query, so they can
//! change while the program runs.
//!
//! # Picking a device
//! [`crate::init_device`]`(None)` takes the backend named by `SPOC_DEVICE` when it is set (a
//! backend or family name, as `framework` takes it), else the best device of all; a
//! `SPOC_DEVICE` that names no registered backend is [`Error::BackendNotFound`].
//!
//! # Global ids
//! A device gets its global id the first time a query sees it, from a counter that never goes
//! back: ids are unique across backends and never reused. Within one era the same hardware keeps
//! its id; [`crate::Device::reset`] starts a new era.

use crate::device::{name_matches, Capabilities, Device, DeviceSlot};
use crate::error::{Error, Result};
use crate::executor::Backend;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

pub use crate::backends::priority;

struct Entry {
    backend: Arc<dyn Backend>,
    priority: i32,
    order: usize,
}

/// A device seen in the current era.
struct Seen {
    slot: Arc<DeviceSlot>,
    name: Arc<str>,
    caps: Capabilities,
}

struct State {
    entries: Vec<Entry>,
    next_id: usize,
    era: u64,
    /// Devices of the current era per backend (by registration order), enumerated once an era.
    seen: HashMap<usize, Vec<Seen>>,
}

static STATE: LazyLock<Mutex<State>> = LazyLock::new(|| {
    let mut state = State {
        entries: Vec::new(),
        next_id: 0,
        era: 0,
        seen: HashMap::new(),
    };
    for (backend, priority) in crate::backends::builtin_backends() {
        let order = state.entries.len();
        state.entries.push(Entry {
            backend,
            priority,
            order,
        });
    }
    Mutex::new(state)
});

fn state() -> MutexGuard<'static, State> {
    // A panic while holding the lock cannot leave the state inconsistent (every update is a
    // single push/insert), so a poisoned lock is still usable.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers a backend with a priority (see the [module docs](self)). Its devices get global
/// ids the next time devices are queried.
///
/// # Errors
/// [`Error::BackendAlreadyRegistered`] if a backend of that name (case-insensitive) exists.
pub fn register_backend(backend: Arc<dyn Backend>, priority: i32) -> Result<()> {
    let mut st = state();
    let name = backend.name();
    if st
        .entries
        .iter()
        .any(|e| e.backend.name().eq_ignore_ascii_case(name))
    {
        return Err(Error::BackendAlreadyRegistered {
            name: name.to_string(),
        });
    }
    let order = st.entries.len();
    st.entries.push(Entry {
        backend,
        priority,
        order,
    });
    Ok(())
}

/// Every registered backend with its priority, highest first (disabled ones included).
pub fn backends() -> Vec<(Arc<dyn Backend>, i32)> {
    let st = state();
    let mut v: Vec<_> = st.entries.iter().collect();
    v.sort_by_key(|e| (-e.priority, e.order));
    v.into_iter()
        .map(|e| (e.backend.clone(), e.priority))
        .collect()
}

/// The environment variable that disables backend `name` (`SPOC_DISABLE_CUDA_PTX` for
/// `"CUDA/PTX"`).
pub fn disable_var(name: &str) -> String {
    let upper = name
        .to_ascii_uppercase()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    format!("SPOC_DISABLE_{upper}")
}

/// The switch that disables backend `name`, if one is on (its own, then its family's).
///
/// # Errors
/// [`Error::InvalidEnvironment`] for a switch that is neither on nor off.
fn disabled_by(name: &str) -> Result<Option<String>> {
    let own = disable_var(name);
    if crate::env::switch_or(&own, false)? {
        return Ok(Some(own));
    }
    let Some((family, _)) = name.split_once('/') else {
        return Ok(None);
    };
    let fam = disable_var(family);
    Ok(crate::env::switch_or(&fam, false)?.then_some(fam))
}

fn rank(priority: i32, caps: &Capabilities) -> i32 {
    if caps.is_cpu && priority > priority::NATIVE {
        priority - priority::CPU_DEMOTION
    } else {
        priority
    }
}

/// (backend name, why it contributed no device).
type Reasons = Vec<(String, String)>;

/// The current era's devices of every enabled backend matching `framework`, best first, and the
/// reasons matching backends contributed none.
fn query(framework: Option<&str>) -> Result<(Vec<Device>, Reasons)> {
    let mut st = state();
    let st = &mut *st;
    let mut matching: Vec<&Entry> = st
        .entries
        .iter()
        .filter(|e| framework.is_none_or(|f| name_matches(f, e.backend.name())))
        .collect();
    if let (Some(f), true) = (framework, matching.is_empty()) {
        return Err(Error::BackendNotFound {
            name: f.to_string(),
            registered: st
                .entries
                .iter()
                .map(|e| e.backend.name())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    matching.sort_by_key(|e| (-e.priority, e.order));
    let no_gpu = crate::env::switch_or("SPOC_DISABLE_GPU", false)?;
    let mut found: Vec<(i32, usize, usize, Device)> = Vec::new();
    let mut reasons = Vec::new();
    for e in matching {
        let name = e.backend.name();
        if let Some(var) = disabled_by(name)? {
            reasons.push((name.to_string(), format!("disabled by {var}")));
            continue;
        }
        if !st.seen.contains_key(&e.order) {
            if !e.backend.is_available() {
                let why = e
                    .backend
                    .unavailable_reason()
                    .unwrap_or_else(|| "not available on this machine".into());
                reasons.push((name.to_string(), why));
                continue;
            }
            let infos = match e.backend.devices() {
                Ok(infos) => infos,
                Err(err) if framework.is_some() => return Err(err),
                Err(err) => {
                    tracing::warn!("backend {name}: device enumeration failed: {err}");
                    reasons.push((name.to_string(), err.to_string()));
                    continue;
                }
            };
            let seen = infos
                .into_iter()
                .map(|info| {
                    let id = st.next_id;
                    st.next_id += 1;
                    Seen {
                        slot: Arc::new(DeviceSlot {
                            id,
                            local: info.local_id,
                            era: st.era,
                            backend: e.backend.clone(),
                            caps: info.capabilities,
                        }),
                        name: info.name.into(),
                        caps: info.capabilities,
                    }
                })
                .collect();
            st.seen.insert(e.order, seen);
        }
        let mut any = false;
        for s in &st.seen[&e.order] {
            if no_gpu && s.caps.is_gpu {
                continue;
            }
            any = true;
            let dev = Device::from_slot(s.slot.clone(), s.name.clone(), s.caps);
            found.push((rank(e.priority, &s.caps), e.order, s.slot.local, dev));
        }
        if !any {
            let why = if no_gpu {
                "no device (SPOC_DISABLE_GPU is on)"
            } else {
                "no device"
            };
            reasons.push((name.to_string(), why.into()));
        }
    }
    found.sort_by_key(|(rank, order, local, _)| (-rank, *order, *local));
    Ok((found.into_iter().map(|(.., d)| d).collect(), reasons))
}

pub(crate) fn devices(framework: Option<&str>) -> Result<Vec<Device>> {
    query(framework).map(|(devs, _)| devs)
}

pub(crate) fn best_device(framework: Option<&str>) -> Result<Device> {
    let (devs, reasons) = query(framework)?;
    if let Some(d) = devs.into_iter().next() {
        return Ok(d);
    }
    let unavailable: Vec<_> = reasons
        .iter()
        .filter(|(_, why)| !why.starts_with("no device"))
        .collect();
    if !unavailable.is_empty() && unavailable.len() == reasons.len() {
        Err(Error::BackendUnavailable {
            backend: unavailable
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            reason: unavailable
                .iter()
                .map(|(n, why)| format!("{n}: {why}"))
                .collect::<Vec<_>>()
                .join("; "),
        })
    } else {
        Err(Error::NoDevice {
            framework: framework.map(str::to_string),
        })
    }
}

/// Global ids of the current era that designate backend-local device `local` of `backend`.
pub(crate) fn global_ids(backend: &str, local: usize) -> Vec<usize> {
    let st = state();
    st.entries
        .iter()
        .filter(|e| e.backend.name() == backend)
        .filter_map(|e| st.seen.get(&e.order))
        .flatten()
        .filter(|s| s.slot.local == local)
        .map(|s| s.slot.id)
        .collect()
}

pub(crate) fn reset() {
    {
        let mut st = state();
        st.era += 1;
        st.seen.clear();
        crate::device::set_current_era(st.era);
    }
    crate::cache::notify_all_devices_retired();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disable_var_names() {
        assert_eq!(disable_var("Native"), "SPOC_DISABLE_NATIVE");
        assert_eq!(disable_var("CUDA/PTX"), "SPOC_DISABLE_CUDA_PTX");
        assert_eq!(disable_var("open-cl x"), "SPOC_DISABLE_OPEN_CL_X");
    }

    #[test]
    fn cpu_devices_of_gpu_backends_rank_between_native_and_interpreter() {
        let cpu = Capabilities::cpu(4, 0);
        let gpu = Capabilities {
            is_cpu: false,
            is_gpu: true,
            ..cpu
        };
        assert_eq!(rank(priority::OPENCL, &gpu), 340);
        let cl_cpu = rank(priority::OPENCL, &cpu);
        let vk_cpu = rank(priority::VULKAN, &cpu);
        for r in [cl_cpu, vk_cpu] {
            assert!(r < priority::NATIVE && r > priority::INTERPRETER, "{r}");
        }
        assert_eq!(rank(priority::NATIVE, &cpu), priority::NATIVE);
    }
}
