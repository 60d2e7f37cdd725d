//! all-MiniLM-L6-v2 sentence embeddings on the CPU: BERT in candle, mean pooling over the
//! attention mask, L2 normalisation (what sentence-transformers does for this model).

mod bert;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::Mutex;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::download::{self, MINILM_FILES};
use crate::{Embedder, RetrievalError, RetrieverKind};
use bert::{Bert, Config};

/// sentence-transformers truncates this model's input to 256 tokens.
const MAX_TOKENS: usize = 256;
/// Texts per forward pass.
const BATCH: usize = 32;

/// The all-MiniLM-L6-v2 encoder, loaded from a folder holding `model.safetensors` and
/// `tokenizer.json` (and optionally `config.json`). Cheap to clone.
#[derive(Clone)]
pub struct MiniLm {
    inner: Arc<Inner>,
}

struct Inner {
    model: Bert,
    tokenizer: Tokenizer,
    device: Device,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").finish_non_exhaustive()
    }
}

impl MiniLm {
    /// The id embeddings from this model are cached under.
    pub const MODEL_ID: &'static str = "sentence-transformers/all-MiniLM-L6-v2";
    /// The length of its vectors.
    pub const DIMENSIONS: usize = 384;

    /// Loads the model (blocking: reads about 90 MB; call it from `spawn_blocking`).
    pub fn load(dir: &Path) -> Result<Self, RetrievalError> {
        let weights_path = dir.join("model.safetensors");
        let tokenizer_path = dir.join("tokenizer.json");
        for path in [&weights_path, &tokenizer_path] {
            if !path.is_file() {
                return Err(RetrievalError::ModelMissing { path: path.clone() });
            }
        }
        let config_path = dir.join("config.json");
        let config = if config_path.is_file() {
            let text = std::fs::read_to_string(&config_path)
                .map_err(|e| RetrievalError::io("reading", &config_path, e))?;
            serde_json::from_str(&text)
                .map_err(|e| RetrievalError::Model(format!("{}: {e}", config_path.display())))?
        } else {
            Config::minilm_l6()
        };

        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| RetrievalError::Model(format!("{}: {e}", tokenizer_path.display())))?;
        // The shipped tokenizer pads every text to 128 tokens; pad each batch to its longest
        // text instead (pooling ignores padding, so the vectors are the same, only faster).
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(config.max_position_embeddings),
                ..Default::default()
            }))
            .map_err(RetrievalError::model)?;

        let bytes =
            std::fs::read(&weights_path).map_err(|e| RetrievalError::io("reading", &weights_path, e))?;
        let device = Device::Cpu;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device)
            .map_err(RetrievalError::model)?;
        let model = Bert::load(vb, &config).map_err(RetrievalError::model)?;
        Ok(Self { inner: Arc::new(Inner { model, tokenizer, device }) })
    }

    /// Embeds on the calling thread (blocking). [`Embedder::embed`] runs this off the runtime.
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrievalError> {
        // Similar lengths share a batch, so little time goes into padding.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, vector) in chunk.iter().zip(self.inner.embed_batch(&batch)?) {
                out[i] = vector;
            }
        }
        Ok(out)
    }
}

impl Inner {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, RetrievalError> {
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).map_err(RetrievalError::model)?;
        let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, RetrievalError> {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &self.device))
                .collect::<candle_core::Result<_>>()
                .map_err(RetrievalError::model)?;
            Tensor::stack(&rows, 0).map_err(RetrievalError::model)
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let type_ids = rows(tokenizers::Encoding::get_type_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let pooled = self.model.pooled(&ids, &type_ids, &mask).map_err(RetrievalError::model)?;
        bert::l2_normalize(&pooled).and_then(|t| t.to_vec2::<f32>()).map_err(RetrievalError::model)
    }
}

#[async_trait::async_trait]
impl Embedder for MiniLm {
    fn kind(&self) -> RetrieverKind {
        RetrieverKind::MiniLm
    }

    fn model_id(&self) -> String {
        Self::MODEL_ID.into()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrievalError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts))
            .await
            .map_err(|e| RetrievalError::Task(e.to_string()))?
    }
}

/// The embedded model, loaded once it is present and shared by everything that embeds (the
/// tool picker, the knowledge folders): one copy in memory. Cheap to clone.
#[derive(Clone, Default)]
pub struct MiniLmSlot {
    dir: PathBuf,
    loaded: Arc<Mutex<Option<Arc<MiniLm>>>>,
}

impl MiniLmSlot {
    /// The model whose files are (or will be downloaded) in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, loaded: Arc::default() }
    }

    /// Whether its files are downloaded (loading it is [`MiniLmSlot::get`]).
    pub fn present(&self) -> bool {
        download::missing(MINILM_FILES, &self.dir).is_empty()
    }

    /// The model, loaded on first use once its files are in the folder.
    pub async fn get(&self) -> Option<Arc<MiniLm>> {
        let mut slot = self.loaded.lock().await;
        if slot.is_none() && self.present() {
            let dir = self.dir.clone();
            match tokio::task::spawn_blocking(move || MiniLm::load(&dir)).await {
                Ok(Ok(model)) => *slot = Some(Arc::new(model)),
                Ok(Err(e)) => tracing::warn!(error = %e, "the embedded model did not load"),
                Err(e) => tracing::warn!(error = %e, "loading the embedded model failed"),
            }
        }
        slot.clone()
    }
}
