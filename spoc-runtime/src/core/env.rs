//! spoc's environment switches, read through one parser.
//!
//! A boolean switch (`SPOC_CHECK`, `SPOC_DISABLE_<NAME>`, `SPOC_CHECK_GLOBAL_RACES`, …) is on
//! for `1`, `true`, `on` or `yes` and off for `0`, `false`, `off` or `no` (any case, surrounding
//! white space ignored); unset or empty leaves the default. Anything else is
//! [`Error::InvalidEnvironment`] naming the variable, so that a typo (`SPOC_CHECK=of`) is never
//! read as the opposite of what was meant.

use crate::error::{Error, Result};

/// What a boolean switch accepts, for error messages.
pub const SWITCH_VALUES: &str = "1, true, on, yes (on) or 0, false, off, no (off)";

/// Parses the value of boolean switch `name`: `Ok(None)` for an empty value.
///
/// # Errors
/// [`Error::InvalidEnvironment`] for a value outside [`SWITCH_VALUES`].
pub fn parse_switch(name: &str, value: &str) -> Result<Option<bool>> {
    match value.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "1" | "true" | "on" | "yes" => Ok(Some(true)),
        "0" | "false" | "off" | "no" => Ok(Some(false)),
        _ => Err(Error::InvalidEnvironment {
            variable: name.to_string(),
            value: value.to_string(),
            expected: SWITCH_VALUES.into(),
        }),
    }
}

/// Reads boolean switch `name` from the environment: `Ok(None)` when it is unset or empty.
///
/// # Errors
/// [`Error::InvalidEnvironment`] for a value outside [`SWITCH_VALUES`] (or one that is not
/// UTF-8).
pub fn switch(name: &str) -> Result<Option<bool>> {
    match std::env::var(name) {
        Ok(v) => parse_switch(name, &v),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(Error::InvalidEnvironment {
            variable: name.to_string(),
            value: v.to_string_lossy().into_owned(),
            expected: SWITCH_VALUES.into(),
        }),
    }
}

/// Reads switch `name`, `default` when it is unset or empty.
///
/// # Errors
/// As [`switch`].
pub fn switch_or(name: &str, default: bool) -> Result<bool> {
    Ok(switch(name)?.unwrap_or(default))
}

/// Reads text variable `name`: `None` when unset or empty (white space trimmed).
///
/// # Errors
/// [`Error::InvalidEnvironment`] for a value that is not UTF-8.
pub fn text(name: &str) -> Result<Option<String>> {
    match std::env::var(name) {
        Ok(v) if v.trim().is_empty() => Ok(None),
        Ok(v) => Ok(Some(v.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(Error::InvalidEnvironment {
            variable: name.to_string(),
            value: v.to_string_lossy().into_owned(),
            expected: "UTF-8 text".into(),
        }),
    }
}

/// A boolean switch read once per process (the first time it is asked), with its default.
pub(crate) struct OnceSwitch {
    name: &'static str,
    default: bool,
    /// The value, or the text that did not parse.
    cell: std::sync::OnceLock<std::result::Result<bool, String>>,
}

impl OnceSwitch {
    /// Switch `name`, `default` when unset or empty.
    pub(crate) const fn new(name: &'static str, default: bool) -> OnceSwitch {
        OnceSwitch {
            name,
            default,
            cell: std::sync::OnceLock::new(),
        }
    }

    /// The switch's value.
    ///
    /// # Errors
    /// [`Error::InvalidEnvironment`] (every time) if the variable was neither on nor off.
    pub(crate) fn get(&self) -> Result<bool> {
        let v = self.cell.get_or_init(|| match switch(self.name) {
            Ok(v) => Ok(v.unwrap_or(self.default)),
            Err(Error::InvalidEnvironment { value, .. }) => Err(value),
            Err(_) => Err(String::new()),
        });
        match v {
            Ok(on) => Ok(*on),
            Err(value) => Err(Error::InvalidEnvironment {
                variable: self.name.to_string(),
                value: value.clone(),
                expected: SWITCH_VALUES.into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_on_and_off_and_nothing_else() {
        for v in ["1", "true", "ON", " Yes "] {
            assert_eq!(parse_switch("X", v).unwrap(), Some(true), "{v}");
        }
        for v in ["0", "False", "off", "no"] {
            assert_eq!(parse_switch("X", v).unwrap(), Some(false), "{v}");
        }
        assert_eq!(parse_switch("X", "  ").unwrap(), None);
        for v in ["of", "2", "enable", "y"] {
            match parse_switch("SPOC_CHECK", v) {
                Err(Error::InvalidEnvironment {
                    variable, value, ..
                }) => {
                    assert_eq!((variable.as_str(), value.as_str()), ("SPOC_CHECK", v));
                }
                other => panic!("{v}: {other:?}"),
            }
        }
        let msg = parse_switch("SPOC_CHECK", "of").unwrap_err().to_string();
        assert!(msg.contains("SPOC_CHECK") && msg.contains("`of`"), "{msg}");
    }
}
