//! The real clock the engine is given by the CLI and the service (the engine itself never
//! reads one).

use std::time::Instant;

use crate::engine::Clock;

pub struct WallClock(Instant);

impl WallClock {
    pub fn start() -> WallClock {
        WallClock(Instant::now())
    }
}

impl Clock for WallClock {
    fn elapsed_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
}
