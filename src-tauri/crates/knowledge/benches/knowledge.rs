//! The knowledge index's figures, on real source trees from crates.io (the packages this
//! workspace's Cargo.lock resolves, already in Cargo's registry once the workspace is built):
//!
//! - indexing throughput (files and MB per minute) on tokio's source, by words alone and with
//!   all-MiniLM-L6-v2 embeddings (all of it both times);
//! - retrieval quality (`quality`): recall@5 and MRR@10 for each labelled set in `benches/data/`
//!   (`tokio_questions.json` on that index, `hyper_questions.json` on hyper's source, indexed the
//!   same way; each names the package its lines were read in), hybrid, by words alone and by
//!   vectors alone, side by side with a reference pipeline in Python
//!   (`benches/quality_reference.py`: rank-bm25, the same model in NumPy with a flat cosine
//!   index, and their reciprocal rank fusion) over the same passages;
//! - search latency (p50, p95) at 100,000 passages: a whole search (the query embedded, BM25,
//!   the vector scan, the fusion, the passages read) and the retrieval without the query's
//!   embedding. Embedding 100,000 passages takes the better part of an hour on two cores, so
//!   the passages past the tokio sample take their vectors from the sample's real ones (the
//!   scan's cost depends on the count, not the values); queries are embedded for real.
//!
//! `PERCH_BENCH_QUICK=1` (`make test`, a debug build) indexes a tenth by words and two files
//! with embeddings, measures no quality, and searches 10,000 passages. `PERCH_BENCH_ONLY=search`
//! runs the search latency alone; `PERCH_BENCH_ONLY=quality` the indexing with embeddings and
//! the quality (about 20 minutes for tokio's index, then the reference's own embedding).
//! `PERCH_BENCH_SETS=hyper` (names, comma-separated) asks only those sets, and
//! `PERCH_BENCH_REFERENCE_CACHE=DIR` lets the reference keep its passages' vectors for a rerun.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use perch_knowledge::{Embed, Knowledge};

fn quick() -> bool {
    std::env::var_os("PERCH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
}

fn minilm() -> perch_retrieval::MiniLm {
    perch_retrieval::MiniLm::load(&perch_retrieval::test_support::minilm_dir()).unwrap()
}

/// The crates.io packages Cargo.lock names, as folders in Cargo's registry, largest first.
fn registry_crates() -> Vec<PathBuf> {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../Cargo.lock");
    let text = std::fs::read_to_string(lock).unwrap();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    let sources: Vec<PathBuf> =
        std::fs::read_dir(home.join("registry/src")).unwrap().flatten().map(|e| e.path()).collect();
    let mut crates = Vec::new();
    let mut name = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("name = ") {
            name = Some(n.trim_matches('"').to_owned());
        } else if let (Some(v), Some(n)) = (line.strip_prefix("version = "), name.take()) {
            let folder = format!("{n}-{}", v.trim_matches('"'));
            crates.extend(sources.iter().map(|s| s.join(&folder)).find(|p| p.is_dir()));
        }
    }
    crates
}

fn size_of(dir: &Path) -> (u64, u64) {
    let walk = perch_files::walk::walk(&[dir], perch_files::walk::WalkOptions::default(), |_| false);
    walk.into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .fold((0, 0), |(n, bytes), e| (n + 1, bytes + e.metadata().map_or(0, |m| m.len())))
}

/// Real vectors for queries; for passages, one of a pool of real passage vectors.
struct Pooled {
    model: perch_retrieval::MiniLm,
    pool: Vec<Vec<f32>>,
}

impl Embed for Pooled {
    fn model_id(&self) -> String {
        "pooled all-MiniLM-L6-v2".into()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        if texts.len() == 1 && texts[0].len() < 200 {
            return self.model.embed_blocking(texts).map_err(|e| e.to_string());
        }
        Ok(texts.iter().map(|t| self.pool[t.len() * 31 % self.pool.len()].clone()).collect())
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

const QUERIES: &[&str] = &[
    "how does the runtime shut down its worker threads",
    "where is the timer wheel advanced",
    "spawn a task on a blocking thread",
    "parse a configuration file",
    "retry after a connection reset",
    "what happens when a channel is closed",
    "read the HTTP response body as a stream",
    "escape a string for SQL",
    "error when the file does not exist",
    "compare two versions",
];

fn main() {
    let quick = quick();
    let crates = registry_crates();
    let tokio =
        crates.iter().find(|c| c.file_name().unwrap().to_string_lossy().starts_with("tokio-1.")).unwrap();
    let model = minilm();
    let (files, bytes) = size_of(tokio);
    println!("corpus: {} ({files} files, {:.1} MB)", tokio.display(), bytes as f64 / 1e6);

    // Throughput, words alone then with embeddings, each into a fresh index; the second is kept
    // for the quality stage.
    let mut pool = Vec::new();
    // `PERCH_BENCH_ONLY=search` skips the throughput runs (the pool is then the tokio sample's
    // first 200 passages embedded on their own); `=quality` runs the one with embeddings and the
    // quality, and stops there.
    let only = std::env::var("PERCH_BENCH_ONLY").unwrap_or_default();
    let sets = if quick { Vec::new() } else { quality::sets() };
    let tokio_name = tokio.file_name().unwrap().to_string_lossy().into_owned();
    let mut embedded = None;
    for with_model in [false, true] {
        if only == "search"
            || (only == "quality" && (!with_model || !sets.iter().any(|s| s.corpus == tokio_name)))
        {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let knowledge = Knowledge::open(&dir.path().join("knowledge.db")).unwrap();
        if with_model {
            knowledge.set_embedder(Some(Arc::new(model.clone()))).unwrap();
        }
        let folder = knowledge.add_folder(tokio).unwrap().path;
        let started = Instant::now();
        let stop = AtomicBool::new(false);
        // Embedding runs at a few passages a second on two cores: the quick run stops after a
        // tenth of the corpus by words, two files with embeddings.
        let limit = match (quick, with_model) {
            (true, true) => 2,
            (true, false) => files / 10,
            (false, _) => u64::MAX,
        };
        let report = knowledge
            .index(&folder, &stop, &|p| {
                if p.done >= limit {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            })
            .unwrap();
        // Words first, then meaning: the time to a folder searchable by meaning is both.
        knowledge.embed_pending(&AtomicBool::new(false), &|_| {}).unwrap();
        let secs = started.elapsed().as_secs_f64();
        let (indexed, passages) = knowledge.counts().unwrap();
        let share = indexed as f64 / files as f64;
        println!(
            "index {:<22} {indexed:>5} files {passages:>6} passages in {secs:>6.1} s: {:>7.0} files/min {:>6.1} MB/min ({} skipped){}",
            if with_model { "with MiniLM:" } else { "words only:" },
            indexed as f64 / secs * 60.0,
            bytes as f64 * share / 1e6 / secs * 60.0,
            report.skipped.len(),
            if with_model { format!(", {:.1} passages/s", passages as f64 / secs) } else { String::new() },
        );
        if with_model {
            if only != "quality" {
                let sample: Vec<String> =
                    knowledge.search("fn", 200).unwrap().passages.into_iter().map(|p| p.text).collect();
                pool = model.embed_blocking(&sample).unwrap();
            }
            embedded = Some((dir, knowledge, folder, secs));
        }
    }
    for set in &sets {
        if set.corpus == tokio_name
            && let Some((dir, knowledge, folder, secs)) = &embedded
        {
            set.run(knowledge, &dir.path().join("knowledge.db"), folder, *secs);
            continue;
        }
        // Another package: indexed with embeddings on its own, as tokio was above.
        let Some(root) = crates.iter().find(|c| c.file_name().is_some_and(|n| *n == *set.corpus)) else {
            println!(
                "quality {}: skipped, {} is not in Cargo's registry (build the workspace)",
                set.name, set.corpus
            );
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let knowledge = Knowledge::open(&dir.path().join("knowledge.db")).unwrap();
        knowledge.set_embedder(Some(Arc::new(model.clone()))).unwrap();
        let folder = knowledge.add_folder(root).unwrap().path;
        let started = Instant::now();
        knowledge.index(&folder, &AtomicBool::new(false), &|_| {}).unwrap();
        knowledge.embed_pending(&AtomicBool::new(false), &|_| {}).unwrap();
        let secs = started.elapsed().as_secs_f64();
        let (indexed, passages) = knowledge.counts().unwrap();
        println!("index {}: {indexed} files {passages} passages with MiniLM in {secs:.1} s", set.corpus);
        set.run(&knowledge, &dir.path().join("knowledge.db"), &folder, secs);
    }
    if only == "quality" {
        return;
    }

    if pool.is_empty() {
        let texts: Vec<String> = (0..200).map(|i| format!("passage {i} of tokio")).collect();
        pool = model.embed_blocking(&texts).unwrap();
    }

    // Search latency at 100,000 passages.
    let target = if quick { 10_000 } else { 100_000 };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("knowledge.db");
    let knowledge = Knowledge::open(&path).unwrap();
    knowledge.set_embedder(Some(Arc::new(Pooled { model: model.clone(), pool }))).unwrap();
    let started = Instant::now();
    let mut used = Vec::new();
    for krate in &crates {
        if knowledge.counts().unwrap().1 >= target {
            break;
        }
        let folder = knowledge.add_folder(krate).unwrap().path;
        knowledge.index(&folder, &AtomicBool::new(false), &|_| {}).unwrap();
        knowledge.embed_pending(&AtomicBool::new(false), &|_| {}).unwrap();
        used.push(folder);
    }
    let (indexed, passages) = knowledge.counts().unwrap();
    let db_mb = std::fs::metadata(&path).map_or(0, |m| m.len()) as f64 / 1e6;
    println!(
        "{passages} passages from {indexed} files of {} crates (indexed in {:.0} s), knowledge.db {db_mb:.0} MB",
        used.len(),
        started.elapsed().as_secs_f64()
    );
    knowledge.search("warm up", 5).unwrap(); // loads the vectors into memory
    let mut whole = Vec::new();
    let mut by_stage: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for round in 0..if quick { 2 } else { 10 } {
        for q in QUERIES {
            let query = format!("{q} {round}");
            let started = Instant::now();
            let found = knowledge.search(&query, 5).unwrap();
            whole.push(started.elapsed().as_secs_f64() * 1000.0);
            assert!(!found.passages.is_empty());
            let started = Instant::now();
            model.embed_blocking(&[query]).unwrap();
            by_stage.entry("query embedding").or_default().push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    // The same searches by words alone (a second handle, without the model), to tell the
    // parts apart.
    let words_only = Knowledge::open(&path).unwrap();
    for round in 0..if quick { 2 } else { 10 } {
        for q in QUERIES {
            let started = Instant::now();
            words_only.search(&format!("{q} {round}"), 5).unwrap();
            by_stage
                .entry("BM25 and reading the passages")
                .or_default()
                .push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    whole.sort_by(f64::total_cmp);
    println!(
        "search at {passages} passages ({} queries, k=5): p50 {:.1} ms, p95 {:.1} ms",
        whole.len(),
        percentile(&whole, 0.5),
        percentile(&whole, 0.95)
    );
    for (stage, mut times) in by_stage {
        times.sort_by(f64::total_cmp);
        println!(
            "  of which {stage}: p50 {:.1} ms, p95 {:.1} ms",
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        );
    }
}

/// Retrieval quality: labelled questions about a package's source asked of its index, each
/// answer a place in that source, and the same questions asked of a reference pipeline in Python
/// over the same passages.
mod quality {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::time::Instant;

    use perch_knowledge::{Knowledge, Retrieval};

    /// Where an answer lives: a file of the corpus and lines of it (1-based, inclusive).
    #[derive(serde::Deserialize)]
    struct Place {
        path: String,
        lines: [usize; 2],
    }

    #[derive(serde::Deserialize)]
    struct Question {
        question: String,
        /// `keywords` (shares words with the answer) or `paraphrase` (says it in other words).
        style: String,
        #[serde(flatten)]
        answer: Place,
        /// Other places that answer it as well.
        #[serde(default)]
        alternatives: Vec<Place>,
    }

    /// A labelled set: `benches/data/NAME_questions.json`.
    #[derive(serde::Deserialize)]
    pub struct Labelled {
        #[serde(skip)]
        pub name: String,
        #[serde(skip)]
        file: PathBuf,
        /// The package the lines were read in (`tokio-1.54.1`), a folder of Cargo's registry.
        pub corpus: String,
        questions: Vec<Question>,
    }

    /// A passage as the index holds it, its path inside the corpus.
    struct Stored {
        path: String,
        start: usize,
        end: usize,
    }

    impl Question {
        /// Whether a passage answers it: from the answer's file, and its lines overlap the answer's.
        fn answered_by(&self, path: &str, start: usize, end: usize) -> bool {
            std::iter::once(&self.answer)
                .chain(&self.alternatives)
                .any(|a| a.path == path && start <= a.lines[1] && end >= a.lines[0])
        }
    }

    /// The 1-based rank of the first passage (of ten) that answers the question.
    fn first_answer(q: &Question, found: &[Stored]) -> Option<usize> {
        found.iter().take(10).position(|p| q.answered_by(&p.path, p.start, p.end)).map(|i| i + 1)
    }

    /// Recall@5 (the share of questions answered in the first five) and MRR@10.
    fn figures(ranks: &[Option<usize>]) -> (f64, f64) {
        let n = ranks.len().max(1) as f64;
        let recall = ranks.iter().filter(|r| r.is_some_and(|r| r <= 5)).count() as f64 / n;
        let mrr = ranks.iter().flatten().map(|&r| 1.0 / r as f64).sum::<f64>() / n;
        (recall, mrr)
    }

    /// The labelled sets in `benches/data/`, by name; only those `PERCH_BENCH_SETS` names when
    /// it is set.
    pub fn sets() -> Vec<Labelled> {
        let wanted = std::env::var("PERCH_BENCH_SETS").unwrap_or_default();
        let wanted: Vec<&str> = wanted.split(',').map(str::trim).filter(|w| !w.is_empty()).collect();
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data");
        let mut sets: Vec<Labelled> = std::fs::read_dir(&data)
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let file = e.path();
                let name = file.file_name()?.to_str()?.strip_suffix("_questions.json")?.to_owned();
                (wanted.is_empty() || wanted.contains(&name.as_str())).then_some((name, file))
            })
            .map(|(name, file)| {
                let mut set: Labelled =
                    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                set.name = name;
                set.file = file;
                set
            })
            .collect();
        sets.sort_by(|a, b| b.name.cmp(&a.name)); // tokio first: it reuses the throughput's index
        sets
    }

    /// Every label points inside a file of the corpus (else the data file is wrong).
    fn check_labels(labelled: &Labelled, root: &Path) {
        let mut bad = Vec::new();
        for q in &labelled.questions {
            for place in std::iter::once(&q.answer).chain(&q.alternatives) {
                let lines = std::fs::read_to_string(root.join(&place.path)).map(|t| t.lines().count());
                let [start, end] = place.lines;
                match lines {
                    Ok(n) if 1 <= start && start <= end && end <= n => {}
                    Ok(n) => bad.push(format!("{}: lines {start}-{end} of {n} ({})", place.path, q.question)),
                    Err(e) => bad.push(format!("{}: {e}", place.path)),
                }
            }
        }
        assert!(bad.is_empty(), "bad labels in {}:\n{}", labelled.file.display(), bad.join("\n"));
    }

    /// The passages found for a question, best first, their paths inside `root`.
    fn search(knowledge: &Knowledge, root: &Path, question: &str, hybrid: bool) -> Vec<Stored> {
        let found = knowledge.search(question, 10).unwrap();
        assert_eq!(matches!(found.retrieval, Retrieval::Hybrid), hybrid, "{:?}", found.retrieval);
        found
            .passages
            .into_iter()
            .map(|p| Stored {
                path: p.path.strip_prefix(root).unwrap_or(&p.path).to_string_lossy().into_owned(),
                start: p.start,
                end: p.end,
            })
            .collect()
    }

    /// The semantic half alone, read from the index (the crate has no search by vectors alone):
    /// the stored 8-bit vectors scanned as `search.rs` scans them, the query quantised the same
    /// way, so the ranking is the one the fusion is given.
    struct VectorHalf {
        rows: Vec<(Stored, Vec<i8>, f32)>,
    }

    impl VectorHalf {
        fn read(db: &rusqlite::Connection, root: &Path) -> Self {
            let mut statement = db
                .prepare(
                    "SELECT f.path, c.start_line, c.end_line, c.vector, c.scale FROM chunks c
                     JOIN files f ON c.file_id = f.id WHERE c.vector IS NOT NULL ORDER BY c.id",
                )
                .unwrap();
            let rows = statement
                .query_map([], |r| {
                    let path = PathBuf::from(r.get::<_, String>(0)?);
                    let bytes: Vec<u8> = r.get(3)?;
                    Ok((
                        Stored {
                            path: path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned(),
                            start: r.get::<_, i64>(1)? as usize,
                            end: r.get::<_, i64>(2)? as usize,
                        },
                        bytes.into_iter().map(|b| b as i8).collect(),
                        r.get::<_, f64>(4)? as f32,
                    ))
                })
                .unwrap();
            Self { rows: rows.collect::<Result<_, _>>().unwrap() }
        }

        fn nearest(&self, query: &[f32], k: usize) -> Vec<&Stored> {
            let max = query.iter().fold(0f32, |m, x| m.max(x.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            let query: Vec<i32> =
                query.iter().map(|x| (x / scale).round().clamp(-127.0, 127.0) as i32).collect();
            let mut scored: Vec<(f32, usize)> = self
                .rows
                .iter()
                .enumerate()
                .map(|(i, (_, row, row_scale))| {
                    let dot: i32 = row.iter().zip(&query).map(|(&a, &b)| i32::from(a) * b).sum();
                    (dot as f32 * row_scale, i)
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0));
            scored.into_iter().take(k).map(|(_, i)| &self.rows[i].0).collect()
        }
    }

    /// Writes the indexed passages as JSON lines (path inside the corpus, lines, headings,
    /// text), what the reference retrieves over; returns how many.
    fn write_passages(db: &rusqlite::Connection, root: &Path, out: &Path) -> usize {
        use std::io::Write;
        let mut statement = db
            .prepare(
                "SELECT f.path, c.start_line, c.end_line, c.heading, c.text FROM chunks c
                 JOIN files f ON c.file_id = f.id ORDER BY c.id",
            )
            .unwrap();
        let mut file = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
        let mut rows = statement.query([]).unwrap();
        let mut n = 0;
        while let Some(r) = rows.next().unwrap() {
            let path = PathBuf::from(r.get::<_, String>(0).unwrap());
            let line = serde_json::json!({
                "path": path.strip_prefix(root).unwrap_or(&path).to_string_lossy(),
                "start": r.get::<_, i64>(1).unwrap(),
                "end": r.get::<_, i64>(2).unwrap(),
                "heading": r.get::<_, String>(3).unwrap(),
                "text": r.get::<_, String>(4).unwrap(),
            });
            writeln!(file, "{line}").unwrap();
            n += 1;
        }
        file.flush().unwrap();
        n
    }

    impl Labelled {
        /// Asks every labelled question of `knowledge` (the corpus, embedded with all-MiniLM-L6-v2
        /// in `index_secs`), by words and meaning, by words alone and by vectors alone, then of the
        /// Python reference, and prints the figures side by side.
        pub fn run(&self, knowledge: &Knowledge, db_path: &Path, root: &Path, index_secs: f64) {
            let labelled = self;
            let corpus = root.file_name().unwrap_or_default().to_string_lossy();
            assert_eq!(labelled.corpus, corpus, "the set names the package it was labelled in");
            check_labels(labelled, root);
            let questions = &labelled.questions;
            let paraphrased = questions.iter().filter(|q| q.style == "paraphrase").count();
            let started = Instant::now();
            let db =
                rusqlite::Connection::open_with_flags(db_path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                    .unwrap();
            let passages_out = std::env::var_os("PERCH_BENCH_PASSAGES_OUT")
                .map(PathBuf::from)
                .map(|p| p.with_extension(format!("{}.jsonl", labelled.name)))
                .unwrap_or_else(|| {
                    std::env::temp_dir().join(format!("perch-bench-{}-passages.jsonl", labelled.name))
                });
            let passages = write_passages(&db, root, &passages_out);
            println!("quality: {passages} passages written to {}", passages_out.display());

            let words_only = Knowledge::open(db_path).unwrap();
            let vectors = VectorHalf::read(&db, root);
            let model = super::minilm();
            let mut ranks: Vec<(&str, Vec<Option<usize>>)> =
                vec![("Perch hybrid", vec![]), ("Perch words only", vec![]), ("Perch vector half", vec![])];
            let mut search_ms = Vec::new();
            for q in questions {
                let t = Instant::now();
                let hybrid = search(knowledge, root, &q.question, true);
                search_ms.push(t.elapsed().as_secs_f64() * 1000.0);
                ranks[0].1.push(first_answer(q, &hybrid));
                ranks[1].1.push(first_answer(q, &search(&words_only, root, &q.question, false)));
                let query = model.embed_blocking(std::slice::from_ref(&q.question)).unwrap();
                let nearest = vectors.nearest(&query[0], 10);
                ranks[2]
                    .1
                    .push(nearest.iter().position(|p| q.answered_by(&p.path, p.start, p.end)).map(|i| i + 1));
            }
            search_ms.sort_by(f64::total_cmp);
            println!(
                "quality: {} questions asked in {:.1} s (hybrid search p50 {:.1} ms)",
                questions.len(),
                started.elapsed().as_secs_f64(),
                super::percentile(&search_ms, 0.5)
            );
            let details = std::env::var_os("PERCH_BENCH_QUALITY_DETAILS")
                .map(|p| PathBuf::from(format!("{}-{}", p.to_string_lossy(), labelled.name)));
            if let Some(out) = &details {
                let rows: Vec<serde_json::Value> = questions
                    .iter()
                    .enumerate()
                    .map(|(i, q)| {
                        let mut row = serde_json::json!({ "question": q.question, "style": q.style });
                        for (name, r) in &ranks {
                            row[*name] = serde_json::json!(r[i]);
                        }
                        row
                    })
                    .collect();
                std::fs::write(
                    out.with_extension("perch.json"),
                    serde_json::to_string_pretty(&rows).unwrap(),
                )
                .unwrap();
            }

            let started = Instant::now();
            let reference = reference(&labelled.file, &passages_out, root, details.as_deref());
            let reference_secs = started.elapsed().as_secs_f64();

            println!(
                "retrieval quality on {corpus}: {} questions ({paraphrased} paraphrased), {passages} passages; \
             recall@5 (keywords / paraphrase), MRR@10",
                questions.len()
            );
            let row = |name: &str, ranks: &[Option<usize>]| {
                let by_style = |style: &str| {
                    let sub: Vec<Option<usize>> = ranks
                        .iter()
                        .zip(questions)
                        .filter(|(_, q)| q.style == style)
                        .map(|(r, _)| *r)
                        .collect();
                    figures(&sub).0
                };
                let (recall, mrr) = figures(ranks);
                println!(
                    "  {name:<22} recall@5 {recall:.3} ({:.3} / {:.3})  MRR@10 {mrr:.3}",
                    by_style("keywords"),
                    by_style("paraphrase")
                );
            };
            for (name, r) in &ranks {
                row(name, r);
            }
            println!(
                "  (Perch embedded {passages} passages at {:.1} passages/s, words included)",
                passages as f64 / index_secs
            );
            match reference {
                Some(summary) => {
                    for (name, key) in [
                        ("reference BM25", "BM25"),
                        ("reference dense", "dense"),
                        ("reference hybrid", "hybrid"),
                    ] {
                        let r: Vec<Option<usize>> =
                            serde_json::from_value(summary["ranks"][key].clone()).unwrap();
                        row(name, &r);
                    }
                    println!(
                        "  (reference embedded {passages} passages at {:.1} passages/s; its whole run {reference_secs:.0} s)",
                        summary["passages_per_s"].as_f64().unwrap_or(f64::NAN)
                    );
                }
                None => println!("  reference: not run (see above)"),
            }
        }
    }

    /// Runs `quality_reference.py` with the venv's Python (`$VENV`) when its packages import;
    /// returns its summary (each method's ranks, its embedding throughput).
    fn reference(
        questions: &Path,
        passages: &Path,
        root: &Path,
        details: Option<&Path>,
    ) -> Option<serde_json::Value> {
        let Some(venv) = std::env::var_os("VENV") else {
            println!(
                "reference: skipped, VENV is not set (the venv `make deps` fills from scripts/python-requirements.txt)"
            );
            return None;
        };
        let python = PathBuf::from(venv).join("bin/python");
        match Command::new(&python).args(["-c", "import numpy, tokenizers, rank_bm25"]).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                let error = String::from_utf8_lossy(&out.stderr);
                println!(
                    "reference: skipped, {} cannot import numpy, tokenizers and rank_bm25 ({}): run `make deps`",
                    python.display(),
                    error.lines().last().unwrap_or_default()
                );
                return None;
            }
            Err(e) => {
                println!("reference: skipped, {} cannot be run: {e}", python.display());
                return None;
            }
        }
        let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");
        let summary = passages.with_extension("reference.json");
        let mut command = Command::new(&python);
        command
            .arg(benches.join("quality_reference.py"))
            .arg("--questions")
            .arg(questions)
            .arg("--passages")
            .arg(passages)
            .arg("--model-dir")
            .arg(perch_retrieval::test_support::minilm_dir())
            .arg("--root")
            .arg(root)
            .arg("--summary")
            .arg(&summary)
            .env("PERCH_REFERENCE_THREADS", "2");
        if let Some(out) = details {
            command.arg("--details").arg(out.with_extension("reference.json"));
        }
        if let Some(cache) = std::env::var_os("PERCH_BENCH_REFERENCE_CACHE") {
            command.arg("--cache").arg(cache);
        }
        match command.status() {
            Ok(status) if status.success() => {
                Some(serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap())
            }
            Ok(status) => {
                println!("reference: failed ({status})");
                None
            }
            Err(e) => {
                println!("reference: cannot be run: {e}");
                None
            }
        }
    }
}
