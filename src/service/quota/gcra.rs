//! The generic cell rate algorithm: a quota of `count` units per `window`, as one number per
//! caller (the theoretical arrival time, TAT), so a check is one read and one write, whoever
//! makes it. The Redis script in `store/redis.rs` is this same arithmetic in Lua; the
//! embedded store uses this function. Times are in microseconds so that rates such as 50 per
//! second stay exact.

/// `count` units per `window_us`; a caller may spend the whole window's units at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub count: u64,
    pub window_us: u64,
}

impl Rate {
    /// Microseconds one unit takes to come back.
    pub fn emission_us(self) -> u64 {
        (self.window_us / self.count).max(1)
    }
}

/// What a check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Units left after this request.
    pub remaining: u64,
    /// Microseconds until the quota is whole again.
    pub reset_us: u64,
    /// Refused: microseconds until this request would be allowed.
    pub retry_after_us: u64,
}

/// Gives back `cost` units spent for work that then did not happen: the TAT moves back, never
/// before `now` (units never pile up beyond the window).
pub fn refund(tat: u64, now: u64, rate: Rate, cost: u64) -> u64 {
    tat.saturating_sub(rate.emission_us() * cost.clamp(1, rate.count))
        .max(now)
}

/// Records `cost` units already used (work measured after it was done, such as analysis
/// time): always spent, even past the quota, so the next request waits for the debt.
pub fn charge(tat: Option<u64>, now: u64, rate: Rate, cost: u64) -> u64 {
    tat.unwrap_or(now).max(now) + rate.emission_us() * cost.min(rate.count)
}

/// Decides a request of `cost` units at `now`, given the caller's TAT (`None`: a new caller);
/// answers the decision and the TAT to keep (unchanged when refused).
pub fn decide(tat: Option<u64>, now: u64, rate: Rate, cost: u64) -> (Decision, u64) {
    let emission = rate.emission_us();
    let window = emission * rate.count;
    let tat = tat.unwrap_or(now).max(now);
    let cost = cost.clamp(1, rate.count);
    let new_tat = tat + emission * cost;
    if new_tat - now > window {
        let decision = Decision {
            allowed: false,
            remaining: (window - (tat - now).min(window)) / emission,
            reset_us: tat - now,
            retry_after_us: new_tat - now - window,
        };
        return (decision, tat);
    }
    let decision = Decision {
        allowed: true,
        remaining: (window - (new_tat - now)) / emission,
        reset_us: new_tat - now,
        retry_after_us: 0,
    };
    (decision, new_tat)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PER_SECOND_10: Rate = Rate {
        count: 10,
        window_us: 1_000_000,
    };

    #[test]
    fn a_burst_of_the_whole_window_then_one_per_interval() {
        let mut tat = None;
        for i in 0..10 {
            let (d, t) = decide(tat, 0, PER_SECOND_10, 1);
            assert!(d.allowed, "request {i}");
            assert_eq!(d.remaining, 9 - i);
            tat = Some(t);
        }
        let (refused, kept) = decide(tat, 0, PER_SECOND_10, 1);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_us, 100_000);
        assert_eq!(Some(kept), tat, "a refusal spends nothing");
        let (later, _) = decide(tat, 100_000, PER_SECOND_10, 1);
        assert!(later.allowed);
        assert_eq!(later.remaining, 0);
    }

    #[test]
    fn a_charge_past_the_quota_makes_the_next_request_wait() {
        let tat = charge(None, 0, PER_SECOND_10, 15);
        assert_eq!(tat, 1_000_000, "a charge is capped at one window");
        let (d, _) = decide(Some(tat), 0, PER_SECOND_10, 1);
        assert!(!d.allowed);
        assert_eq!(d.retry_after_us, 100_000);
    }

    #[test]
    fn a_refund_gives_back_what_was_spent_and_never_more_than_a_whole_window() {
        let (spent, tat) = decide(None, 0, PER_SECOND_10, 10);
        assert!(spent.allowed);
        assert!(!decide(Some(tat), 0, PER_SECOND_10, 1).0.allowed);
        let tat = refund(tat, 0, PER_SECOND_10, 1);
        let (again, _) = decide(Some(tat), 0, PER_SECOND_10, 1);
        assert!(again.allowed && again.remaining == 0, "{again:?}");
        assert_eq!(refund(tat, 0, PER_SECOND_10, 50), 0, "not below now");
        assert_eq!(refund(100, 500_000, PER_SECOND_10, 1), 500_000);
        // A debt of three windows: a refund gives back at most one.
        assert_eq!(refund(3_000_000, 0, PER_SECOND_10, 50), 2_000_000);
    }

    #[test]
    fn costs_spend_several_units_and_an_idle_caller_is_whole_again() {
        let (d, tat) = decide(None, 5_000, PER_SECOND_10, 7);
        assert!(d.allowed);
        assert_eq!(d.remaining, 3);
        assert_eq!(d.reset_us, 700_000);
        let (d, _) = decide(Some(tat), 5_000, PER_SECOND_10, 4);
        assert!(!d.allowed);
        assert_eq!(d.retry_after_us, 100_000);
        let (d, _) = decide(Some(tat), 10_000_000, PER_SECOND_10, 10);
        assert!(d.allowed, "long after, the whole window is back");
    }
}
