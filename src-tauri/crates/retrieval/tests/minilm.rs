#![allow(clippy::unwrap_used)]
//! all-MiniLM-L6-v2 in candle against the reference (tests/data/minilm_reference.py, plain
//! numpy; its "hello world" values are also sentence-transformers' published ones).

mod common;

use perch_retrieval::{Embedder, MiniLm, RetrievalError, RetrieverKind, cosine, download};

fn model() -> MiniLm {
    MiniLm::load(&common::minilm_dir()).unwrap()
}

#[tokio::test]
async fn matches_the_reference_embeddings() {
    let m = model();
    let texts = vec!["hello world".to_owned(), "list files in a folder".to_owned()];
    let v = m.embed(&texts).await.unwrap();
    assert_eq!(v.len(), 2);
    for (vector, expected) in v.iter().zip([
        [-0.034477, 0.031023, 0.006735, 0.026109, -0.039362],
        [0.00591, 0.026988, -0.069937, 0.050879, 0.083348],
    ]) {
        assert_eq!(vector.len(), MiniLm::DIMENSIONS);
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
        for (got, want) in vector.iter().zip(expected) {
            assert!((got - want).abs() < 1e-3, "{:?} vs {expected:?}", &vector[..5]);
        }
    }
    assert_eq!((m.kind(), m.model_id().as_str()), (RetrieverKind::MiniLm, MiniLm::MODEL_ID));
}

#[tokio::test]
async fn padding_in_a_batch_does_not_change_a_vector() {
    let m = model();
    let short = "hello world".to_owned();
    let long = "Get a detailed listing of all files and directories in a specified path, including sizes."
        .to_owned();
    let alone = m.embed(std::slice::from_ref(&short)).await.unwrap();
    let batched = m.embed(&[long, short]).await.unwrap();
    assert!(cosine(&alone[0], &batched[1]) > 0.9999, "{}", cosine(&alone[0], &batched[1]));
    assert!(m.embed(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn similar_meanings_score_higher() {
    let m = model();
    let docs = common::tools();
    let text = |id: &str| common::doc(&docs, id).text.clone();
    let v = m
        .embed(&[
            "list files in a folder".to_owned(),
            text("filesystem__list_directory"),
            text("demo__add"),
            "what time is it in Tokyo?".to_owned(),
            text("time__get_current_time"),
        ])
        .await
        .unwrap();
    assert!(
        cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.2,
        "{} {}",
        cosine(&v[0], &v[1]),
        cosine(&v[0], &v[2])
    );
    assert!(cosine(&v[3], &v[4]) > cosine(&v[3], &v[1]));
}

#[tokio::test]
async fn the_download_list_names_these_files() {
    let dir = common::minilm_dir();
    assert!(download::missing(download::MINILM_FILES, &dir).is_empty(), "sizes differ");
    for f in download::MINILM_FILES {
        assert_eq!(download::hash_file(&dir.join(&*f.name)).await.unwrap(), f.sha256, "{}", f.name);
    }
}

#[test]
fn a_missing_model_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = MiniLm::load(dir.path()).unwrap_err();
    assert!(matches!(err, RetrievalError::ModelMissing { .. }), "{err}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
}
