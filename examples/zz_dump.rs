//! temp
#[path = "../benches/workloads.rs"]
mod workloads;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("W1_f64");
    let reps: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(30);
    let s = workloads::Sizes::new(false);
    let group = which.split('_').next().unwrap();
    for mut w in workloads::build(group, &s) {
        if w.id != which {
            continue;
        }
        let mut v = vec![];
        let mut b = vec![];
        for _ in 0..reps {
            let t = Instant::now();
            (w.run)();
            v.push(t.elapsed().as_secs_f64() * 1e3);
            if args.len() < 4 {
                if let Some(f) = w.baseline.as_mut() {
                    let t = Instant::now();
                    f();
                    b.push(t.elapsed().as_secs_f64() * 1e3);
                }
            }
        }
        v.sort_by(f64::total_cmp);
        b.sort_by(f64::total_cmp);
        println!(
            "{}: {:.2} ms, base {:.2} ms",
            w.id,
            v[v.len() / 2],
            b.get(b.len() / 2).copied().unwrap_or(0.0)
        );
    }
}
