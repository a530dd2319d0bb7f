//! What goes wrong with settings: [`ConfigError`] (a file, its parse, a value) and
//! [`SettingError`] (one value out of its range, by its key).

use std::path::{Path, PathBuf};

/// A setting out of its range (NaN and infinities included), by its key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct SettingError {
    /// The setting, by its config key.
    pub key: &'static str,
    /// What its value must be.
    pub reason: String,
}

/// A config file or a layer of settings that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not valid TOML (or JSON, from a Python dict), an unknown key, or a value of the wrong
    /// type.
    #[error("{0}")]
    Parse(String),
    /// A value out of range.
    #[error("{key}: {reason}")]
    Value {
        /// The key.
        key: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A value of a section out of range.
    #[error("{section}.{error}")]
    Setting {
        /// The section (`search`).
        section: &'static str,
        /// The key and what is wrong.
        error: SettingError,
    },
}

impl From<SettingError> for ConfigError {
    fn from(e: SettingError) -> ConfigError {
        ConfigError::Value { key: e.key, reason: e.reason }
    }
}

impl zertz_env::Classify for ConfigError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            ConfigError::Io { source, .. } => ErrorClass::refused(Cause::Io(source.kind())),
            ConfigError::Parse(_) | ConfigError::Value { .. } | ConfigError::Setting { .. } => {
                ErrorClass::refused(Cause::Invalid)
            }
        }
    }
}

/// The text of a config file: a regular file (a FIFO or a device would block or never end) of at
/// most `zertz_env::files::MAX_CONFIG_BYTES`.
pub fn read_text(path: &Path) -> Result<String, ConfigError> {
    use zertz_env::files::{MAX_CONFIG_BYTES, read_text_bounded};
    read_text_bounded(path, MAX_CONFIG_BYTES, "a config file")
        .map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })
}
