//! spoc's environment switches go through one parser: `1/true/on/yes`, `0/false/off/no`, and an
//! error naming the variable for anything else; `SPOC_DEVICE` picks `init_device(None)`'s
//! backend. One test, because the environment is the process's (and `SPOC_CHECK` is read once).

use spoc_runtime::{checking, init_device, interpreter, Error};

fn set(var: &str, value: &str) {
    // This binary has one test: nothing reads the environment concurrently.
    std::env::set_var(var, value);
}

#[test]
fn switches_and_spoc_device() {
    // `SPOC_CHECK=off` used to turn checking on (only "", "0" and "false" counted as off).
    set("SPOC_CHECK", "off");
    assert!(!checking().unwrap());

    // SPOC_DEVICE names the backend of `init_device(None)`; an explicit framework wins.
    set("SPOC_DEVICE", "interpreter");
    assert_eq!(init_device(None).unwrap().framework, "Interpreter");
    assert_eq!(init_device(Some("Native")).unwrap().framework, "Native");
    set("SPOC_DEVICE", "garbage");
    match init_device(None) {
        Err(Error::InvalidEnvironment {
            variable,
            value,
            expected,
        }) => {
            assert_eq!(
                (variable.as_str(), value.as_str()),
                ("SPOC_DEVICE", "garbage")
            );
            assert!(expected.contains("Interpreter"), "{expected}");
        }
        other => panic!("SPOC_DEVICE=garbage: {other:?}"),
    }
    set("SPOC_DEVICE", "");
    assert!(init_device(None).is_ok());

    // A disable switch with a value that is neither on nor off is an error naming it.
    set("SPOC_DISABLE_NATIVE", "nope");
    let e = init_device(Some("Native")).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidEnvironment { variable, .. } if variable == "SPOC_DISABLE_NATIVE"),
        "{e:?}"
    );
    set("SPOC_DISABLE_NATIVE", "yes");
    assert!(matches!(
        init_device(Some("Native")),
        Err(Error::BackendUnavailable { .. })
    ));
    set("SPOC_DISABLE_NATIVE", "off");
    assert_eq!(init_device(Some("Native")).unwrap().framework, "Native");

    // The Interpreter's switches too (read once, at the first launch or query).
    set("SPOC_CHECK_GLOBAL_RACES", "sometimes");
    let e = interpreter::checks().unwrap_err();
    assert!(e.to_string().contains("SPOC_CHECK_GLOBAL_RACES"), "{e}");
}
