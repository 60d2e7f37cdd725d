//! The conversation as it continues: regenerated answers and edited questions are kept in
//! the database as alternatives, and the newest of each group is the one that counts.

use std::collections::HashMap;

use serde::Serialize;

use crate::prices::Price;
use crate::store::{Attachment, Conversation, ConversationDetail, Message, Role};

/// A conversation as the chat shows it: the visible thread, each message with the other
/// versions of it (older answers, earlier wordings) and its attachments.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ConversationView {
    pub conversation: Conversation,
    /// The key of the conversation's model, to find it among listed models however it was
    /// spelled (`ollama:llama3.2` is the listed `ollama:llama3.2:latest`).
    pub model_key: Option<String>,
    pub messages: Vec<MessageView>,
    /// USD for the whole conversation's priced answers, when any were priced.
    pub cost: Option<f64>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct MessageView {
    pub message: Message,
    /// Every version of this message, oldest first (empty when there is only one).
    pub versions: Vec<Message>,
    pub attachments: Vec<Attachment>,
    /// The tools this answer called, in order (placed in its text by `text_offset`); the calls
    /// apps made from its cards are read by each card (`Store::app_calls`).
    pub tool_calls: Vec<crate::store::tool_calls::ToolCallRecord>,
    /// The memories this answer was given, as their text was then.
    pub memories: Vec<String>,
    /// USD for this answer's tokens, for priced (cloud) models.
    pub cost: Option<f64>,
}

pub fn view(detail: &ConversationDetail, attachments: &[Attachment], prices: &[Price]) -> ConversationView {
    let groups = alternatives(&detail.messages);
    let cost_of = |m: &Message| {
        let (model, input, output) = (m.model.as_deref()?, m.input_tokens?, m.output_tokens?);
        crate::prices::cost(prices, model, input.max(0) as u64, output.max(0) as u64)
    };
    let messages: Vec<MessageView> = visible(&detail.messages)
        .into_iter()
        .map(|m| MessageView {
            message: m.clone(),
            versions: groups
                .get(&group_of(m))
                .map(|g| g.iter().map(|v| (*v).clone()).collect())
                .unwrap_or_default(),
            attachments: attachments.iter().filter(|a| a.message_id == m.id).cloned().collect(),
            tool_calls: detail
                .tool_calls
                .iter()
                .filter(|c| c.message_id == m.id && c.app_of.is_none())
                .cloned()
                .collect(),
            memories: memories_of(detail, m.id),
            cost: cost_of(m),
        })
        .collect();
    // Every answer costs, including the replaced ones.
    let costs: Vec<f64> = detail.messages.iter().filter_map(cost_of).collect();
    let cost = (!costs.is_empty()).then(|| costs.iter().sum());
    let model_key = detail.conversation.model.as_deref().map(crate::providers::model_key);
    ConversationView { conversation: detail.conversation.clone(), model_key, messages, cost }
}

fn memories_of(detail: &ConversationDetail, message_id: i64) -> Vec<String> {
    detail.memories_used.iter().filter(|u| u.message_id == message_id).map(|u| u.text.clone()).collect()
}

/// The visible thread as a Markdown document, with everything the chat shows: each question's
/// images and attached files, each answer's thinking (folded), and its tool and terminal calls
/// in the place they happened in its text, with their arguments and results. `image_link` gives
/// the link an image attachment is written with (`None` leaves it out, named).
pub fn to_markdown(
    detail: &ConversationDetail,
    attachments: &[Attachment],
    image_link: &dyn Fn(&Attachment) -> Option<String>,
) -> String {
    let title =
        if detail.conversation.title.is_empty() { "Conversation" } else { &detail.conversation.title };
    let mut out = format!("# {title}\n");
    for m in visible(&detail.messages) {
        let who = match m.role {
            Role::User => "You".to_owned(),
            Role::Assistant => m.model.clone().unwrap_or_else(|| "Assistant".into()),
            Role::System => "System".into(),
            Role::Tool => "Tool".into(),
        };
        out.push_str(&format!("\n## {who}\n\n"));
        for (i, a) in attachments.iter().filter(|a| a.message_id == m.id).enumerate() {
            match (a.kind.as_str(), a.name.as_deref()) {
                ("file", Some(name)) => out.push_str(&format!("Attached file: `{name}`\n\n")),
                ("file", None) => {}
                _ => match image_link(a) {
                    Some(link) => out.push_str(&format!("![image {}]({link})\n\n", i + 1)),
                    None => out.push_str(&format!("(image {}: {}, {} bytes)\n\n", i + 1, a.mime, a.bytes)),
                },
            }
        }
        let memories = memories_of(detail, m.id);
        if !memories.is_empty() {
            out.push_str("Memories given to this answer:\n\n");
            for memory in memories {
                out.push_str(&format!("- {memory}\n"));
            }
            out.push('\n');
        }
        if let Some(thinking) = m.thinking.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            out.push_str(&format!("<details><summary>Thinking</summary>\n\n{thinking}\n\n</details>\n\n"));
        }
        // The text, cut where each call happened (its offset counts characters).
        let chars: Vec<char> = m.content.chars().collect();
        let mut at = 0usize;
        let (by_apps, mut calls): (Vec<_>, Vec<_>) =
            detail.tool_calls.iter().filter(|c| c.message_id == m.id).partition(|c| c.app_of.is_some());
        calls.sort_by_key(|c| (c.text_offset, c.round, c.created_at));
        for call in calls {
            let upto = (call.text_offset as usize).clamp(at, chars.len());
            push_text(&mut out, &chars[at..upto].iter().collect::<String>());
            at = upto;
            out.push_str(&tool_call_markdown(call));
            // What the card's app ran, right after it (saved in the order they ran).
            for by_app in by_apps.iter().filter(|c| c.app_of.as_deref() == Some(call.id.as_str())) {
                out.push_str(&tool_call_markdown(by_app));
            }
        }
        push_text(&mut out, &chars[at..].iter().collect::<String>());
    }
    out
}

fn push_text(out: &mut String, text: &str) {
    let text = text.trim();
    if !text.is_empty() {
        out.push_str(text);
        out.push_str("\n\n");
    }
}

/// A fence longer than any run of backticks in `text`, so a result holding ``` stays inside.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

fn tool_call_markdown(call: &crate::store::tool_calls::ToolCallRecord) -> String {
    use crate::store::tool_calls::ToolCallStatus;
    let status = match call.status {
        ToolCallStatus::Done => "",
        ToolCallStatus::Error => " (failed)",
        ToolCallStatus::Denied => " (denied)",
        ToolCallStatus::Cancelled => " (stopped)",
        ToolCallStatus::NeedsSignIn => " (needed a sign-in)",
        ToolCallStatus::Pending | ToolCallStatus::Running => " (did not finish)",
    };
    let mut out = match (call.server.as_str(), call.tool.as_str(), call.arguments.get("command")) {
        ("terminal", "run_command", Some(serde_json::Value::String(command))) => {
            let f = fence(command);
            format!("**Terminal**{status}\n\n{f}sh\n$ {command}\n{f}\n\n")
        }
        _ => {
            let args = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
            let f = fence(&args);
            let by = if call.app_of.is_some() { ", called by the app above" } else { "" };
            format!("**Tool `{}:{}`**{by}{status}\n\n{f}json\n{args}\n{f}\n\n", call.server, call.tool)
        }
    };
    if let Some(output) = call.output.as_ref().filter(|o| !o.text.trim().is_empty()) {
        let f = fence(&output.text);
        out.push_str(&format!("Result:\n\n{f}\n{}\n{f}\n\n", output.text.trim_end()));
    }
    if let Some(told) = call.app_context.as_deref() {
        let f = fence(told);
        out.push_str(&format!("What its app told the model:\n\n{f}\n{told}\n{f}\n\n"));
    }
    out
}

/// Writes a conversation to `path` as Markdown, its images copied beside it into
/// `<name>_files/` and linked from there, so the file opens whole anywhere.
pub async fn export(agent: &super::Agent, id: &str, path: &std::path::Path) -> Result<(), ExportError> {
    let store = agent.store();
    let detail = store.conversation(id).await?;
    let attachments = store.attachments(&detail.conversation.id).await?;
    let stem =
        path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "conversation".into());
    let folder_name = format!("{stem}_files");
    let folder = path.with_file_name(&folder_name);
    let source = agent.data_dir().attachments_dir();
    let images: Vec<&Attachment> = attachments.iter().filter(|a| a.kind != "file").collect();
    if !images.is_empty() {
        // Beside the file, never creating the folder the user picked it in.
        match tokio::fs::create_dir(&folder).await {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(ExportError::io(path, e)),
            _ => {}
        }
    }
    // Each copied image's link, by attachment id; a missing image is named instead of linked.
    let mut links = HashMap::new();
    for a in &images {
        let file = std::path::Path::new(&a.path)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        match tokio::fs::copy(source.join(&a.path), folder.join(&file)).await {
            Ok(_) => {
                links.insert(a.id, format!("{}/{file}", folder_name.replace(' ', "%20")));
            }
            Err(e) => tracing::warn!(error = %e, file, "an image of the conversation could not be copied"),
        }
    }
    let markdown = to_markdown(&detail, &attachments, &|a| links.get(&a.id).cloned());
    tokio::fs::write(path, markdown).await.map_err(|e| ExportError::io(path, e))
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{path} could not be written: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
}

impl ExportError {
    fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io { path: path.to_path_buf(), source }
    }
}

/// The group a message belongs to: its own id, or the first message it is an alternative to.
pub fn group_of(m: &Message) -> i64 {
    m.alternative_of.unwrap_or(m.id)
}

/// The messages the conversation continues from, in order. A message replaced by a newer
/// alternative drops out, and so do the answers to a replaced question.
pub fn visible(messages: &[Message]) -> Vec<&Message> {
    let mut newest: HashMap<i64, i64> = HashMap::new();
    for m in messages {
        let entry = newest.entry(group_of(m)).or_insert(m.id);
        *entry = (*entry).max(m.id);
    }
    let mut out = Vec::new();
    let mut skipping_answers = false;
    for m in messages {
        let current = newest.get(&group_of(m)) == Some(&m.id);
        match m.role {
            Role::User => {
                skipping_answers = !current;
                if current {
                    out.push(m);
                }
            }
            _ if skipping_answers => {}
            _ if current => out.push(m),
            _ => {}
        }
    }
    out
}

/// Alternatives of each group with more than one member, oldest first (for the UI's pager).
pub fn alternatives(messages: &[Message]) -> HashMap<i64, Vec<&Message>> {
    let mut groups: HashMap<i64, Vec<&Message>> = HashMap::new();
    for m in messages {
        groups.entry(group_of(m)).or_default().push(m);
    }
    groups.retain(|_, members| members.len() > 1);
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: i64, role: Role, alternative_of: Option<i64>) -> Message {
        Message {
            id,
            conversation_id: "c".into(),
            created_at: id,
            alternative_of,
            ..Message::unsaved(role, format!("m{id}"))
        }
    }

    fn ids(ms: &[Message]) -> Vec<i64> {
        visible(ms).iter().map(|m| m.id).collect()
    }

    #[test]
    fn a_regenerated_answer_replaces_the_old_one() {
        let ms = [msg(1, Role::User, None), msg(2, Role::Assistant, None), msg(3, Role::Assistant, Some(2))];
        assert_eq!(ids(&ms), [1, 3]);
        let again = [ms[0].clone(), ms[1].clone(), ms[2].clone(), msg(4, Role::Assistant, Some(2))];
        assert_eq!(ids(&again), [1, 4]);
        assert_eq!(alternatives(&again)[&2].len(), 3);
    }

    #[test]
    fn an_edited_question_drops_the_old_question_and_its_answer() {
        let ms = [
            msg(1, Role::User, None),
            msg(2, Role::Assistant, None),
            msg(3, Role::User, None),
            msg(4, Role::Assistant, None),
            msg(5, Role::User, Some(3)),
            msg(6, Role::Assistant, None),
        ];
        assert_eq!(ids(&ms), [1, 2, 5, 6]);
    }

    #[test]
    fn markdown_keeps_images_files_thinking_and_calls_where_they_happened() {
        use crate::mcp::ToolOutput;
        use crate::store::tool_calls::{ToolCallRecord, ToolCallStatus};
        let mut question = msg(1, Role::User, None);
        question.content = "What is in the log?".into();
        let mut answer = msg(2, Role::Assistant, None);
        answer.content = "Let me look. The log has three errors.".into();
        answer.thinking = Some("Read the file first.".into());
        answer.model = Some("ollama:qwen3".into());
        let call = |id: &str, offset: u32, server: &str, tool: &str, args: serde_json::Value, out: &str| {
            ToolCallRecord {
                id: id.into(),
                call_id: id.into(),
                message_id: 2,
                round: 0,
                text_offset: offset,
                server: server.into(),
                tool: tool.into(),
                arguments: args,
                status: ToolCallStatus::Done,
                output: Some(ToolOutput { text: out.into(), ..ToolOutput::default() }),
                duration_ms: Some(5),
                created_at: 0,
                app_of: None,
                app_context: None,
            }
        };
        let detail = ConversationDetail {
            conversation: Conversation {
                id: "c".into(),
                title: "Logs".into(),
                model: None,
                created_at: 0,
                updated_at: 0,
                input_tokens: 0,
                output_tokens: 0,
                message_count: 2,
            },
            messages: vec![question, answer],
            memories_used: vec![crate::store::MemoryUse {
                message_id: 2,
                memory_id: None,
                text: "The user's logs live in ~/logs".into(),
            }],
            tool_calls: vec![
                call(
                    "t1",
                    12,
                    "terminal",
                    "run_command",
                    serde_json::json!({ "command": "grep -c ERROR app.log" }),
                    "3",
                ),
                call(
                    "t2",
                    12,
                    "filesystem",
                    "read_file",
                    serde_json::json!({ "path": "app.log" }),
                    "```\nERROR x\n```",
                ),
            ],
        };
        let attachment = |id: i64, kind: &str, name: Option<&str>| Attachment {
            id,
            message_id: 1,
            kind: kind.into(),
            path: format!("{id}.png"),
            mime: "image/png".into(),
            bytes: 10,
            name: name.map(Into::into),
        };
        let attachments = [attachment(1, "image", None), attachment(2, "file", Some("/home/u/app.log"))];
        let md = to_markdown(&detail, &attachments, &|a| Some(format!("Logs_files/{}", a.path)));
        let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle:?} missing from:\n{md}"));
        assert!(at("![image 1](Logs_files/1.png)") < at("What is in the log?"));
        assert!(at("Attached file: `/home/u/app.log`") < at("## ollama:qwen3"));
        assert!(at("<summary>Thinking</summary>") < at("Let me look."));
        // The memories the answer was given, with it, as they were then.
        assert!(
            at("## ollama:qwen3") < at("Memories given to this answer:\n\n- The user's logs live in ~/logs")
        );
        assert_eq!(view(&detail, &attachments, &[]).messages[1].memories, ["The user's logs live in ~/logs"]);
        // Text before the calls, the calls in order with their results, then the text after.
        assert!(at("Let me look.") < at("$ grep -c ERROR app.log"));
        assert!(at("$ grep -c ERROR app.log") < at("**Tool `filesystem:read_file`**"));
        assert!(at("**Tool `filesystem:read_file`**") < at("The log has three errors."));
        assert!(
            md.contains("````\n```\nERROR x\n```\n````"),
            "a result with a fence stays inside a longer one:\n{md}"
        );
        // Without a link for images, each is still named.
        let plain = to_markdown(&detail, &attachments, &|_| None);
        assert!(plain.contains("(image 1: image/png, 10 bytes)"), "{plain}");
    }

    #[test]
    fn a_plain_conversation_is_all_visible() {
        let ms = [msg(1, Role::User, None), msg(2, Role::Assistant, None), msg(3, Role::User, None)];
        assert_eq!(ids(&ms), [1, 2, 3]);
        assert!(alternatives(&ms).is_empty());
    }
}
