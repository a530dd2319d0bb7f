//! Settings types that describe themselves: each declared once by [`settings!`], every field
//! with its doc comment, type, default and range, from which come the checks and their errors
//! ([`Described::check_ranges`]), serde's reading (unknown keys refused, missing keys defaulted),
//! and what every front shows and reads ([`Described::FIELDS`]: name, documentation, [`Kind`],
//! [`Range`]): the command line's options, Python's keywords and their stubs, the docs.
//!
//! Reading and merging layers of settings (files, options, keywords) is [`from_layers`]; the
//! errors are [`ConfigError`] and [`SettingError`].
//!
//! ```
//! use zertz_settings::{ConfigError, Described, Kind, Range, Settings, from_layers};
//!
//! zertz_settings::settings! {
//!     /// A tiny job.
//!     pub struct Tiny {
//!         /// How many.
//!         pub count: u32 = 3, in Range::at_most(9.0),
//!         /// How hot (`count` of them at most).
//!         pub heat: f32 = 1.0, in Range::at_least(0.0),
//!     }
//! }
//! impl Settings for Tiny {
//!     fn check_together(&self) -> Result<(), ConfigError> {
//!         if self.heat > self.count as f32 {
//!             return Err(ConfigError::Value { key: "heat", reason: "must be at most count".into() });
//!         }
//!         Ok(())
//!     }
//! }
//! assert_eq!(Tiny::FIELDS[0].name, "count");
//! assert_eq!(Tiny::FIELDS[0].kind, Kind::Int);
//! assert_eq!(Tiny::FIELDS[0].help(), "How many. At most 9.");
//! let layer = serde_json::json!({"count": 5}).as_object().unwrap().clone();
//! assert_eq!(from_layers::<Tiny>([layer]).unwrap().count, 5);
//! let layer = serde_json::json!({"count": 10}).as_object().unwrap().clone();
//! assert_eq!(from_layers::<Tiny>([layer]).unwrap_err().to_string(), "count: must be at most 9");
//! let layer = serde_json::json!({"count": 0}).as_object().unwrap().clone();
//! assert_eq!(from_layers::<Tiny>([layer]).unwrap_err().to_string(), "heat: must be at most count");
//! ```
//!
//! Adding a setting is a field of its declaration (doc, type, default, range) and its test.

mod error;
mod layers;
pub mod limits;
mod macros;
mod range;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use error::{ConfigError, SettingError, read_text};
pub use layers::{Layer, Settings, check_value, defaults, from_layers, toml_layer};
pub use limits::{DEFAULT_MAX_ACTIONS, DEFAULT_MAX_STEPS, MAX_THREADS};
pub use range::{Bound, Range};
/// A setting's value, as the fronts hand it over (JSON's data model).
pub use serde_json::Value;

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
    /// A word of a small grammar (a device, a number format), read by its type.
    Text,
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
            Kind::Text => "WORD",
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
            Kind::Text => Ok(Value::String(t.to_string())),
            Kind::Table => Err("a table of settings is given in a config file".into()),
        }
    }
}

/// One field of a settings type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field {
    /// Its key (in files, Python keywords; `--key-with-dashes` on the command line).
    pub name: &'static str,
    /// Its documentation: the doc comment's lines.
    pub doc: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether it may be empty (`None`: left out of a file, None in Python).
    pub optional: bool,
    /// The values it takes, if it is a number with a range.
    pub range: Option<Range>,
    /// The value that its command-line option given alone means (`--cuda-graphs` is
    /// `--cuda-graphs on`), if it may be given alone.
    pub flag: Option<&'static str>,
}

impl Field {
    /// The documentation as one paragraph, then the range (`At most 1024.`).
    pub fn help(&self) -> String {
        let doc =
            self.doc.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        match self.range_text() {
            Some(range) => format!("{doc} {range}."),
            None => doc,
        }
    }

    /// The range in words, capitalised for a sentence of its own (`At most 1024`), if any: a
    /// number's declared range, the boards there are.
    pub fn range_text(&self) -> Option<String> {
        let text = match (self.kind, self.range) {
            (Kind::Board, _) => format!("one of {}", zertz_env::Board::choices()),
            (_, Some(range)) => range.describe(self.kind),
            (_, None) => return None,
        };
        let mut chars = text.chars();
        let first = chars.next()?;
        Some(first.to_uppercase().chain(chars).collect())
    }

    /// Checks a value of this field against its range: the error names the key.
    pub fn check(&self, x: f64) -> Result<(), SettingError> {
        match self.range {
            Some(range) => {
                range.check(x, self.kind).map_err(|reason| SettingError { key: self.name, reason })
            }
            None => Ok(()),
        }
    }
}

/// The Rust types a setting may have, and their [`Kind`].
pub trait SettingType {
    /// What it holds.
    const KIND: Kind;
    /// Whether it may be empty.
    const OPTIONAL: bool = false;
    /// The value that an option of this type given alone means, if it may be given alone.
    const FLAG: Option<&'static str> = None;

    /// Whether this value is empty (`None`).
    fn is_empty(&self) -> bool {
        false
    }

    /// The value as a number, for its range (none: not a number, or empty).
    fn number(&self) -> Option<f64> {
        None
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

/// `SettingType` for numbers: their value, for their range.
macro_rules! number_types {
    ($($kind:ident: $($ty:ty),+;)+) => {
        $($(impl SettingType for $ty {
            const KIND: Kind = Kind::$kind;

            fn number(&self) -> Option<f64> {
                Some(*self as f64)
            }
        })+)+
    };
}

number_types! {
    Int: usize, u16, u32, u64;
    Number: f32;
}
setting_types! {
    Bool: bool;
    Path: PathBuf;
    Board: zertz_env::Board;
}
impl SettingType for Seconds {
    const KIND: Kind = Kind::Seconds;

    fn number(&self) -> Option<f64> {
        Some(self.0)
    }
}
impl<T: SettingType> SettingType for Option<T> {
    const KIND: Kind = T::KIND;
    const OPTIONAL: bool = true;
    const FLAG: Option<&'static str> = T::FLAG;

    fn is_empty(&self) -> bool {
        self.is_none()
    }

    fn number(&self) -> Option<f64> {
        self.as_ref().and_then(T::number)
    }
}

/// A number of seconds (a float in files and Python, checked by the setting that holds it).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

/// A settings type that lists its fields (made by [`settings!`]).
pub trait Described {
    /// Its fields, in order.
    const FIELDS: &'static [Field];

    /// The value of the field `key` as a number, for its range (none: no such field, not a
    /// number, or empty).
    fn number(&self, key: &str) -> Option<f64>;

    /// Checks every value against its field's declared range, in the fields' order.
    fn check_ranges(&self) -> Result<(), SettingError> {
        for field in Self::FIELDS {
            if let Some(x) = self.number(field.name) {
                field.check(x)?;
            }
        }
        Ok(())
    }

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

/// Whether a field's value is empty (`None`): left out when written (TOML has no null).
#[doc(hidden)]
pub fn is_none<T: SettingType>(value: &T) -> bool {
    value.is_empty()
}
