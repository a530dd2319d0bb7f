//! Settings types that describe themselves: one struct per job, declared once with
//! [`settings!`](crate::settings!), from which every front derives what it shows and checks.
//!
//! A settings struct is a serde type (unknown keys refused, missing keys defaulted) that also
//! lists its fields ([`Described::FIELDS`]: name, documentation, [`Kind`], whether it may be
//! empty) and checks its values ([`Settings::validate`], errors naming the key). From that:
//!
//! - a TOML file is a layer of it ([`toml_layer`]), keys beside the settings taken out first;
//! - the command line gets one option per field (`cli`'s `SettingArgs`: `--opening-actions N`,
//!   its help from the field's doc and default, each value checked as it is parsed);
//! - Python gets keyword arguments of the same names (`zertz.match(**settings)`), their types
//!   checked by [`Kind`] and the stub generated from [`Described::FIELDS`];
//! - layers merge in order ([`from_layers`]: the file, then the options), each value checked
//!   alone, so that an error names the key that holds it.
//!
//! Adding a setting is adding a field (its doc, type and default) and its check.
//!
//! ```
//! use zertz_selfplay::settings::{Described, Kind, Settings, from_layers};
//! use zertz_selfplay::config::ConfigError;
//!
//! zertz_selfplay::settings! {
//!     /// A tiny job.
//!     pub struct Tiny {
//!         /// How many (at most 9).
//!         pub count: u32 = 3,
//!     }
//! }
//! impl Settings for Tiny {
//!     fn validate(&self) -> Result<(), ConfigError> {
//!         if self.count > 9 {
//!             return Err(ConfigError::Value { key: "count", reason: "must be at most 9".into() });
//!         }
//!         Ok(())
//!     }
//! }
//! assert_eq!(Tiny::FIELDS[0].name, "count");
//! assert_eq!(Tiny::FIELDS[0].kind, Kind::Int);
//! let layer = serde_json::json!({"count": 5}).as_object().unwrap().clone();
//! assert_eq!(from_layers::<Tiny>([layer]).unwrap().count, 5);
//! let layer = serde_json::json!({"count": 10}).as_object().unwrap().clone();
//! assert_eq!(from_layers::<Tiny>([layer]).unwrap_err().to_string(), "count: must be at most 9");
//! ```

use serde::{Serialize, de::DeserializeOwned};
use serde_json::Map;
/// What a settings type says of itself, and the kinds of values (the `zertz-settings` crate's,
/// which the search's settings share).
pub use zertz_settings::{Described, Field, Kind, Seconds, SettingType, Value, is_none};

use crate::config::ConfigError;

/// A layer of settings: keys and their values, some or all of them ([`from_layers`]).
pub type Layer = Map<String, Value>;

/// A settings type: described, defaulted, read with serde and checked.
pub trait Settings: Described + Default + Serialize + DeserializeOwned {
    /// Checks every value's range; an error names its key.
    fn validate(&self) -> Result<(), ConfigError>;
}

/// Declares a settings struct: each field with its doc comment, type and default. It derives
/// serde (unknown keys refused, missing keys defaulted), `Default` and [`Described`]; the
/// [`Settings`] impl (the checks) is written beside it. Field types implement [`SettingType`].
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                pub $field:ident : $ty:ty = $default:expr,
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            $(
                $(#[doc = $doc])*
                // A string path: `$crate` is not expanded inside it (callers name this crate).
                #[serde(skip_serializing_if = "zertz_selfplay::settings::is_none")]
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> $name {
                $name { $($field: $default,)* }
            }
        }

        impl $crate::settings::Described for $name {
            const FIELDS: &'static [$crate::settings::Field] = &[$(
                $crate::settings::Field {
                    name: stringify!($field),
                    doc: concat!($($doc, "\n",)*),
                    kind: <$ty as $crate::settings::SettingType>::KIND,
                    optional: <$ty as $crate::settings::SettingType>::OPTIONAL,
                },
            )*];
        }
    };
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
