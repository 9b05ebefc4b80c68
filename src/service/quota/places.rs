//! Counts of what each caller holds in this process at once — its requests in flight, its
//! places in the analysis pool, and its event streams with the embedded store — each place
//! given back when dropped. A count exists
//! only while its caller holds something, so the table is as large as what is held.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Per-caller counts, shared by the places taken from them.
#[derive(Clone, Default)]
pub struct Counts(Arc<Mutex<HashMap<String, usize>>>);

/// One place taken from [`Counts`], given back when dropped.
pub struct Place {
    caller: String,
    counts: Counts,
}

impl Counts {
    /// A place for `caller`, unless it holds `max` already.
    pub fn take(&self, caller: &str, max: usize) -> Option<Place> {
        let mut counts = self.0.lock().expect("place counts lock");
        let held = counts.get(caller).copied().unwrap_or(0);
        if held >= max {
            return None;
        }
        counts.insert(caller.to_string(), held + 1);
        Some(Place {
            caller: caller.to_string(),
            counts: self.clone(),
        })
    }

    /// How many places `caller` holds.
    #[cfg(test)]
    fn held(&self, caller: &str) -> usize {
        let counts = self.0.lock().expect("place counts lock");
        counts.get(caller).copied().unwrap_or(0)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut counts = self.counts.0.lock().expect("place counts lock");
        if let Some(held) = counts.get_mut(&self.caller) {
            *held -= 1;
            if *held == 0 {
                counts.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_bounded_per_caller_and_given_back() {
        let counts = Counts::default();
        let a1 = counts.take("a", 2).unwrap();
        let a2 = counts.take("a", 2).unwrap();
        assert!(counts.take("a", 2).is_none(), "a third place of two");
        let b = counts.take("b", 2).unwrap();
        drop(a1);
        let a3 = counts.take("a", 2).unwrap();
        drop((a2, a3, b));
        assert_eq!(counts.held("a"), 0);
        assert!(
            counts.0.lock().unwrap().is_empty(),
            "no count outlives its places"
        );
    }
}
