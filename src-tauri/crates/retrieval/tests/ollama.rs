#![allow(clippy::unwrap_used)]
//! The Ollama embedder against the fake Ollama's `/api/embed`.

use perch_fake_llm::{Dialect, FakeLlm, FakeModel};
use perch_retrieval::{Embedder, OllamaEmbedder, RetrievalError, RetrieverKind, ToolDoc, ToolIndex, cosine};

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

#[tokio::test]
async fn embeds_texts_in_order() {
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let e = OllamaEmbedder::new(client(), &format!("{}/", fake.url()), "nomic-embed-text");
    assert_eq!((e.kind(), e.model_id().as_str()), (RetrieverKind::Ollama, "ollama:nomic-embed-text"));
    let texts =
        ["list the files in a folder", "files in this folder", "current time in Tokyo"].map(String::from);
    let v = e.embed(&texts).await.unwrap();
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(|x| x.len() == 64 && (x.iter().map(|a| a * a).sum::<f32>() - 1.0).abs() < 1e-4));
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]));

    let requests = fake.requests();
    let request = requests.last().unwrap();
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/api/embed"));
    assert_eq!(request.body["model"], "nomic-embed-text");
    assert_eq!(request.body["input"][2], "current time in Tokyo");
    assert!(fake.chat_requests().is_empty());
    assert!(e.embed(&[]).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_model_that_is_not_pulled_is_named() {
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let e = OllamaEmbedder::new(client(), &fake.url(), "bge-m3");
    let err = e.embed(&["x".to_owned()]).await.unwrap_err();
    assert!(matches!(&err, RetrievalError::ModelNotFound { model, .. } if model == "bge-m3"), "{err:?}");
    assert!(err.to_string().contains("ollama pull bge-m3"), "{err}");

    // Any model the fake lists with the embedding capability works.
    fake.set_models(vec![FakeModel::new("bge-m3", &["embedding"], 8192)]);
    assert_eq!(e.embed(&["x".to_owned()]).await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_unreachable_ollama_is_reported_and_the_index_falls_back() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = OllamaEmbedder::new(client(), &format!("http://127.0.0.1:{port}"), "nomic-embed-text");
    let err = e.embed(&["x".to_owned()]).await.unwrap_err();
    assert!(matches!(err, RetrievalError::Unreachable { .. }), "{err:?}");
    assert!(err.to_string().contains("not reachable"), "{err}");

    let mut index = ToolIndex::new(vec![
        ToolDoc::new("a__add", "add two numbers"),
        ToolDoc::new("a__time", "current time"),
        ToolDoc::new("a__files", "list files"),
    ]);
    let s = index.select(Some(&e), "what is the time", 1, &[]).await.unwrap();
    assert_eq!((s.ids[0].as_str(), s.used), ("a__time", RetrieverKind::Bm25));
    assert!(s.fallback_reason.unwrap().contains("not reachable"));
}
