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

use std::path::PathBuf;

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Map;
/// A setting's value, as the fronts hand it over (JSON's data model).
pub use serde_json::Value;

use crate::config::ConfigError;

/// A layer of settings: keys and their values, some or all of them ([`from_layers`]).
pub type Layer = Map<String, Value>;

/// What a setting holds: how a front reads it from text and names its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number, 0 or more.
    Int,
    /// On or off (a flag on the command line).
    Bool,
    /// A number of seconds.
    Seconds,
    /// A file path.
    Path,
    /// A board, by its number of rings.
    Board,
    /// A number (a fraction, a temperature).
    Number,
    /// A table of settings of its own (`[search]` in a file, a dict in Python): no command-line
    /// option.
    Table,
}

impl Kind {
    /// The placeholder of its value in command-line help.
    pub fn value_name(self) -> &'static str {
        match self {
            Kind::Int => "N",
            Kind::Bool => "",
            Kind::Seconds => "SECONDS",
            Kind::Path => "FILE",
            Kind::Board => "RINGS",
            Kind::Number => "X",
            Kind::Table => "TABLE",
        }
    }

    /// Its value from command-line text, as the JSON value the settings type reads.
    pub fn parse(self, text: &str) -> Result<Value, String> {
        let t = text.trim();
        match self {
            Kind::Int | Kind::Board => t
                .parse::<u64>()
                .map(Value::from)
                .map_err(|_| format!("{text:?} is not a whole number, 0 or more")),
            Kind::Bool => match t {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(format!("{text:?} is not true or false")),
            },
            Kind::Seconds => match t.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::from(x)),
                // JSON has no NaN or infinities: out of every range, said so.
                Ok(_) => Err(format!("{text:?} is not a finite number of seconds")),
                Err(_) => Err(format!("{text:?} is not a number of seconds")),
            },
            Kind::Number => match t.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Value::from(x)),
                Ok(_) => Err(format!("{text:?} is not a finite number")),
                Err(_) => Err(format!("{text:?} is not a number")),
            },
            Kind::Path => Ok(Value::String(text.to_string())),
            Kind::Table => Err("a table of settings is given in a config file".into()),
        }
    }
}

/// One field of a settings type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Its key (in files, Python keywords; `--key-with-dashes` on the command line).
    pub name: &'static str,
    /// Its documentation: the doc comment's lines.
    pub doc: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether it may be empty (`None`: left out of a file, None in Python).
    pub optional: bool,
}

impl Field {
    /// The documentation as one paragraph.
    pub fn help(&self) -> String {
        self.doc.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
    }
}

/// The Rust types a setting may have, and their [`Kind`].
pub trait SettingType {
    /// What it holds.
    const KIND: Kind;
    /// Whether it may be empty.
    const OPTIONAL: bool = false;

    /// Whether this value is empty (`None`).
    fn is_empty(&self) -> bool {
        false
    }
}

/// `SettingType` for plain types of one kind.
macro_rules! setting_types {
    ($($kind:ident: $($ty:ty),+;)+) => {
        $($(impl SettingType for $ty {
            const KIND: Kind = Kind::$kind;
        })+)+
    };
}

setting_types! {
    Int: usize, u32, u64;
    Bool: bool;
    Seconds: Seconds;
    Path: PathBuf;
    Board: zertz_env::Board;
    Number: f32;
    Table: zertz_search::SearchSettings;
}
impl<T: SettingType> SettingType for Option<T> {
    const KIND: Kind = T::KIND;
    const OPTIONAL: bool = true;

    fn is_empty(&self) -> bool {
        self.is_none()
    }
}

/// A number of seconds (a float in files and Python, checked by the setting that holds it).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

/// A settings type that lists its fields: made by [`settings!`](crate::settings!).
pub trait Described {
    /// Its fields, in order.
    const FIELDS: &'static [Field];

    /// The field of that key.
    fn field(name: &str) -> Option<&'static Field> {
        Self::FIELDS.iter().find(|f| f.name == name)
    }

    /// The fields that take one value: the command line's options and Python's keywords (all
    /// but tables, such as self-play's `[search]`, which a config gives).
    fn value_fields() -> impl Iterator<Item = &'static Field> {
        Self::FIELDS.iter().filter(|f| f.kind != Kind::Table)
    }

    /// The keys, in order, for messages: `games, board, ...`.
    fn keys() -> String {
        Self::FIELDS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
    }
}

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

/// Whether a field's value is empty (`None`): left out when written (TOML has no null).
#[doc(hidden)]
pub fn is_none<T: SettingType>(value: &T) -> bool {
    value.is_empty()
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
