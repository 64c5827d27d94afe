//! The timing rule of `tools/peers/timing.h` in Rust, shared by the benchmarks that run beside
//! the peers' drivers (`dynamics`, `constrained` and `integrators`, each including this file with
//! `#[path = "common/peers_timing.rs"] mod peers_timing;`): double the number `n` of
//! back-to-back calls until a batch takes at least half of `TARGET_MS`, scale `n` to about
//! `TARGET_MS`, then time `REPEATS` batches of `n` calls and report the median, smallest and
//! largest time per call.
#![allow(dead_code)] // each benchmark uses its part

use std::time::Instant;

/// The batch statistics of one function: nanoseconds (or any unit) per call.
#[derive(Clone, Copy, Debug)]
pub struct Stats {
    /// Median batch (the mean of the two middle ones for an even count).
    pub median: f64,
    /// Fastest batch.
    pub min: f64,
    /// Slowest batch.
    pub max: f64,
}

impl Stats {
    /// The statistics of a set of batch times (at least one).
    pub fn of(mut samples: Vec<f64>) -> Stats {
        assert!(!samples.is_empty(), "no batch was timed");
        samples.sort_by(f64::total_cmp);
        let m = samples.len() / 2;
        let median = if samples.len() % 2 == 1 {
            samples[m]
        } else {
            0.5 * (samples[m - 1] + samples[m])
        };
        Stats {
            median,
            min: samples[0],
            max: samples[samples.len() - 1],
        }
    }

    /// `"NAME":{"median_ns":..,"min_ns":..,"max_ns":..}`, the peers' drivers' JSON.
    pub fn json(&self, name: &str) -> String {
        format!(
            "\"{name}\":{{\"median_ns\":{:.1},\"min_ns\":{:.1},\"max_ns\":{:.1}}}",
            self.median, self.min, self.max
        )
    }
}

/// Times `f` by the rule above: `repeats` batches of about `target_ms` each, ns per call.
pub fn time_batches(repeats: usize, target_ms: f64, mut f: impl FnMut()) -> Stats {
    let mut n: u64 = 1;
    loop {
        let t0 = Instant::now();
        for _ in 0..n {
            f();
        }
        let dt = t0.elapsed().as_secs_f64() * 1e9;
        if dt > target_ms * 1e6 * 0.5 || n > (1 << 30) {
            n = ((n as f64) * target_ms * 1e6 / dt.max(1.0)).max(1.0) as u64;
            break;
        }
        n *= 2;
    }
    Stats::of(
        (0..repeats)
            .map(|_| {
                let t0 = Instant::now();
                for _ in 0..n {
                    f();
                }
                t0.elapsed().as_secs_f64() * 1e9 / n as f64
            })
            .collect(),
    )
}

/// `MBD_BENCH_PEERS=REPEATS[:TARGET_MS]` (default target 20 ms) as (repeats, target_ms).
pub fn parse_spec(spec: &str) -> (usize, f64) {
    let usage = "MBD_BENCH_PEERS=REPEATS[:TARGET_MS]";
    let (r, t) = spec.split_once(':').unwrap_or((spec, "20"));
    (r.parse().expect(usage), t.parse().expect(usage))
}

/// The free argument after `cargo bench`'s own `--bench` flags: the one model or scene to run.
pub fn only_arg() -> Option<String> {
    std::env::args().skip(1).find(|a| !a.starts_with('-'))
}
