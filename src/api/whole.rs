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

/// The keys of an analysis's `limits`, each with its largest value, what it means, and the
/// title of its schema (the class name generated clients give it).
pub const LIMIT_MAX: [(&str, u64, &str, &str); 3] = [
    (
        "depth",
        1000,
        "Search this many plies deep (deterministic).",
        "DepthLimit",
    ),
    (
        "nodes",
        1_000_000_000_000,
        "Search about this many nodes (deterministic).",
        "NodesLimit",
    ),
    (
        "movetime_ms",
        86_400_000,
        "Search for this many milliseconds.",
        "MovetimeLimit",
    ),
];

/// For `#[serde(deserialize_with = "whole::limit")]`: exactly one of `depth`, `nodes`,
/// `movetime_ms`, a whole number from 1 to its maximum in [`LIMIT_MAX`].
pub fn limit<'de, D: Deserializer<'de>>(deserializer: D) -> Result<crate::engine::Limit, D::Error> {
    use crate::engine::Limit;
    let object: std::collections::BTreeMap<String, serde_json::Value> =
        super::unique_keys::map(deserializer)?;
    let mut entries = object.into_iter();
    let (Some((key, value)), None) = (entries.next(), entries.next()) else {
        return Err(D::Error::custom(
            "limits must have exactly one of depth, nodes, movetime_ms",
        ));
    };
    let Some((_, max, ..)) = LIMIT_MAX.iter().find(|(name, ..)| *name == key) else {
        return Err(D::Error::custom(format!(
            "unknown limit {key:?}, expected one of depth, nodes, movetime_ms"
        )));
    };
    let n = whole(value).map_err(D::Error::custom)?;
    if !(1..=*max).contains(&n) {
        return Err(D::Error::custom(format!(
            "limits.{key} must be between 1 and {max}, not {n}"
        )));
    }
    Ok(match key.as_str() {
        "depth" => Limit::Depth(n as u32),
        "nodes" => Limit::Nodes(n),
        _ => Limit::MovetimeMs(n),
    })
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

    #[derive(serde::Deserialize, Debug)]
    struct Limits {
        #[serde(deserialize_with = "super::limit")]
        limits: crate::engine::Limit,
    }

    #[test]
    fn limits_are_one_whole_number_in_range() {
        use crate::engine::Limit;
        let limit = |json: &str| serde_json::from_str::<Limits>(json).map(|l| l.limits);
        assert_eq!(
            limit(r#"{"limits": {"depth": 7.0}}"#).unwrap(),
            Limit::Depth(7)
        );
        assert_eq!(
            limit(r#"{"limits": {"nodes": 5}}"#).unwrap(),
            Limit::Nodes(5)
        );
        assert_eq!(
            limit(r#"{"limits": {"movetime_ms": 86400000}}"#).unwrap(),
            Limit::MovetimeMs(86_400_000)
        );
        for bad in [
            r#"{"limits": {}}"#,
            r#"{"limits": {"depth": 0}}"#,
            r#"{"limits": {"depth": 1001}}"#,
            r#"{"limits": {"movetime_ms": 9223372036854775808}}"#,
            r#"{"limits": {"depth": 2, "nodes": 5}}"#,
            r#"{"limits": {"depth": 1, "depth": 1000}}"#,
            r#"{"limits": {"": false, "depth": 7}}"#,
            r#"{"limits": {"plies": 2}}"#,
            r#"{"limits": {"depth": null}}"#,
        ] {
            assert!(limit(bad).is_err(), "{bad}");
        }
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
