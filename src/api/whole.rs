//! Whole numbers that JSON may spell with a fraction (`3.0`): JSON Schema's `integer` accepts
//! them, and so do generated clients that hold every number as a float, so the server does
//! too, while `3.5` or `-1` stay refused.

use serde::{Deserialize, Deserializer, de::Error};

/// A non-negative whole number, as `u64`, from `3` or `3.0`.
fn whole<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Int(u64),
        Float(f64),
    }
    match Number::deserialize(deserializer)? {
        Number::Int(n) => Ok(n),
        Number::Float(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(f as u64),
        Number::Float(f) => Err(D::Error::custom(format!(
            "expected a non-negative whole number, found {f}"
        ))),
    }
}

/// For `#[serde(deserialize_with = "whole::u64")]`.
pub fn u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    whole(deserializer)
}

/// For `#[serde(default, deserialize_with = "whole::opt_u64")]`.
pub fn opt_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Option::<serde_json::Value>::deserialize(deserializer)?
        .map(|v| whole(v).map_err(D::Error::custom))
        .transpose()
}

/// For `#[serde(deserialize_with = "whole::u8")]`.
pub fn u8<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u8, D::Error> {
    let n = whole(deserializer)?;
    u8::try_from(n).map_err(|_| D::Error::custom(format!("{n} is out of range (0 to 255)")))
}

/// For `#[serde(default, deserialize_with = "whole::opt_usize")]`.
pub fn opt_usize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    opt_u64(deserializer)?
        .map(|n| usize::try_from(n).map_err(|_| D::Error::custom(format!("{n} is out of range"))))
        .transpose()
}

#[cfg(test)]
mod tests {
    #[derive(serde::Deserialize, Debug)]
    struct Probe {
        #[serde(default, deserialize_with = "super::opt_u64")]
        n: Option<u64>,
        #[serde(default, deserialize_with = "super::u8")]
        level: u8,
    }

    fn parse(json: &str) -> Result<Probe, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn whole_numbers_with_or_without_a_fraction() {
        assert_eq!(parse(r#"{"n": 3}"#).unwrap().n, Some(3));
        assert_eq!(parse(r#"{"n": 0.0}"#).unwrap().n, Some(0));
        assert_eq!(parse(r#"{"n": null}"#).unwrap().n, None);
        assert_eq!(parse(r#"{}"#).unwrap().n, None);
        assert_eq!(parse(r#"{"level": 8.0}"#).unwrap().level, 8);
        for bad in [
            r#"{"n": 3.5}"#,
            r#"{"n": -1}"#,
            r#"{"n": "3"}"#,
            r#"{"level": 256}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
