//! A BERT encoder in candle: just what sentence embeddings need (no pooler, no heads, absolute
//! positions, inference only).

use candle_core::{D, DType, Module, Result, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder, embedding, layer_norm, linear};
use serde::Deserialize;

/// The fields of a Hugging Face BERT `config.json` the encoder uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
    pub hidden_act: String,
}

impl Config {
    /// all-MiniLM-L6-v2 (the `config.json` of sentence-transformers/all-MiniLM-L6-v2).
    pub fn minilm_l6() -> Self {
        Self {
            vocab_size: 30522,
            hidden_size: 384,
            num_hidden_layers: 6,
            num_attention_heads: 12,
            intermediate_size: 1536,
            max_position_embeddings: 512,
            type_vocab_size: 2,
            layer_norm_eps: 1e-12,
            hidden_act: "gelu".into(),
        }
    }
}

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    norm: LayerNorm,
}

impl Embeddings {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        Ok(Self {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(c.max_position_embeddings, c.hidden_size, vb.pp("position_embeddings"))?,
            token_types: embedding(c.type_vocab_size, c.hidden_size, vb.pp("token_type_embeddings"))?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor, type_ids: &Tensor) -> Result<Tensor> {
        let seq = ids.dim(1)?;
        let positions = Tensor::arange(0u32, seq as u32, ids.device())?;
        let x = self.words.forward(ids)?.add(&self.token_types.forward(type_ids)?)?;
        let x = x.broadcast_add(&self.positions.forward(&positions)?)?;
        self.norm.forward(&x)
    }
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
    heads: usize,
    exact_gelu: bool,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        let (h, i) = (c.hidden_size, c.intermediate_size);
        let attention = vb.pp("attention");
        Ok(Self {
            query: linear(h, h, attention.pp("self").pp("query"))?,
            key: linear(h, h, attention.pp("self").pp("key"))?,
            value: linear(h, h, attention.pp("self").pp("value"))?,
            attention_out: linear(h, h, attention.pp("output").pp("dense"))?,
            attention_norm: layer_norm(h, c.layer_norm_eps, attention.pp("output").pp("LayerNorm"))?,
            intermediate: linear(h, i, vb.pp("intermediate").pp("dense"))?,
            output: linear(i, h, vb.pp("output").pp("dense"))?,
            output_norm: layer_norm(h, c.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
            heads: c.num_attention_heads,
            exact_gelu: c.hidden_act == "gelu",
        })
    }

    /// `x`: (batch, seq, hidden); `mask_bias`: (batch, 1, 1, seq), 0 for tokens, -inf-ish for padding.
    fn forward(&self, x: &Tensor, mask_bias: &Tensor) -> Result<Tensor> {
        let (b, s, h) = x.dims3()?;
        let head_dim = h / self.heads;
        let split = |t: Tensor| t.reshape((b, s, self.heads, head_dim))?.transpose(1, 2)?.contiguous();
        let q = split(self.query.forward(x)?)?;
        let k = split(self.key.forward(x)?)?;
        let v = split(self.value.forward(x)?)?;
        let scores =
            (q.matmul(&k.t()?.contiguous()?)? / (head_dim as f64).sqrt())?.broadcast_add(mask_bias)?;
        let probs = candle_nn::ops::softmax_last_dim(&scores)?;
        let context = probs.matmul(&v)?.transpose(1, 2)?.reshape((b, s, h))?;
        let x = self.attention_norm.forward(&self.attention_out.forward(&context)?.add(x)?)?;
        let mid = self.intermediate.forward(&x)?;
        let mid = if self.exact_gelu { mid.gelu_erf()? } else { mid.gelu()? };
        self.output_norm.forward(&self.output.forward(&mid)?.add(&x)?)
    }
}

pub(crate) struct Bert {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl Bert {
    pub fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        // Checkpoints saved from BertForX carry a "bert." prefix; sentence-transformers' do not.
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") { vb } else { vb.pp("bert") };
        let embeddings = Embeddings::load(vb.pp("embeddings"), c)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| Layer::load(vb.pp("encoder").pp("layer").pp(i), c))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self { embeddings, layers })
    }

    /// Mean-pooled (over the attention mask) token states: (batch, hidden). All inputs are
    /// (batch, seq) u32.
    pub fn pooled(&self, ids: &Tensor, type_ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let mask_f = mask.to_dtype(DType::F32)?;
        let (b, s) = mask_f.dims2()?;
        let mask_bias = ((mask_f.ones_like()? - &mask_f)? * -1e9)?.reshape((b, 1, 1, s))?;
        let mut x = self.embeddings.forward(ids, type_ids)?;
        for layer in &self.layers {
            x = layer.forward(&x, &mask_bias)?;
        }
        let weights = mask_f.unsqueeze(2)?; // (b, s, 1)
        let summed = x.broadcast_mul(&weights)?.sum(1)?; // (b, h)
        let counts = weights.sum(1)?.clamp(1e-9, f64::MAX)?; // (b, 1)
        summed.broadcast_div(&counts)
    }
}

/// Rows scaled to unit length.
pub(crate) fn l2_normalize(x: &Tensor) -> Result<Tensor> {
    let norms = x.sqr()?.sum_keepdim(D::Minus1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
    x.broadcast_div(&norms)
}
