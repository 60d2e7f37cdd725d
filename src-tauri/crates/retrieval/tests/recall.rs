#![allow(clippy::unwrap_used)]
//! Recall@3 and @8 of each retriever on real tool lists (tests/data/tools.json, from
//! dump_tools.py) and labelled messages (tests/data/queries.json). The table is printed; see
//! it with `cargo test -p perch-retrieval --test recall -- --nocapture`. The floors only catch
//! a broken retriever; they sit a little below what was measured.

mod common;

use std::time::Instant;

use perch_fake_llm::{Dialect, FakeLlm};
use perch_retrieval::{Embedder, MiniLm, OllamaEmbedder, RetrieverKind, ToolIndex};

struct Row {
    name: &'static str,
    recall3: f64,
    recall8: f64,
    hit3: f64,
    millis: u128,
    misses: Vec<String>,
}

async fn evaluate(name: &'static str, retriever: Option<&dyn Embedder>) -> Row {
    let queries = common::queries();
    let mut index = ToolIndex::new(common::tools());
    let started = Instant::now();
    let (mut recall3, mut recall8, mut hit3) = (0.0, 0.0, 0.0);
    let mut misses = Vec::new();
    for q in &queries {
        let selection = index.select(retriever, &q.query, 8, &[]).await.unwrap();
        assert_eq!(
            selection.used,
            retriever.map_or(RetrieverKind::Bm25, |r| r.kind()),
            "{name}: {selection:?}"
        );
        assert_eq!(selection.fallback_reason, None, "{name}");
        assert_eq!(selection.ids.len(), 8);
        let found = |k: usize| q.relevant.iter().filter(|r| selection.ids[..k].contains(r)).count() as f64;
        recall3 += found(3) / q.relevant.len() as f64;
        recall8 += found(8) / q.relevant.len() as f64;
        hit3 += f64::from(u8::from(found(3) > 0.0));
        if found(8) < q.relevant.len() as f64 {
            misses.push(format!("{:?} -> top3 {:?}", q.query, &selection.ids[..3]));
        }
    }
    let n = queries.len() as f64;
    Row {
        name,
        recall3: recall3 / n,
        recall8: recall8 / n,
        hit3: hit3 / n,
        millis: started.elapsed().as_millis(),
        misses,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn recall_at_3_and_8() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let minilm = MiniLm::load(&common::minilm_dir()).unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let ollama = OllamaEmbedder::new(reqwest::Client::new(), &fake.url(), "nomic-embed-text");

    let rows = [
        evaluate("minilm", Some(&minilm)).await,
        evaluate("ollama (fake)", Some(&ollama)).await,
        evaluate("bm25", None).await,
    ];
    println!(
        "\n{} tools, {} messages\n{:<14} {:>9} {:>9} {:>7} {:>9}",
        common::tools().len(),
        common::queries().len(),
        "retriever",
        "recall@3",
        "recall@8",
        "hit@3",
        "time"
    );
    for r in &rows {
        println!("{:<14} {:>9.3} {:>9.3} {:>7.3} {:>7}ms", r.name, r.recall3, r.recall8, r.hit3, r.millis);
    }
    for r in &rows {
        println!("\n{} misses at 8:", r.name);
        r.misses.iter().for_each(|m| println!("  {m}"));
    }

    // Measured: minilm 0.798 / 0.917, bm25 0.754 / 0.873, the fake's bag of words 0.480 / 0.631.
    let [minilm, ollama, bm25] = &rows;
    assert!(minilm.recall3 >= 0.7 && minilm.recall8 >= 0.85, "minilm");
    assert!(bm25.recall3 >= 0.65 && bm25.recall8 >= 0.8, "bm25");
    assert!(ollama.recall8 >= 0.5, "ollama (the fake's bag of words)");
}
