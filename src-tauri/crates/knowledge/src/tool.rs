//! `search_knowledge`, the built-in tool the model searches the user's folders with. Listed
//! only while a folder is indexed; it reads and changes nothing outside the index, so it is
//! never asked about. The answer cites each passage as [`path:start-end`][], the form Perch's
//! chat turns into a link that opens the editor at the line; the card gets the passages as
//! its structured result.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use perch_tools::{BuiltinServer, CallError, CallOrigin, Progress, ToolOutput, ToolView, Vetting};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::{Knowledge, Retrieval};

/// The server's name, as tools are qualified (`knowledge__search_knowledge`).
pub const SERVER: &str = "knowledge";
pub const TOOL: &str = "search_knowledge";
/// Passages a call returns unless it asks for fewer or more (at most [`MOST`]).
const DEFAULT_K: usize = 6;
const MOST: usize = 20;

/// Where the server finds the index: it may not exist yet (no folder added) or go away (the
/// last folder removed), and it may need readying before a search (the embedding model loaded).
pub trait KnowledgeSource: Send + Sync {
    fn index(&self) -> Option<Arc<Knowledge>>;
    fn ready(&self) -> BoxFuture<'_, ()>;
}

/// An index that is always there, as it is.
pub struct Fixed(pub Arc<Knowledge>);

impl KnowledgeSource for Fixed {
    fn index(&self) -> Option<Arc<Knowledge>> {
        Some(self.0.clone())
    }

    fn ready(&self) -> BoxFuture<'_, ()> {
        async {}.boxed()
    }
}

pub struct KnowledgeServer {
    source: Arc<dyn KnowledgeSource>,
}

impl KnowledgeServer {
    pub fn new(source: Arc<dyn KnowledgeSource>) -> Self {
        Self { source }
    }

    /// The tool as the model sees it, naming the folders it searches.
    fn view(&self, folders: &[String]) -> ToolView {
        ToolView {
            name: TOOL.to_owned(),
            title: Some("Search your folders".to_owned()),
            description: format!(
                "Search the user's own files (indexed on this computer: {}) for passages about a question, \
                 by words and by meaning. Each passage comes with its place, written [`path:start-end`][] \
                 (a PDF's: its path and page); cite every place you used in your answer exactly as written \
                 (the chat makes it a link that opens the file at that line).",
                folders.join(", ")
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "What to look for, in words" },
                    "limit": { "type": "integer", "description": "How many passages (default 6, at most 20)" }
                },
                "required": ["query"]
            }),
            read_only: true,
            destructive: false,
            harmless_when: None,
            ui: None,
        }
    }
}

impl BuiltinServer for KnowledgeServer {
    fn name(&self) -> &'static str {
        SERVER
    }

    fn tools(&self) -> Vec<ToolView> {
        // Asked at every turn: the paths only, not the counts.
        match self.source.index().map(|k| k.folder_paths()) {
            Some(Ok(folders)) if !folders.is_empty() => {
                let names: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
                vec![self.view(&names)]
            }
            _ => Vec::new(),
        }
    }

    fn vet<'a>(&'a self, _: &'a CallOrigin, _: &'a str, _: &'a Value) -> BoxFuture<'a, Vetting> {
        async { Vetting::NoQuestion }.boxed()
    }

    fn call<'a>(
        &'a self,
        _: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        _: &'a CancellationToken,
        _: Option<mpsc::UnboundedSender<Progress>>,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        async move {
            if tool != TOOL {
                return Err(CallError::UnknownTool { server: SERVER.into(), tool: tool.into() });
            }
            let Some(query) = arguments.get("query").and_then(Value::as_str).filter(|q| !q.trim().is_empty())
            else {
                return Ok(ToolOutput::error("search_knowledge needs a query: what to look for, in words"));
            };
            let limit = arguments.get("limit").and_then(Value::as_u64).map_or(DEFAULT_K, |n| n as usize);
            self.source.ready().await;
            let Some(knowledge) = self.source.index() else {
                return Ok(ToolOutput::error(
                    "No folder is indexed: add one in Settings -> Tools -> Knowledge folders",
                ));
            };
            let query = query.to_owned();
            let found = tokio::task::spawn_blocking(move || knowledge.search(&query, limit.clamp(1, MOST)))
                .await
                .map_err(|e| CallError::Protocol { server: SERVER.into(), message: e.to_string() })?;
            Ok(match found {
                Ok(search) => answer(&search),
                Err(e) => ToolOutput::error(format!("The search failed: {e}")),
            })
        }
        .boxed()
    }
}

/// The model's text (each passage under its citation) and the card's passages.
fn answer(search: &crate::Search) -> ToolOutput {
    if search.passages.is_empty() {
        return ToolOutput {
            text: "Nothing in the user's folders matches. Say so rather than guessing.".into(),
            structured: Some(json!({ "passages": [], "retrieval": search.retrieval })),
            ..ToolOutput::default()
        };
    }
    let mut text = String::new();
    if let Retrieval::Lexical(why) = &search.retrieval {
        text.push_str(&format!("(Matched by words only: {why}.)\n\n"));
    }
    for passage in &search.passages {
        let fence = if passage.text.contains("```") { "~~~~" } else { "```" };
        // A PDF's place is its page, cited in words: a link opens the editor at a line.
        let place = if passage.is_pdf() {
            format!("`{}`, page {}", passage.path.display(), passage.start)
        } else if passage.heading.is_empty() {
            format!("[`{}`][]", passage.citation())
        } else {
            format!("[`{}`][] ({})", passage.citation(), passage.heading)
        };
        text.push_str(&format!("{place}\n{fence}\n{}\n{fence}\n\n", passage.text));
    }
    let passages: Vec<Value> = search
        .passages
        .iter()
        .map(|p| {
            json!({
                "path": p.path, "start": p.start, "end": p.end, "heading": p.heading,
                "citation": p.citation(), "score": p.score,
                "pdf": p.is_pdf(),
            })
        })
        .collect();
    ToolOutput {
        text: text.trim_end().to_owned(),
        structured: Some(json!({ "passages": passages, "retrieval": search.retrieval })),
        ..ToolOutput::default()
    }
}
