//! [`settings!`](crate::settings!): the one declaration of a settings type.

/// Declares a settings struct: each field with its doc comment, type, default and, for a number,
/// its range (`in Range::between(1.0, 65536.0),`). It derives serde (unknown keys refused,
/// missing keys defaulted), `Default` and [`Described`](crate::Described): the fields' names,
/// docs, kinds and ranges, and the range checks. Field types implement
/// [`SettingType`](crate::SettingType). The [`Settings`](crate::Settings) impl is written beside
/// it, with what no range says ([`Settings::check_together`](crate::Settings::check_together)).
///
/// A second struct may follow, `pub struct NAME overrides { ... }`: the settings' overrides, one
/// `Option` per field (`None`: not overridden) after the fields written in its braces, with
/// `apply` (a value of the first struct with them applied) and its own description. The search's
/// `[search]` table is one: a preset, and overrides of the preset's settings.
///
/// The crate that uses it names `zertz_settings` and `serde` among its dependencies (serde's
/// attributes take paths as text).
#[macro_export]
macro_rules! settings {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                pub $field:ident : $ty:ty = $default:expr, $(in $range:expr,)?
            )*
        }
        $(#[$ometa:meta])*
        pub struct $over:ident overrides {
            $(
                $(#[doc = $odoc:literal])*
                pub $ofield:ident : $oty:ty,
            )*
        }
    ) => {
        $crate::settings! {
            $(#[$meta])*
            pub struct $name {
                $(
                    $(#[doc = $doc])*
                    pub $field: $ty = $default, $(in $range,)?
                )*
            }
        }

        $(#[$ometa])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $over {
            $(
                $(#[doc = $odoc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $ofield: $oty,
            )*
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $field: Option<$ty>,
            )*
        }

        impl $over {
            /// `base` with these overrides applied (unchecked).
            pub fn apply(&self, mut base: $name) -> $name {
                $(
                    if let Some(v) = &self.$field {
                        base.$field = v.clone();
                    }
                )*
                base
            }
        }

        // The overrides (the fields before them are not: they pick what is overridden).
        $crate::settings!(@described $over, option, [$(
            $field: $ty, [$($doc)*], [$($range)?];
        )*]);
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $doc:literal])*
                pub $field:ident : $ty:ty = $default:expr, $(in $range:expr,)?
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
                #[serde(skip_serializing_if = "zertz_settings::is_none")]
                pub $field: $ty,
            )*
        }

        impl Default for $name {
            fn default() -> $name {
                $name { $($field: $default,)* }
            }
        }

        $crate::settings!(@described $name, plain, [$(
            $field: $ty, [$($doc)*], [$($range)?];
        )*]);
    };
    // `Described` for `$name`, whose fields are the declared types (`plain`) or an `Option` of
    // each (`option`: overrides).
    (@described $name:ident, $wrap:ident, [$(
        $field:ident: $ty:ty, [$($doc:literal)*], [$($range:expr)?];
    )*]) => {
        impl $crate::Described for $name {
            const FIELDS: &'static [$crate::Field] = &[$(
                $crate::Field {
                    name: stringify!($field),
                    doc: concat!($($doc, "\n",)*),
                    kind: <$ty as $crate::SettingType>::KIND,
                    optional: <$crate::settings!(@wrap $wrap, $ty) as $crate::SettingType>::OPTIONAL,
                    range: $crate::settings!(@range $($range)?),
                    flag: <$ty as $crate::SettingType>::FLAG,
                },
            )*];

            fn number(&self, key: &str) -> Option<f64> {
                match key {
                    $(stringify!($field) => $crate::SettingType::number(&self.$field),)*
                    _ => None,
                }
            }
        }
    };
    (@wrap plain, $ty:ty) => { $ty };
    (@wrap option, $ty:ty) => { Option<$ty> };
    (@range $range:expr) => {
        Some({
            #[allow(unused_imports)]
            use $crate::Range;
            $range
        })
    };
    (@range) => {
        None
    };
}

/// Makes a type that is written as a word (it has `Display` and `FromStr`) a setting of
/// [`Kind::Text`](crate::Kind::Text): serde reads and writes it as its word, and a front checks
/// it by parsing. `flag = "WORD"`: the word that its option given alone means.
///
/// ```
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// enum Side { Left, Right }
/// impl std::fmt::Display for Side {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str(if *self == Side::Left { "left" } else { "right" })
///     }
/// }
/// impl std::str::FromStr for Side {
///     type Err = String;
///     fn from_str(s: &str) -> Result<Side, String> {
///         match s { "left" => Ok(Side::Left), "right" => Ok(Side::Right), _ => Err(format!("{s:?}: left or right")) }
///     }
/// }
/// zertz_settings::text_setting!(Side, flag = "right");
/// assert_eq!(serde_json::to_string(&Side::Left).unwrap(), "\"left\"");
/// assert!(serde_json::from_str::<Side>("\"up\"").unwrap_err().to_string().contains("left or right"));
/// assert_eq!(<Side as zertz_settings::SettingType>::FLAG, Some("right"));
/// ```
#[macro_export]
macro_rules! text_setting {
    ($ty:ty $(, flag = $flag:literal)?) => {
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
                text.parse::<$ty>().map_err(serde::de::Error::custom)
            }
        }

        impl $crate::SettingType for $ty {
            const KIND: $crate::Kind = $crate::Kind::Text;
            $(const FLAG: Option<&'static str> = Some($flag);)?
        }
    };
}
