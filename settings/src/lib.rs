//! What a settings type says of itself: its fields ([`Described::FIELDS`]: name, documentation,
//! [`Kind`], whether it may be empty), from which every front derives what it shows and reads:
//! the command line's options, Python's keywords and their stubs, the docs.
//!
//! The types are declared once, each field with its doc comment, type and default, by a macro
//! beside the job that owns them (`zertz_selfplay::settings!` for the jobs' settings,
//! `zertz_search`'s for the search's); reading and merging layers of them (files, options,
//! keywords) is `zertz_selfplay::settings`'s. This crate is the part both need.
//!
//! ```
//! use zertz_settings::{Kind, SettingType};
//! assert_eq!(<u32 as SettingType>::KIND, Kind::Int);
//! assert!(<Option<f32> as SettingType>::OPTIONAL);
//! assert_eq!(Kind::Number.parse("0.25").unwrap(), serde_json::json!(0.25));
//! assert!(Kind::Int.parse("-1").is_err());
//! ```

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
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

/// A settings type that lists its fields (made by a declaration macro: `zertz_selfplay::settings!`,
/// `zertz_search`'s search settings).
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

/// Whether a field's value is empty (`None`): left out when written (TOML has no null).
#[doc(hidden)]
pub fn is_none<T: SettingType>(value: &T) -> bool {
    value.is_empty()
}
