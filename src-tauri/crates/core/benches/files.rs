//! The `@` picker's time to first results in a generated 200,000-file tree (2,000 packages of
//! 100 files, a `.gitignore` and a `node_modules` folder the walk must skip), and the time to
//! the complete ranked list, for a query typed in full and for a one-letter query. Cold-cache
//! figures would need root to drop the page cache: these are warm (a picker opened twice).
//! `PERCH_BENCH_QUICK=1` uses a 2,000-file tree.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use perch_core::files::{SearchOptions, search};
use tokio_util::sync::CancellationToken;

mod common;

fn generate(root: &Path, packages: usize) {
    std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    for p in 0..packages {
        let dir = root.join(format!("pkg{p:04}/src"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let ext = if f % 10 == 9 { "log" } else { "rs" };
            std::fs::write(dir.join(format!("module_{f:03}.{ext}")), b"x").unwrap();
        }
    }
    let skipped = root.join("node_modules/dep");
    std::fs::create_dir_all(&skipped).unwrap();
    for f in 0..1000 {
        std::fs::write(skipped.join(format!("index{f}.js")), b"x").unwrap();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let packages = common::scaled(2_000, 20);
    let runs = common::scaled(5, 1);
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    generate(dir.path(), packages);
    println!("files: generated {} files in {:.1} s", packages * 100 + 1001, started.elapsed().as_secs_f64());
    let roots = [dir.path().to_path_buf()];
    let options = SearchOptions::default();
    // Warm the page cache once, as a picker opened before would have.
    search(&roots, "", &options, &CancellationToken::new(), |_| {}).unwrap();

    let typed = format!("pkg{:04} module_042", packages * 3 / 5);
    for query in [typed.as_str(), "m"] {
        let (mut first, mut all, mut visited) = (Vec::new(), Vec::new(), 0);
        for _ in 0..runs {
            let t0 = Instant::now();
            let mut first_at = None;
            let last = search(&roots, query, &options, &CancellationToken::new(), |u| {
                if first_at.is_none() && !u.hits.is_empty() {
                    first_at = Some(t0.elapsed());
                }
            })
            .unwrap();
            all.push(ms(t0.elapsed()));
            first.push(ms(first_at.unwrap()));
            visited = last.visited;
            assert!(!last.hits.is_empty());
        }
        println!(
            "files: query {query:?}: first results {:.1} ms, complete list {:.1} ms ({visited} files walked, median of {runs})",
            median(first),
            median(all)
        );
    }
}
