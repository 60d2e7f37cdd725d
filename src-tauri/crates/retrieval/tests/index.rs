#![allow(clippy::unwrap_used)]
//! Selection rules: always-on tools, small catalogs, the embedding cache, the BM25 fallback.

mod common;

use common::Counting;
use perch_retrieval::{EmbeddingCache, RetrieverKind, ToolDoc, ToolIndex};

fn docs() -> Vec<ToolDoc> {
    vec![
        ToolDoc::new("demo__add", "add: Add two numbers and return the sum."),
        ToolDoc::new("fs__list_directory", "list_directory: List the files and folders in a folder."),
        ToolDoc::new("fs__read_file", "read_file: Read a text file."),
        ToolDoc::new("time__get_current_time", "get_current_time: Get the current time in a timezone."),
        ToolDoc::new("review__present_review", "present_review: Show a code review beside the editor."),
        ToolDoc::new("everything__get_tiny_image", "get_tiny_image: Returns a tiny image."),
    ]
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn bm25_without_an_embedder() {
    let mut index = ToolIndex::new(docs());
    let s = index.select(None, "what time is it in Lima", 1, &[]).await.unwrap();
    assert_eq!(s.ids, ids(&["time__get_current_time"]));
    assert_eq!((s.used, s.fallback_reason), (RetrieverKind::Bm25, None));
}

#[tokio::test]
async fn always_on_tools_come_first_and_do_not_use_up_k() {
    let mut index = ToolIndex::new(docs());
    let always = ids(&["review__present_review", "gone__tool", "review__present_review"]);
    let s = index.select(None, "read the file notes.txt", 2, &always).await.unwrap();
    assert_eq!(s.ids.len(), 3, "{s:?}");
    assert_eq!(s.ids[0], "review__present_review");
    assert_eq!(s.ids[1], "fs__read_file");
    assert!(!s.ids.contains(&"gone__tool".to_owned()));

    // An always-on tool that also ranks well is not listed twice.
    let s = index.select(None, "show a code review", 1, &ids(&["review__present_review"])).await.unwrap();
    assert_eq!(s.ids.len(), 2, "{s:?}");
    assert_eq!(s.ids.iter().filter(|i| *i == "review__present_review").count(), 1);
}

#[tokio::test]
async fn every_tool_when_they_all_fit() {
    let counting = Counting::default();
    let mut index = ToolIndex::new(docs());
    for k in [5, 6, 50] {
        let s = index.select(Some(&counting), "anything", k, &ids(&["demo__add"])).await.unwrap();
        assert_eq!(s.ids.len(), 6, "k={k}");
        assert_eq!(s.ids[0], "demo__add");
        assert_eq!(s.used, RetrieverKind::Ollama);
    }
    let s = index.select(Some(&counting), "anything", 0, &ids(&["demo__add"])).await.unwrap();
    assert_eq!(s.ids, ids(&["demo__add"]));
    assert_eq!(counting.embedded(), 0, "nothing to rank, nothing embedded");
    let s = ToolIndex::new(Vec::new()).select(None, "x", 3, &ids(&["demo__add"])).await.unwrap();
    assert!(s.ids.is_empty());
}

#[tokio::test]
async fn the_embedder_ranks_and_the_cache_saves_work() {
    let counting = Counting::default();
    let mut index = ToolIndex::new(docs());
    let s = index.select(Some(&counting), "show me an image", 1, &[]).await.unwrap();
    assert_eq!(s.ids, ids(&["everything__get_tiny_image"]));
    assert_eq!((s.used, s.fallback_reason.clone()), (RetrieverKind::Ollama, None));
    assert_eq!(counting.embedded(), 7, "six tools and the message");

    let s = index.select(Some(&counting), "what time is it", 2, &[]).await.unwrap();
    assert_eq!(s.ids[0], "time__get_current_time");
    assert_eq!(counting.embedded(), 8, "only the new message");

    // Across a restart: the saved cache spares the tools, and a new tool alone is embedded.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("embeddings.bin");
    index.cache_mut().save(&path).unwrap();
    let mut more = docs();
    more.push(ToolDoc::new("fs__create_folder", "create_folder: Create a new folder."));
    let mut index = ToolIndex::with_cache(more, EmbeddingCache::load(&path).unwrap());
    let s = index.select(Some(&counting), "make a folder", 1, &[]).await.unwrap();
    assert_eq!(counting.embedded(), 10, "the new tool and the message");
    assert!(s.ids[0].starts_with("fs__"), "{s:?}");
    assert!(index.cache().is_dirty());

    // warm() embeds nothing that is cached.
    assert_eq!(index.warm(&counting).await.unwrap(), 0);
    index.set_docs(docs().into_iter().map(|d| ToolDoc::new(d.id, format!("{} (v2)", d.text))).collect());
    assert_eq!(index.warm(&counting).await.unwrap(), 6);
}

#[tokio::test]
async fn a_failing_embedder_falls_back_to_bm25() {
    let broken = Counting { fail: true, ..Counting::default() };
    let mut index = ToolIndex::new(docs());
    let s = index.select(Some(&broken), "what time is it in Lima", 1, &ids(&["demo__add"])).await.unwrap();
    assert_eq!(s.ids, ids(&["demo__add", "time__get_current_time"]));
    assert_eq!(s.used, RetrieverKind::Bm25);
    let reason = s.fallback_reason.unwrap();
    assert!(reason.contains("ollama") && reason.contains("connection refused"), "{reason}");
}
