//! Wall-clock times as milliseconds since the Unix epoch, as the cache, the token store, events
//! and JS hold them (a JS number: exact for any date to come).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now.
pub fn now_ms() -> f64 {
    epoch_ms(SystemTime::now())
}

/// `at`; 0 for a time before the epoch.
pub fn epoch_ms(at: SystemTime) -> f64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}
