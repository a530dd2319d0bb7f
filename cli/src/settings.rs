//! Command-line options made from a settings type
//! ([`zertz_settings`]): one option per field
//! (`opening_actions` is `--opening-actions N`), its help the field's doc and default, each
//! value checked as it is parsed (a usage error naming the option). What was given becomes a
//! layer of settings that goes over a config file's. A table of settings (self-play's
//! `[search]`) has no option: a config file gives it.

use std::marker::PhantomData;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use zertz_settings::{self as settings, Field, Kind, Layer, Settings, Value};

/// The options of settings type `S` that were given on the command line.
#[derive(Debug, Clone, Default)]
pub struct SettingArgs<S> {
    /// The values given, by key.
    pub given: Layer,
    _settings: PhantomData<S>,
}

/// The option of one field.
fn arg<S: Settings>(field: &'static Field, defaults: &Layer) -> Arg {
    let mut help = field.help();
    // A word is shown as it is written on the command line, without JSON's quotes.
    let shown = match defaults.get(field.name) {
        Some(Value::String(word)) => Some(word.clone()),
        Some(default) if field.kind != Kind::Bool => Some(default.to_string()),
        _ => None,
    };
    if let Some(default) = shown {
        help = format!("{help} [default: {default}]");
    }
    let mut arg = Arg::new(field.name).long(field.name.replace('_', "-")).help(help);
    if field.kind == Kind::Bool {
        return arg.action(ArgAction::SetTrue);
    }
    if let Some(alone) = field.flag {
        arg = arg.num_args(0..=1).default_missing_value(alone);
    }
    arg.value_name(field.kind.value_name())
        .action(ArgAction::Set)
        // A negative number is a value, refused by the check with its reason.
        .allow_hyphen_values(field.kind != Kind::Path)
        .value_parser(move |text: &str| -> Result<Value, String> {
            let value = field.kind.parse(text)?;
            settings::check_value::<S>(field.name, &value).map_err(|e| match e {
                zertz_settings::ConfigError::Value { reason, .. } => reason,
                other => other.to_string(),
            })?;
            Ok(value)
        })
}

impl<S: Settings + Clone + Send + Sync + 'static> FromArgMatches for SettingArgs<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Layer::new();
        for field in S::value_fields() {
            if matches.value_source(field.name) != Some(ValueSource::CommandLine) {
                continue;
            }
            let value = if field.kind == Kind::Bool {
                Value::Bool(matches.get_flag(field.name))
            } else {
                match matches.get_one::<Value>(field.name) {
                    Some(v) => v.clone(),
                    None => continue,
                }
            };
            given.insert(field.name.to_string(), value);
        }
        Ok(SettingArgs { given, _settings: PhantomData })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        let other = SettingArgs::<S>::from_arg_matches(matches)?;
        self.given.extend(other.given);
        Ok(())
    }
}

impl<S: Settings + Clone + Send + Sync + 'static> Args for SettingArgs<S> {
    fn augment_args(cmd: Command) -> Command {
        let defaults = settings::defaults::<S>();
        S::value_fields().fold(cmd, |cmd, field| cmd.arg(arg::<S>(field, &defaults)))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        SettingArgs::<S>::augment_args(cmd)
    }
}
