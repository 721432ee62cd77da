//! Parses GE graph dumps and looks a kernel up, printing timings: the measured side of
//! `scripts/bench_ge_graph.sh`.
//!
//! Usage: `ge_graph_parse [--repeat N] [--kernel NAME] FILE...`

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut repeat = 1usize;
    let mut kernel = None;
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = args.next().and_then(|n| n.parse().ok()).unwrap_or(1),
            "--kernel" => kernel = args.next(),
            _ => files.push(a),
        }
    }
    for f in files {
        let bytes = match std::fs::read(&f) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{f}: {e}");
                std::process::exit(2);
            }
        };
        let start = Instant::now();
        let mut ops = 0;
        let mut hits = 0;
        for _ in 0..repeat {
            match npgx_parsers::ge_graph::parse(&bytes) {
                Ok(m) => {
                    ops = m.ops().count();
                    if let Some(k) = &kernel {
                        hits = m.find_kernel(k).len();
                    }
                }
                Err(e) => {
                    eprintln!("{f}: {e}");
                    std::process::exit(1);
                }
            }
        }
        let per = start.elapsed().as_secs_f64() / repeat as f64;
        println!(
            "{f}: {} bytes, {ops} ops, {hits} kernel hit(s), {:.2} ms per parse, {:.0} MB/s",
            bytes.len(),
            per * 1e3,
            bytes.len() as f64 / per / 1e6
        );
    }
}
