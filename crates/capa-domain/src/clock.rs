//! The hub's one wall clock. Runs never read it from guest code: their `Date` runs on a logical
//! clock that starts at the run's recorded `clock_start_ms`, so a replay sees the same times.

/// Milliseconds since the Unix epoch (0 if the system clock is before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}
