//! One loaded model answering chats: render the prompt, evaluate only what the KV cache does not
//! already hold from the previous chat (the shared prefix of a conversation is kept), then sample
//! token by token, streaming each piece, until the model ends its turn, a limit is reached, or
//! the request is cancelled (checked before every token).
//!
//! An answer can also resume: given the tokens an earlier attempt already generated and sent
//! (the graphics card failed mid-answer), it evaluates them after the prompt without sending
//! them again and goes on from there.

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use perch_llm_protocol::wire::{ChatParams, ErrorKind, Reply, RequestId, Stop, Usage};

use crate::Out;
use crate::cancel::Cancels;
use crate::failure::Failure;
use crate::output::{self, Parser, Piece};
use crate::prompt::{Origin, Template};

pub struct Session<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    pub template: Template,
    /// The tokens whose keys and values the context holds, in order.
    cached: Vec<LlamaToken>,
    batch: usize,
    /// `PERCH_LLM_FAIL_GPU=token:N` on a model on the card (`devices::InjectedFailure`).
    fail_at_token: Option<u64>,
    tokens_evaluated: u64,
}

/// A chat that stopped on a failure, with the tokens it had generated (and sent) by then.
pub struct Interrupted {
    pub failure: Failure,
    pub generated: Vec<LlamaToken>,
}

impl From<Failure> for Interrupted {
    fn from(failure: Failure) -> Self {
        Self { failure, generated: Vec::new() }
    }
}

impl<'m> Session<'m> {
    pub fn new(
        model: &'m LlamaModel,
        ctx: LlamaContext<'m>,
        batch: usize,
        fail_at_token: Option<u64>,
    ) -> Self {
        Self {
            template: Template::for_model(model),
            model,
            ctx,
            cached: Vec::new(),
            batch: batch.max(1),
            fail_at_token,
            tokens_evaluated: 0,
        }
    }

    pub fn context_length(&self) -> u32 {
        self.ctx.n_ctx()
    }

    /// Answers one chat, streaming its pieces to `out`; `resume` is what an earlier attempt at
    /// this chat already generated and sent (usually nothing).
    pub fn chat(
        &mut self,
        id: RequestId,
        params: &ChatParams,
        resume: &[LlamaToken],
        cancels: &Cancels,
        out: &mut Out,
    ) -> Result<(Stop, Usage), Interrupted> {
        let started = Instant::now();
        let prompt = self.template.render(self.model, &params.messages, &params.tools, params.think)?;
        let text = prompt.text();
        let vocab = self.model.vocab();
        // Templates that write the BOS token themselves must not get a second one.
        let mut add_bos = self.template.bos.is_empty() || !text.starts_with(&self.template.bos);
        let mut tokens = Vec::new();
        for (piece, origin) in prompt.pieces() {
            tokens.extend(vocab.tokenize(piece.as_bytes(), add_bos, origin == Origin::Template));
            add_bos = false;
        }
        let n_ctx = self.ctx.n_ctx() as usize;
        if tokens.len() + 1 >= n_ctx {
            return Err(Failure::new(
                ErrorKind::ContextTooLong,
                format!("the conversation is {} tokens and the model's context holds {n_ctx}", tokens.len()),
            )
            .into());
        }
        let prompt_tokens = tokens.len();
        tokens.extend_from_slice(resume);
        let cached = self.reuse_prefix(&tokens);
        let mut usage =
            Usage { prompt_tokens: prompt_tokens as u64, cached_tokens: cached as u64, ..Usage::default() };
        for chunk in tokens[cached..].chunks(self.batch) {
            if cancels.is_cancelled(id) {
                usage.prompt_ms = ms(started);
                return Ok((Stop::Cancelled, usage));
            }
            let last = chunk.len() + self.cached.len() == tokens.len();
            self.decode(chunk, last)?;
        }
        usage.prompt_ms = ms(started);

        let generating = Instant::now();
        let format = if params.tools.is_empty() { None } else { self.template.features.tools };
        let opened_thinking = text.trim_end().ends_with("<think>");
        let mut parser = Parser::new(format, opened_thinking);
        let mut sampler = sampler(params);
        let mut utf8 = Vec::new();
        let mut generated = resume.to_vec();
        // What was sent already goes through the parser again (its state is needed: an open
        // thinking block, a tool call half written) but is not sent twice.
        for &token in resume {
            let piece = vocab.token_to_piece(token, true, None);
            let control = vocab.is_control(token) && !output::is_marker(&String::from_utf8_lossy(&piece));
            if !control {
                utf8.extend_from_slice(&piece);
                let _already_sent = parser.push(&take_utf8(&mut utf8));
            }
        }
        usage.output_tokens = resume.len() as u64;
        let limit = params.max_tokens.map_or(usize::MAX, |n| n as usize);
        let stop = loop {
            if cancels.is_cancelled(id) {
                usage.tokens_after_cancel = cancels.tokens_after_cancel(id, usage.output_tokens);
                break Stop::Cancelled;
            }
            let token = sampler.sample(&self.ctx, -1);
            if vocab.is_eog(token) {
                break Stop::EndTurn;
            }
            generated.push(token);
            usage.output_tokens += 1;
            cancels.progress(usage.output_tokens);
            let piece = vocab.token_to_piece(token, true, None);
            let control = vocab.is_control(token) && !output::is_marker(&String::from_utf8_lossy(&piece));
            if !control {
                utf8.extend_from_slice(&piece);
                let text = take_utf8(&mut utf8);
                send(out, id, parser.push(&text));
            }
            if usage.output_tokens as usize >= limit {
                break Stop::MaxTokens;
            }
            if self.cached.len() + 1 >= n_ctx {
                break Stop::ContextFull;
            }
            if let Err(failure) = self.decode(&[token], true) {
                return Err(Interrupted { failure, generated });
            }
        };
        if !utf8.is_empty() {
            send(out, id, parser.push(&String::from_utf8_lossy(&utf8)));
        }
        send(out, id, parser.finish());
        usage.generation_ms = ms(generating);
        let stop = if stop == Stop::EndTurn && parser.calls() > 0 { Stop::ToolUse } else { stop };
        Ok((stop, usage))
    }

    /// Keeps the part of the KV cache that matches the start of `tokens` and drops the rest.
    /// Returns how many tokens are kept (at least one token is always evaluated again, for its
    /// logits).
    fn reuse_prefix(&mut self, tokens: &[LlamaToken]) -> usize {
        let same = self.cached.iter().zip(tokens).take_while(|(a, b)| a == b).count();
        let keep = same.min(tokens.len().saturating_sub(1));
        let removed =
            u32::try_from(keep).ok().and_then(|p| self.ctx.clear_kv_cache_seq(Some(0), Some(p), None).ok());
        if removed == Some(true) {
            self.cached.truncate(keep);
            keep
        } else {
            // Some models' caches cannot drop a suffix (recurrent state): start over.
            self.ctx.clear_kv_cache();
            self.cached.clear();
            0
        }
    }

    fn decode(&mut self, tokens: &[LlamaToken], logits_for_last: bool) -> Result<(), Failure> {
        self.tokens_evaluated += tokens.len() as u64;
        if self.fail_at_token.is_some_and(|n| self.tokens_evaluated >= n) {
            self.fail_at_token = None;
            return Err(Failure::new(ErrorKind::Generation, "the device was lost (PERCH_LLM_FAIL_GPU)"));
        }
        let mut batch = LlamaBatch::new(tokens.len(), 1);
        let start = self.cached.len();
        for (i, token) in tokens.iter().enumerate() {
            let pos = i32::try_from(start + i).unwrap_or(i32::MAX);
            let logits = logits_for_last && i + 1 == tokens.len();
            batch
                .add(*token, pos, &[0], logits)
                .map_err(|e| Failure::new(ErrorKind::Generation, e.to_string()))?;
        }
        self.ctx.decode(&mut batch).map_err(|e| {
            Failure::new(ErrorKind::Generation, format!("llama.cpp could not evaluate the model: {e}"))
        })?;
        self.cached.extend_from_slice(tokens);
        Ok(())
    }
}

/// Top-k 40, top-p 0.95, min-p 0.05 and temperature 0.8 (llama.cpp's defaults), or the most
/// likely token when the temperature is 0.
fn sampler(params: &ChatParams) -> LlamaSampler {
    let temperature = params.temperature.unwrap_or(0.8);
    if temperature <= 0.0 {
        return LlamaSampler::greedy();
    }
    LlamaSampler::chain_simple([
        LlamaSampler::top_k(40),
        LlamaSampler::top_p(0.95, 1),
        LlamaSampler::min_p(0.05, 1),
        LlamaSampler::temp(temperature),
        LlamaSampler::dist(params.seed.unwrap_or(u32::MAX)),
    ])
}

/// The complete characters at the front of `bytes`; a character split across tokens stays for
/// the next piece.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let text = text.to_owned();
            bytes.clear();
            text
        }
        Err(e) if e.error_len().is_none() => {
            let valid = e.valid_up_to();
            let text = String::from_utf8_lossy(&bytes[..valid]).into_owned();
            bytes.drain(..valid);
            text
        }
        Err(_) => String::from_utf8_lossy(&std::mem::take(bytes)).into_owned(),
    }
}

fn send(out: &mut Out, id: RequestId, pieces: Vec<Piece>) {
    for piece in pieces {
        out.send(&match piece {
            Piece::Thinking(text) => Reply::Thinking { id, text },
            Piece::Text(text) => Reply::Text { id, text },
            Piece::ToolCall(call) => Reply::ToolCall { id, call },
        });
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::take_utf8;

    #[test]
    fn characters_split_across_tokens_arrive_whole() {
        let euro = "€".as_bytes();
        let mut bytes = euro[..2].to_vec();
        assert_eq!(take_utf8(&mut bytes), "");
        bytes.extend_from_slice(&euro[2..]);
        bytes.extend_from_slice(b"5");
        assert_eq!(take_utf8(&mut bytes), "€5");
        assert!(bytes.is_empty());
        let mut broken = vec![b'a', 0xff, b'b'];
        assert_eq!(take_utf8(&mut broken), "a\u{fffd}b");
    }
}
