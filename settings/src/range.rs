//! A setting's range ([`Range`]): declared once beside the setting, it is the one source of the
//! check, the error's text and the range every front shows (command-line help, Python's stubs
//! and docstrings, the training config's checks).

use crate::Kind;

/// One end of a [`Range`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// No end on this side (only finite numbers are ever in a range).
    Open,
    /// This value and beyond it.
    Incl(f64),
    /// Beyond this value, not it.
    Excl(f64),
}

/// The values a number setting takes: finite numbers between two [`Bound`]s, and maybe one more
/// value outside them that means "none" or "off" (`move_time` 0, `gumbel_actions` 0).
///
/// ```
/// use zertz_settings::{Kind, Range};
/// let threads = Range::at_most(1024.0);
/// assert!(threads.contains(0.0) && !threads.contains(1025.0));
/// assert_eq!(threads.reason(Kind::Int), "must be at most 1024");
/// let gumbel = Range::between(2.0, 65536.0).or(0.0);
/// assert!(gumbel.contains(0.0) && !gumbel.contains(1.0));
/// assert_eq!(gumbel.reason(Kind::Int), "must be 0 or between 2 and 65536");
/// assert_eq!(Range::at_least(0.0).describe(Kind::Number), "0 or more");
/// assert!(!Range::finite().contains(f64::NAN));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// The low end.
    pub low: Bound,
    /// The high end.
    pub high: Bound,
    /// One value outside the bounds that is also taken.
    pub also: Option<f64>,
}

impl Range {
    /// Any finite number.
    pub const fn finite() -> Range {
        Range { low: Bound::Open, high: Bound::Open, also: None }
    }

    /// From `low` to `high`, both included.
    pub const fn between(low: f64, high: f64) -> Range {
        Range { low: Bound::Incl(low), high: Bound::Incl(high), also: None }
    }

    /// `low` or more.
    pub const fn at_least(low: f64) -> Range {
        Range { low: Bound::Incl(low), high: Bound::Open, also: None }
    }

    /// `high` or less.
    pub const fn at_most(high: f64) -> Range {
        Range { low: Bound::Open, high: Bound::Incl(high), also: None }
    }

    /// More than `low`.
    pub const fn above(low: f64) -> Range {
        Range { low: Bound::Excl(low), high: Bound::Open, also: None }
    }

    /// The same range, with an upper end `high` (included).
    pub const fn up_to(self, high: f64) -> Range {
        Range { high: Bound::Incl(high), ..self }
    }

    /// The same range, and `value` too.
    pub const fn or(self, value: f64) -> Range {
        Range { also: Some(value), ..self }
    }

    /// Whether `x` is in the range (never NaN nor an infinity).
    pub fn contains(&self, x: f64) -> bool {
        if self.also == Some(x) {
            return true;
        }
        let low = match self.low {
            Bound::Open => true,
            Bound::Incl(b) => x >= b,
            Bound::Excl(b) => x > b,
        };
        let high = match self.high {
            Bound::Open => true,
            Bound::Incl(b) => x <= b,
            Bound::Excl(b) => x < b,
        };
        x.is_finite() && low && high
    }

    /// `Ok` if `x` is in the range, else what a value of `kind` must be ([`Range::reason`]).
    pub fn check(&self, x: f64, kind: Kind) -> Result<(), String> {
        if self.contains(x) { Ok(()) } else { Err(self.reason(kind)) }
    }

    /// The range in words, for help texts: `1 to 65536`, `at least 2`, `0 or more`.
    pub fn describe(&self, kind: Kind) -> String {
        let bounds = match (self.low, self.high) {
            (Bound::Open, Bound::Open) => "any finite number".to_string(),
            (Bound::Incl(l), Bound::Incl(h)) => format!("{l} to {h}"),
            (Bound::Incl(0.0), Bound::Open) => "0 or more".to_string(),
            (Bound::Incl(l), Bound::Open) => format!("at least {l}"),
            (Bound::Open, Bound::Incl(h)) => format!("at most {h}"),
            (Bound::Excl(l), Bound::Open) => format!("more than {l}"),
            (Bound::Excl(l), Bound::Incl(h)) => format!("more than {l}, at most {h}"),
            (low, high) => format!("{} to {}", end(low), end(high)),
        };
        let bounds = match self.also {
            Some(v) => format!("{v} or {bounds}"),
            None => bounds,
        };
        match kind {
            Kind::Seconds => format!("{bounds} seconds"),
            _ => bounds,
        }
    }

    /// What a value must be, as an error says it: `must be between 1 and 65536`, `must be a
    /// positive finite number`, `must be at least 2`.
    pub fn reason(&self, kind: Kind) -> String {
        let number = match kind {
            Kind::Seconds => "a number of seconds",
            _ => "a finite number",
        };
        let integer = kind == Kind::Int;
        let bounds = match (self.low, self.high) {
            (Bound::Open, Bound::Open) => number.to_string(),
            (Bound::Incl(l), Bound::Incl(h)) if kind == Kind::Seconds => {
                format!("{number} from {l} to {h}")
            }
            (Bound::Incl(l), Bound::Incl(h)) => format!("between {l} and {h}"),
            (Bound::Incl(l), Bound::Open) if integer => format!("at least {l}"),
            (Bound::Incl(0.0), Bound::Open) => format!("{number}, 0 or more"),
            (Bound::Incl(l), Bound::Open) => format!("{number}, at least {l}"),
            (Bound::Open, Bound::Incl(h)) => format!("at most {h}"),
            (Bound::Excl(0.0), Bound::Open) if kind == Kind::Seconds => {
                format!("{number}, more than 0")
            }
            (Bound::Excl(0.0), Bound::Open) => "a positive finite number".to_string(),
            (Bound::Excl(l), Bound::Open) => format!("{number} more than {l}"),
            (Bound::Excl(l), Bound::Incl(h)) => format!("{number} more than {l}, at most {h}"),
            (low, high) => format!("{number} from {} to {}", end(low), end(high)),
        };
        match self.also {
            Some(v) => format!("must be {v} or {bounds}"),
            None => format!("must be {bounds}"),
        }
    }
}

/// One end in words, for the rare ranges without a phrase of their own.
fn end(bound: Bound) -> String {
    match bound {
        Bound::Open => "any".to_string(),
        Bound::Incl(b) => format!("{b} (included)"),
        Bound::Excl(b) => format!("{b} (excluded)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_take_their_values_and_say_the_others_wrong() {
        let r = Range::between(1.0, 65536.0);
        for (x, ok) in [(0.0, false), (1.0, true), (65536.0, true), (65537.0, false)] {
            assert_eq!(r.contains(x), ok, "{x}");
        }
        assert_eq!(r.check(0.0, Kind::Int).unwrap_err(), "must be between 1 and 65536");
        assert_eq!(r.describe(Kind::Int), "1 to 65536");
        let positive = Range::above(0.0);
        assert!(!positive.contains(0.0) && positive.contains(1e-30));
        assert_eq!(positive.reason(Kind::Number), "must be a positive finite number");
        assert_eq!(positive.describe(Kind::Number), "more than 0");
        let day = Range::above(0.0).up_to(86400.0);
        assert!(day.contains(86400.0) && !day.contains(86400.5) && !day.contains(0.0));
        assert_eq!(day.describe(Kind::Seconds), "more than 0, at most 86400 seconds");
        let move_time = Range::between(0.001, 3600.0).or(0.0);
        assert_eq!(
            move_time.reason(Kind::Seconds),
            "must be 0 or a number of seconds from 0.001 to 3600"
        );
        assert_eq!(Range::at_least(0.0).reason(Kind::Number), "must be a finite number, 0 or more");
        assert_eq!(Range::at_least(2.0).reason(Kind::Int), "must be at least 2");
        assert_eq!(Range::finite().reason(Kind::Number), "must be a finite number");
        for r in [Range::finite(), Range::at_least(0.0), Range::at_most(1.0)] {
            for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                assert!(!r.contains(x), "{r:?} {x}");
            }
        }
    }
}
