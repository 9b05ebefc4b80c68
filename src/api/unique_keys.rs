//! JSON objects whose keys may not repeat.
//!
//! JSON leaves repeated keys undefined, and serde keeps the last value of a map's key where a
//! struct's field refuses a second one: `{"seats": {"p2": …, "p2": …}}` would keep one seat
//! and drop the other without a word. A request that says two things is refused instead, with
//! the key it repeats.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};

/// For `#[serde(deserialize_with = "unique_keys::map")]`: a map that refuses a repeated key.
pub fn map<'de, D, K, V>(deserializer: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord + serde::Serialize,
    V: Deserialize<'de>,
{
    struct Unique<K, V>(PhantomData<(K, V)>);

    impl<'de, K, V> Visitor<'de> for Unique<K, V>
    where
        K: Deserialize<'de> + Ord + serde::Serialize,
        V: Deserialize<'de>,
    {
        type Value = BTreeMap<K, V>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Self::Value, A::Error> {
            let mut map = BTreeMap::new();
            while let Some((key, value)) = entries.next_entry::<K, V>()? {
                if map.contains_key(&key) {
                    let key = serde_json::to_string(&key).unwrap_or_default();
                    return Err(A::Error::custom(format!("{key} is given twice")));
                }
                map.insert(key, value);
            }
            Ok(map)
        }
    }

    deserializer.deserialize_map(Unique(PhantomData))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    #[derive(serde::Deserialize, Debug)]
    struct Probe {
        #[serde(deserialize_with = "super::map")]
        map: BTreeMap<String, u8>,
    }

    #[test]
    fn a_repeated_key_is_refused_and_distinct_keys_are_kept() {
        let err = serde_json::from_str::<Probe>(r#"{"map": {"a": 1, "b": 2, "a": 3}}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"a\" is given twice"), "{err}");
        let probe: Probe = serde_json::from_str(r#"{"map": {"a": 1, "b": 2}}"#).unwrap();
        assert_eq!(
            probe.map,
            BTreeMap::from([("a".into(), 1), ("b".into(), 2)])
        );
        assert!(serde_json::from_str::<Probe>(r#"{"map": [1]}"#).is_err());
    }
}
