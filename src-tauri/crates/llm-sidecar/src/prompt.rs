//! The prompt: the chat rendered with the model's own Jinja chat template (from the GGUF's
//! `tokenizer.chat_template`), as Hugging Face's tokenizers and llama.cpp's server render it:
//! `messages`, `tools`, `add_generation_prompt`, `bos_token`, `eos_token`, `enable_thinking`,
//! blocks trimmed, Python string methods available. A file without a template gets ChatML.
//! A template MiniJinja cannot run falls back to llama.cpp's built-in templates (without
//! tools), so an unusual template costs tools, not the model.
//!
//! Text from the conversation (a web page, a file, a tool's result) must never become a role
//! boundary: each message's content enters the template wrapped in two private-use markers, as
//! does every string of the tool definitions and tool calls (names, descriptions, arguments)
//! that could spell a special token, and the rendered prompt is tokenized piece by piece,
//! special tokens parsed only in the template's own text (see [`Prompt`]).

use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use minijinja::syntax::SyntaxConfig;
use minijinja::{Environment, Error, ErrorKind as JinjaError, context};
use perch_llm_protocol::template::{self, TemplateFeatures};
use perch_llm_protocol::wire::{ErrorKind, Message, Role, TemplateSource};
use serde_json::{Value, json};

use crate::failure::Failure;

const CHATML: &str = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

pub struct Template {
    pub source: TemplateSource,
    pub features: TemplateFeatures,
    text: String,
    env: Environment<'static>,
    /// llama.cpp's handle on the same template, for the fallback.
    builtin: Option<LlamaChatTemplate>,
    pub bos: String,
    eos: String,
}

impl Template {
    pub fn for_model(model: &LlamaModel) -> Self {
        let own = model.meta_val_str("tokenizer.chat_template").ok().filter(|t| !t.trim().is_empty());
        let (source, text) = match own {
            Some(text) => (TemplateSource::Model, text),
            None => (TemplateSource::ChatMl, CHATML.to_owned()),
        };
        let vocab = model.vocab();
        let token_text = |t| String::from_utf8_lossy(&vocab.token_to_piece(t, true, None)).into_owned();
        let mut template = Self::from_text(source, text, token_text(vocab.bos()), token_text(vocab.eos()));
        template.builtin = model.chat_template(None).ok();
        template
    }

    pub fn from_text(source: TemplateSource, text: String, bos: String, eos: String) -> Self {
        Self {
            source,
            features: template::features(&text),
            builtin: None,
            env: environment(),
            bos,
            eos,
            text,
        }
    }

    /// The prompt for `messages`, ending where the assistant's answer begins.
    pub fn render(
        &self,
        model: &LlamaModel,
        messages: &[Message],
        tools: &[Value],
        think: bool,
    ) -> Result<Prompt, Failure> {
        let rendered = match self.render_jinja(messages, tools, think) {
            Ok(prompt) => Ok(prompt),
            // The template itself refused these messages (`raise_exception`): say why.
            Err(e) if e.kind() == JinjaError::InvalidOperation => Err(Failure::new(
                ErrorKind::Template,
                format!("the model's chat template refused this conversation: {}", e.detail().unwrap_or("")),
            )),
            Err(e) => {
                tracing::warn!(error = %e, "the chat template did not render; using llama.cpp's built-in templates without tools");
                let messages: Vec<Value> = messages.iter().map(as_template_message).collect();
                self.builtin_render(model, &messages_without_tools(&messages))
            }
        };
        rendered.map(|marked| Prompt { marked })
    }

    /// The prompt from the Jinja template alone.
    fn render_jinja(&self, messages: &[Message], tools: &[Value], think: bool) -> Result<String, Error> {
        let messages: Vec<Value> = messages.iter().map(as_template_message).collect();
        // A tool's description comes from whichever server offers it.
        let tools: Vec<Value> = tools.iter().map(json_as_data).collect();
        let ctx = context! {
            messages => minijinja::Value::from(minijinja::value::Serde(&messages)),
            tools => (!tools.is_empty()).then(|| minijinja::Value::from(minijinja::value::Serde(&tools))),
            add_generation_prompt => true,
            bos_token => &self.bos,
            eos_token => &self.eos,
            enable_thinking => think,
        };
        self.env.render_str(&self.text, ctx)
    }

    fn builtin_render(&self, model: &LlamaModel, messages: &[(String, String)]) -> Result<String, Failure> {
        let failed = |e: String| {
            Failure::new(ErrorKind::Template, format!("the chat template could not be applied: {e}"))
        };
        let Some(template) = &self.builtin else {
            return Err(failed("the model has no template llama.cpp knows".into()));
        };
        let chat: Vec<LlamaChatMessage> = messages
            .iter()
            .map(|(role, content)| LlamaChatMessage::new(role.clone(), content.clone()))
            .collect::<Result<_, _>>()
            .map_err(|e| failed(e.to_string()))?;
        model.apply_chat_template(template, &chat, true).map_err(|e| failed(e.to_string()))
    }
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    if let Ok(syntax) = SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build() {
        env.set_syntax(syntax);
    }
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function("raise_exception", |message: String| -> Result<String, Error> {
        Err(Error::new(JinjaError::InvalidOperation, message))
    });
    env.add_function("strftime_now", |format: String| chrono::Local::now().format(&format).to_string());
    env
}

/// A message as chat templates expect it (OpenAI's shape, arguments as objects), its text marked
/// as data. A call's name and arguments are the model's, and may repeat what a page told it.
fn as_template_message(m: &Message) -> Value {
    let role = match m.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut v = json!({ "role": role, "content": as_data(&m.content) });
    if !m.tool_calls.is_empty() {
        v["tool_calls"] = m
            .tool_calls
            .iter()
            .map(|c| {
                let function = json!({ "name": c.name, "arguments": c.arguments });
                json!({ "id": json_as_data(&json!(c.id)), "type": "function", "function": json_as_data(&function) })
            })
            .collect();
    }
    if let Some(id) = &m.tool_call_id {
        v["tool_call_id"] = json_as_data(&json!(id));
    }
    if let Some(name) = &m.name {
        v["name"] = json_as_data(&json!(name));
    }
    v
}

/// Role and text of each message, for templates that know nothing of tools: tool calls and
/// results become plain text.
fn messages_without_tools(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or("user");
            let mut content = m["content"].as_str().unwrap_or_default().to_owned();
            if let Some(calls) = m.get("tool_calls") {
                content.push_str(&format!("\n{calls}"));
            }
            match role {
                "tool" => ("user".to_owned(), format!("Tool result: {content}")),
                other => (other.to_owned(), content),
            }
        })
        .collect()
}

/// Starts and ends a stretch of conversation text in a rendered prompt (Unicode private use:
/// no tokenizer or template gives them a meaning, and they are removed from the text itself).
const DATA_START: char = '\u{E000}';
const DATA_END: char = '\u{E001}';

/// A message's text, marked as data for the template. The whitespace around it stays outside
/// the markers, so a template's `trim` or `strip()` still works; text that is only whitespace
/// (or empty) stays as it is, so `if message.content` still sees nothing there.
fn as_data(text: &str) -> String {
    let core = text.trim();
    if core.is_empty() {
        return text.to_owned();
    }
    let lead = &text[..text.len() - text.trim_start().len()];
    let trail = &text[text.trim_end().len()..];
    let clean: String = core
        .chars()
        .map(|c| if c == DATA_START || c == DATA_END { char::REPLACEMENT_CHARACTER } else { c })
        .collect();
    format!("{lead}{DATA_START}{clean}{DATA_END}{trail}")
}

/// `value` with each string marked as data ([`as_data`]), object keys included, except plain
/// names (`type`, `properties`, `city`, `call_1`): templates look those up and compare them
/// (`tool.function.name`, `param.type == "string"`, an id's length), and no special token is
/// spelled with letters, digits, `_`, `-` and `.` alone.
fn json_as_data(value: &Value) -> Value {
    let mark = |text: &str| {
        let plain = !text.is_empty()
            && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if plain { text.to_owned() } else { as_data(text) }
    };
    match value {
        Value::String(text) => Value::String(mark(text)),
        Value::Array(items) => items.iter().map(json_as_data).collect(),
        Value::Object(fields) => fields.iter().map(|(key, v)| (mark(key), json_as_data(v))).collect(),
        other => other.clone(),
    }
}

/// Where a piece of the prompt came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The chat template's own text: `<|im_start|>` there is the special token.
    Template,
    /// The conversation's text: `<|im_start|>` there is eleven characters.
    Data,
}

/// A rendered prompt whose pieces know their origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    marked: String,
}

impl Prompt {
    /// The prompt's text as the model reads it.
    pub fn text(&self) -> String {
        self.marked.chars().filter(|&c| c != DATA_START && c != DATA_END).collect()
    }

    /// The prompt in order, each piece with its origin. A template that cut a message apart
    /// (a `split` losing one of its markers) is read cautiously: an end marker with no start
    /// makes everything since the previous piece data, and a start with no end runs to the end.
    pub fn pieces(&self) -> Vec<(&str, Origin)> {
        let mut pieces: Vec<(&str, Origin)> = Vec::new();
        let (mut start, mut inside) = (0, false);
        for (at, c) in self.marked.char_indices() {
            match (c, inside) {
                (DATA_START, false) => {
                    pieces.push((&self.marked[start..at], Origin::Template));
                    (start, inside) = (at + c.len_utf8(), true);
                }
                (DATA_END, _) => {
                    pieces.push((&self.marked[start..at], Origin::Data));
                    (start, inside) = (at + c.len_utf8(), false);
                }
                // A second start inside data: the text stays data, the marker goes.
                (DATA_START, true) => {
                    pieces.push((&self.marked[start..at], Origin::Data));
                    start = at + c.len_utf8();
                }
                _ => {}
            }
        }
        pieces.push((&self.marked[start..], if inside { Origin::Data } else { Origin::Template }));
        pieces.retain(|(text, _)| !text.is_empty());
        pieces
    }
}

#[cfg(test)]
mod tests;
