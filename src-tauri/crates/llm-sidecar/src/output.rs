//! Splits a model's streamed output into reasoning, answer text and tool calls, piece by piece.
//! Text that might be the start of a marker (`<thi` of `<think>`) is held back until the next
//! piece decides it, so markers never leak into the answer and the answer is never delayed
//! by more than a marker's length.

use perch_llm_protocol::template::ToolFormat;
use perch_llm_protocol::wire::ToolCall;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Thinking(String),
    Text(String),
    ToolCall(ToolCall),
}

const THINK: &str = "<think>";
const END_THINK: &str = "</think>";
const TOOL_CALL: &str = "<tool_call>";
const END_TOOL_CALL: &str = "</tool_call>";
const MISTRAL_CALLS: &str = "[TOOL_CALLS]";
const PYTHON_TAG: &str = "<|python_tag|>";

/// Tokens rendered as text although llama.cpp calls them control tokens: the markers above.
pub fn is_marker(text: &str) -> bool {
    [THINK, END_THINK, TOOL_CALL, END_TOOL_CALL, MISTRAL_CALLS, PYTHON_TAG].contains(&text)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Answer,
    Thinking,
    /// Inside `<tool_call>...</tool_call>`.
    HermesCall,
    /// Everything to the end is tool calls (Mistral's list, Llama's JSON).
    CallsToEnd,
}

pub struct Parser {
    format: Option<ToolFormat>,
    state: State,
    held: String,
    call: String,
    /// Skip whitespace at the start of the next text (after `<think>` or `</think>`).
    trim_start: bool,
    /// Some answer text was already sent (Llama's JSON calls only count at the start).
    answered: bool,
    calls: usize,
}

impl Parser {
    /// `format` is the tool-call format when tools were offered; `thinking` when the prompt
    /// already opened a `<think>` block.
    pub fn new(format: Option<ToolFormat>, thinking: bool) -> Self {
        let state = if thinking { State::Thinking } else { State::Answer };
        Self {
            format,
            state,
            held: String::new(),
            call: String::new(),
            trim_start: thinking,
            answered: false,
            calls: 0,
        }
    }

    /// How many tool calls were found.
    pub fn calls(&self) -> usize {
        self.calls
    }

    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        self.held.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.trim_start {
                let trimmed = self.held.trim_start();
                if trimmed.is_empty() {
                    self.held.clear();
                    return out;
                }
                self.held = trimmed.to_owned();
                self.trim_start = false;
            }
            if self.state == State::Answer && !self.answered && self.format == Some(ToolFormat::LlamaJson) {
                let start = self.held.trim_start();
                if start.starts_with('{') {
                    self.held = start.to_owned();
                    self.state = State::CallsToEnd;
                    continue;
                }
                if start.is_empty() {
                    return out;
                }
                if !PYTHON_TAG.starts_with(start) && !start.starts_with(PYTHON_TAG) {
                    self.answered = true;
                }
            }
            let markers: &[&str] = match (self.state, self.format) {
                (State::Answer, Some(ToolFormat::Hermes)) => &[THINK, TOOL_CALL],
                (State::Answer, Some(ToolFormat::Mistral)) => &[THINK, MISTRAL_CALLS],
                (State::Answer, Some(ToolFormat::LlamaJson)) => &[THINK, PYTHON_TAG],
                (State::Answer, None) => &[THINK],
                (State::Thinking, _) => &[END_THINK],
                (State::HermesCall, _) => &[END_TOOL_CALL],
                (State::CallsToEnd, _) => {
                    self.call.push_str(&std::mem::take(&mut self.held));
                    return out;
                }
            };
            match earliest(&self.held, markers) {
                Some((at, marker)) => {
                    let before: String = self.held[..at].to_owned();
                    self.held.drain(..at + marker.len());
                    self.emit(before, &mut out);
                    self.enter(marker, &mut out);
                }
                None => {
                    let keep = held_back(&self.held, markers);
                    let ready: String = self.held[..self.held.len() - keep].to_owned();
                    self.held.drain(..self.held.len() - keep);
                    self.emit(ready, &mut out);
                    return out;
                }
            }
        }
    }

    /// The end of the output: whatever is held is sent, and unfinished calls are parsed.
    pub fn finish(&mut self) -> Vec<Piece> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.held);
        match self.state {
            State::Answer | State::Thinking => self.emit(rest, &mut out),
            State::HermesCall | State::CallsToEnd => {
                self.call.push_str(&rest);
                let text = std::mem::take(&mut self.call);
                self.calls_from(&text, &mut out);
            }
        }
        out
    }

    fn emit(&mut self, text: String, out: &mut Vec<Piece>) {
        if text.is_empty() {
            return;
        }
        match self.state {
            State::Thinking => out.push(Piece::Thinking(text)),
            State::HermesCall | State::CallsToEnd => self.call.push_str(&text),
            State::Answer => {
                if !text.trim().is_empty() {
                    self.answered = true;
                }
                out.push(Piece::Text(text));
            }
        }
    }

    fn enter(&mut self, marker: &str, out: &mut Vec<Piece>) {
        match marker {
            THINK => {
                self.state = State::Thinking;
                self.trim_start = true;
            }
            END_THINK => {
                // Trailing whitespace of the reasoning was sent already; the answer starts clean.
                self.state = State::Answer;
                self.trim_start = true;
            }
            TOOL_CALL => self.state = State::HermesCall,
            END_TOOL_CALL => {
                let text = std::mem::take(&mut self.call);
                self.calls_from(&text, out);
                self.state = State::Answer;
                self.trim_start = true;
            }
            _ => self.state = State::CallsToEnd,
        }
    }

    /// Tool calls from JSON: one object, a list, or objects separated by `;` or new lines. Text
    /// that is none of these is sent as answer text instead, so nothing the model wrote is lost.
    fn calls_from(&mut self, text: &str, out: &mut Vec<Piece>) {
        let mut calls = Vec::new();
        let mut ok = true;
        for part in split_top_level(text.trim()).into_iter().map(str::trim).filter(|p| !p.is_empty()) {
            let values = match serde_json::from_str::<Value>(part) {
                Ok(Value::Array(items)) => items,
                Ok(value) => vec![value],
                Err(_) => Vec::new(),
            };
            for value in &values {
                match self.call_from(value, calls.len()) {
                    Some(call) => calls.push(call),
                    None => ok = false,
                }
            }
            ok &= !values.is_empty();
        }
        if ok && !calls.is_empty() {
            self.calls += calls.len();
            out.extend(calls.into_iter().map(Piece::ToolCall));
        } else {
            out.push(Piece::Text(text.to_owned()));
        }
    }

    fn call_from(&self, value: &Value, earlier: usize) -> Option<ToolCall> {
        let object = value.as_object()?;
        let function = object.get("function").and_then(Value::as_object).unwrap_or(object);
        let name = function.get("name")?.as_str()?.to_owned();
        let arguments =
            function.get("arguments").or_else(|| function.get("parameters")).cloned().unwrap_or(Value::Null);
        // Some models write the arguments as a JSON string.
        let arguments = match arguments {
            Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
            Value::Null => Value::Object(Default::default()),
            other => other,
        };
        let id = object
            .get("id")
            .and_then(Value::as_str)
            .map_or_else(|| format!("call_{}", self.calls + earlier + 1), str::to_owned);
        Some(ToolCall { id, name, arguments })
    }
}

/// The first marker in `text`, by position.
fn earliest<'m>(text: &str, markers: &[&'m str]) -> Option<(usize, &'m str)> {
    markers.iter().filter_map(|m| text.find(m).map(|at| (at, *m))).min_by_key(|(at, _)| *at)
}

/// Bytes at the end of `text` that could be the start of a marker.
fn held_back(text: &str, markers: &[&str]) -> usize {
    markers.iter().flat_map(|m| (1..m.len()).filter(move |n| text.ends_with(&m[..*n]))).max().unwrap_or(0)
}

/// Splits `a; b` or `a\nb` between top-level JSON values, respecting strings and nesting.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0i32, false, false, 0usize);
    for (i, c) in text.char_indices() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ';' | '\n' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests;
