//! Rust values to Python values: anything serde can write becomes the Python object that
//! `json.loads` makes of it (dicts, lists, numbers, strings, bools, None), so that a type's
//! fields are listed once, in Rust; and Python keywords to settings ([`settings_layer`]), checked
//! by the settings type's own description.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList};
use serde::Serialize;
use std::path::PathBuf;
use zertz_selfplay::config::SelfPlayConfig;
use zertz_settings::ConfigError;
use zertz_settings::{self as settings, Field, Kind, Layer, Settings, Value};

use crate::error::Error;

/// `value` as Python data (through JSON).
pub fn to_python<'py, T: Serialize>(
    py: Python<'py>,
    value: &T,
) -> Result<Bound<'py, PyAny>, Error> {
    let text = serde_json::to_string(value)
        .map_err(|e| Error::Internal(format!("cannot convert to Python: {e}")))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?)
}

/// Python's annotation of a setting's values (the stub is generated from it).
fn annotation(field: &Field) -> String {
    let base = match field.kind {
        Kind::Int | Kind::Board => "int",
        Kind::Bool => "bool",
        Kind::Seconds | Kind::Number => "float",
        Kind::Path => "str | PathLike[str]",
        Kind::Text => "str",
        Kind::Table => "dict[str, Any]",
    };
    if field.optional { format!("{base} | None") } else { base.to_string() }
}

/// The fields of settings type `S` that are keywords (all but tables, such as self-play's
/// `search`, which a config gives) as Python data: one dict per field, in order, `{"name",
/// "type"` (its annotation), `"default"` (None: none), `"doc"}`.
pub fn describe_settings<'py, S: Settings>(py: Python<'py>) -> Result<Bound<'py, PyList>, Error> {
    let defaults = to_python(py, &settings::defaults::<S>())?;
    let list = PyList::empty(py);
    for field in S::value_fields() {
        let d = PyDict::new(py);
        d.set_item("name", field.name)?;
        d.set_item("type", annotation(field))?;
        d.set_item("default", defaults.get_item(field.name).ok())?;
        d.set_item("doc", field.help())?;
        list.append(d)?;
    }
    Ok(list)
}

/// Whether `value` is a bool: Python's, or numpy's (which is no int).
fn is_bool(value: &Bound<'_, PyAny>) -> bool {
    value.is_instance_of::<PyBool>()
        || value.get_type().name().is_ok_and(|n| n.to_str().is_ok_and(|n| n == "bool"))
}

/// One keyword's value as a setting's: its Python type checked against the field's kind
/// (TypeError; numpy's numbers are numbers, bools are not), a path made text, a float checked
/// finite; its range is the settings type's.
fn setting_value(field: &Field, value: &Bound<'_, PyAny>) -> Result<Value, Error> {
    let name = field.name;
    let wrong = || {
        let got = value.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string());
        Error::Type(format!("{name} must be {}, not {got}", annotation(field)))
    };
    if value.is_none() {
        return if field.optional { Ok(Value::Null) } else { Err(wrong()) };
    }
    let is_bool = is_bool(value);
    // An integer: Python's, or anything with `__index__` (numpy's).
    let is_int = !is_bool && (value.is_instance_of::<PyInt>() || value.hasattr("__index__")?);
    match field.kind {
        Kind::Bool if is_bool => Ok(Value::Bool(value.is_truthy()?)),
        Kind::Int | Kind::Board if is_int => {
            let value = value.py().import("operator")?.call_method1("index", (value,))?;
            match value.extract::<u64>() {
                Ok(n) => Ok(Value::from(n)),
                // Past u64: the setting's own range is checked on the value that fits.
                Err(_) => Err(Error::Config(ConfigError::Value {
                    key: name,
                    reason: if value.lt(0)? {
                        format!("must not be negative, not {value}")
                    } else {
                        format!("{value} is too large")
                    },
                })),
            }
        }
        Kind::Seconds | Kind::Number
            if is_int
                || (!is_bool && value.is_instance_of::<PyFloat>())
                || (!is_bool && value.hasattr("__float__")?) =>
        {
            let x: f64 = match value.extract() {
                Ok(x) => x,
                Err(_) if is_int => {
                    return Err(Error::Config(ConfigError::Value {
                        key: name,
                        reason: "an integer beyond every float".into(),
                    }));
                }
                Err(_) => return Err(wrong()),
            };
            if !x.is_finite() {
                let what = if field.kind == Kind::Seconds { " of seconds" } else { "" };
                return Err(Error::Config(ConfigError::Value {
                    key: name,
                    reason: format!("must be a finite number{what}, not {x}"),
                }));
            }
            Ok(Value::from(x))
        }
        Kind::Path if !is_bool => {
            let path: std::path::PathBuf = value.extract().map_err(|_| wrong())?;
            let text = path.to_str().ok_or_else(|| {
                Error::Config(ConfigError::Value { key: name, reason: "not UTF-8".into() })
            })?;
            Ok(Value::String(text.to_string()))
        }
        Kind::Text if value.is_instance_of::<pyo3::types::PyString>() => {
            Ok(Value::String(value.extract::<String>()?))
        }
        _ => Err(wrong()),
    }
}

/// The keywords of `function` as a layer of settings of type `S`: an unknown keyword is a
/// TypeError (as Python's own), a value of the wrong type too. Their ranges are checked where
/// the layer is read ([`settings::from_layers`]: ValueError naming the key). `withheld` are
/// settings of `S` that `function` does not take, each with the reason: a ValueError giving it,
/// and left out of the keywords an unknown one lists.
pub fn settings_layer<S: Settings>(
    function: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
    withheld: &[(&'static str, &str)],
) -> Result<Layer, Error> {
    let mut layer = Layer::new();
    for (key, value) in kwargs.into_iter().flat_map(|d| d.iter()) {
        let key: String = key.extract()?;
        if let Some(&(key, reason)) = withheld.iter().find(|(k, _)| *k == key) {
            return Err(Error::Config(ConfigError::Value { key, reason: reason.into() }));
        }
        let Some(field) = S::value_fields().find(|f| f.name == key) else {
            let keywords: Vec<&str> = S::value_fields()
                .map(|f| f.name)
                .filter(|name| withheld.iter().all(|(k, _)| k != name))
                .collect();
            let table = S::field(&key).is_some_and(|f| f.kind == Kind::Table);
            let hint =
                if table { format!(" ({key} is a table: give it in config)") } else { "".into() };
            return Err(Error::Type(format!(
                "{function}() got an unexpected keyword argument '{key}'{hint} (its settings: {})",
                keywords.join(", ")
            )));
        };
        layer.insert(key, setting_value(field, &value)?);
    }
    Ok(layer)
}

/// Self-play settings from a TOML file, a dict (the same keys and tables: `{"games": 8,
/// "search": {"preset": "rollout"}}`) or None (the defaults), with the keywords `settings`
/// (`games=8`, the keys but tables) over them; checked by Rust's own types, an error
/// naming the key.
pub fn selfplay_settings(
    config: Option<&Bound<'_, PyAny>>,
    settings: Option<&Bound<'_, PyDict>>,
) -> Result<SelfPlayConfig, Error> {
    let keywords = settings_layer::<SelfPlayConfig>("selfplay", settings, &[])?;
    let file = match config.filter(|o| !o.is_none()) {
        None => Layer::new(),
        Some(obj) => match obj.cast::<PyDict>() {
            Ok(table) => {
                if let Some(key) = non_finite(table.as_any(), "")? {
                    return Err(ConfigError::Value {
                        key: "config",
                        reason: format!("{key} is not finite"),
                    }
                    .into());
                }
                let text: String =
                    obj.py().import("json")?.call_method1("dumps", (table,))?.extract()?;
                match serde_json::from_str(&text) {
                    Ok(Value::Object(layer)) => layer,
                    _ => {
                        return Err(
                            ConfigError::Parse("config: not a table of settings".into()).into()
                        );
                    }
                }
            }
            Err(_) => {
                let path: PathBuf = obj.extract().map_err(|_| {
                    Error::Type(format!(
                        "config must be a path, a dict or None, not {}",
                        obj.get_type().name().map_or_else(|_| "?".into(), |n| n.to_string())
                    ))
                })?;
                let text = zertz_settings::read_text(&path)?;
                settings::toml_layer(&text, &[])?.0
            }
        },
    };
    Ok(settings::from_layers([file, keywords])?)
}

/// The key path of the first NaN or infinite float in nested dicts (JSON has no way to say them).
fn non_finite(obj: &Bound<'_, PyAny>, at: &str) -> PyResult<Option<String>> {
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok((!f.value().is_finite()).then(|| at.to_string()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let key =
                if at.is_empty() { k.str()?.to_string() } else { format!("{at}.{}", k.str()?) };
            if let Some(found) = non_finite(&v, &key)? {
                return Ok(Some(found));
            }
        }
    }
    Ok(None)
}
