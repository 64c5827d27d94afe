//! Timing of the MJCF reader on large generated models: a chain of 100,000 nested bodies and a
//! flat tree of 100,000 bodies, each body with a hinge and a sphere. Reading is linear and
//! iterative (line numbers by binary search in a table of line starts, an explicit stack over
//! the body tree), so both shapes take about the same time and ten times the bodies take about
//! ten times as long (measured: 0.16 s and 2.2 s for the 10,000- and 100,000-body chains on a
//! shared two-core machine under load).
//!
//! ```text
//! cargo bench --bench mjcf
//! ```

use criterion::Criterion;
use std::hint::black_box;
use std::time::Duration;

/// `n` bodies, each with a hinge and a sphere, either nested (a chain) or side by side.
fn many_bodies(n: usize, nested: bool) -> String {
    let mut s = String::with_capacity(n * 80);
    s.push_str("<mujoco>\n<worldbody>\n");
    for k in 0..n {
        s.push_str(&format!(
            "<body name=\"b{k}\" pos=\"0 0 0.1\"><joint axis=\"0 1 0\"/><geom size=\"0.05\"/>"
        ));
        s.push_str(if nested { "\n" } else { "</body>\n" });
    }
    if nested {
        s.push_str(&"</body>".repeat(n));
    }
    s.push_str("\n</worldbody>\n</mujoco>\n");
    s
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("mjcf");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    for n in [10_000, 100_000] {
        for (shape, nested) in [("chain", true), ("flat", false)] {
            let xml = many_bodies(n, nested);
            group.bench_function(format!("load_str {shape} {n}"), |b| {
                b.iter(|| black_box(mbd::mjcf::parse(black_box(&xml), "big.xml").unwrap()))
            });
        }
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    benches(&mut c);
    c.final_summary();
}
