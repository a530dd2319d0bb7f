//! Layers of settings ([`from_layers`]): a config file ([`toml_layer`]), the command line's
//! options, Python's keywords, each a map of keys to values, merged in order over the defaults,
//! each value checked alone so that an error names its key, then the whole checked
//! ([`Settings::validate`]).

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Map;

use crate::{ConfigError, Described, Value};

/// A layer of settings: keys and their values, some or all of them ([`from_layers`]).
pub type Layer = Map<String, Value>;

/// A settings type: described, defaulted, read with serde and checked. Its ranges are its
/// declaration's ([`Described::check_ranges`]); what no range says (how two settings go together,
/// a grammar) is [`Settings::check_together`], written beside it.
pub trait Settings: Described + Default + Serialize + DeserializeOwned {
    /// Checks every value's range, then what the values say together; an error names its key.
    fn validate(&self) -> Result<(), ConfigError> {
        self.check_ranges()?;
        self.check_together()
    }

    /// The checks beyond the declared ranges (none by default).
    fn check_together(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}

/// An unknown key, naming the known ones.
fn unknown<S: Described>(key: &str) -> ConfigError {
    ConfigError::Parse(format!("unknown key {key:?} (the keys: {})", S::keys()))
}

/// A serde message without its position (which means nothing to whoever wrote the value), and
/// with Rust's integer types said as their ranges (`expected u32`: a whole number from 0 to
/// 4294967295).
pub(crate) fn serde_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let mut message = message.split(" at line ").next().unwrap_or_default().to_string();
    for (rust, max) in [
        ("u8", u64::from(u8::MAX)),
        ("u16", u64::from(u16::MAX)),
        ("u32", u64::from(u32::MAX)),
        ("u64", u64::MAX),
        ("usize", usize::MAX as u64),
    ] {
        message = message.replace(
            &format!("expected {rust}"),
            &format!("expected a whole number from 0 to {max}"),
        );
    }
    message
}

/// Checks one value alone (the others at their defaults): its type, then its range. The error
/// names the key.
pub fn check_value<S: Settings>(key: &str, value: &Value) -> Result<(), ConfigError> {
    let Some(field) = S::field(key) else {
        return Err(unknown::<S>(key));
    };
    let one = Map::from_iter([(key.to_string(), value.clone())]);
    let settings: S = serde_json::from_value(Value::Object(one))
        .map_err(|e| ConfigError::Value { key: field.name, reason: serde_message(&e) })?;
    settings.validate()
}

/// The settings of `layers` merged in order (a later one's keys over an earlier one's; the
/// defaults under all), each value checked alone first so that an error names its key (an
/// unknown key first, then the fields in their declared order), then the whole checked.
pub fn from_layers<S: Settings>(layers: impl IntoIterator<Item = Layer>) -> Result<S, ConfigError> {
    let mut merged = Map::new();
    for layer in layers {
        let mut entries: Vec<(String, Value)> = layer.into_iter().collect();
        entries.sort_by_key(|(key, _)| S::FIELDS.iter().position(|f| f.name == key.as_str()));
        for (key, value) in entries {
            check_value::<S>(&key, &value)?;
            merged.insert(key, value);
        }
    }
    let settings: S = serde_json::from_value(Value::Object(merged))
        .map_err(|e| ConfigError::Parse(serde_message(&e)))?;
    settings.validate()?;
    Ok(settings)
}

/// TOML text as a layer of settings, with the keys of `others` (those of the file that are not
/// settings, such as a match's players) taken out and returned beside it.
pub fn toml_layer(text: &str, others: &[&str]) -> Result<(Layer, Layer), ConfigError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
    let mut layer = Layer::new();
    for (key, value) in table {
        let value = json_value(&value).map_err(|(mut path, reason)| {
            path.push(key.clone());
            path.reverse();
            ConfigError::Parse(format!("{}: {reason}", path.join(".")))
        })?;
        layer.insert(key, value);
    }
    let mut taken = Map::new();
    for key in others {
        if let Some(v) = layer.remove(*key) {
            taken.insert((*key).to_string(), v);
        }
    }
    Ok((layer, taken))
}

/// A TOML value as JSON's: NaN and infinities (which TOML has and JSON has not: they would
/// become null, which is "none") and dates are refused, with the keys of the tables it is in
/// (innermost first) and why.
fn json_value(value: &toml::Value) -> Result<Value, (Vec<String>, String)> {
    let refuse = |reason: String| Err((Vec::new(), reason));
    Ok(match value {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(x) if x.is_finite() => Value::from(*x),
        toml::Value::Float(x) => return refuse(format!("must be a finite number, not {x}")),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => return refuse(format!("a date ({d}) is no setting")),
        toml::Value::Array(items) => {
            Value::Array(items.iter().map(json_value).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| {
                    let v = json_value(v).map_err(|(mut path, reason)| {
                        path.push(k.clone());
                        (path, reason)
                    })?;
                    Ok((k.clone(), v))
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// The defaults of `S` as a JSON object (a `None` left out). Through text, so that an `f32`
/// reads as it is written (`-0.95`, not the `f64` nearest to the `f32`, `-0.949999988079071`).
pub fn defaults<S: Settings>() -> Layer {
    let text = serde_json::to_string(&S::default()).unwrap_or_default();
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}
