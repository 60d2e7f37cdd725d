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
    /// The tools this answer called, in order (placed in its text by `text_offset`).
    pub tool_calls: Vec<crate::store::tool_calls::ToolCallRecord>,
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
            tool_calls: detail.tool_calls.iter().filter(|c| c.message_id == m.id).cloned().collect(),
            cost: cost_of(m),
        })
        .collect();
    // Every answer costs, including the replaced ones.
    let costs: Vec<f64> = detail.messages.iter().filter_map(cost_of).collect();
    let cost = (!costs.is_empty()).then(|| costs.iter().sum());
    let model_key = detail.conversation.model.as_deref().map(crate::providers::model_key);
    ConversationView { conversation: detail.conversation.clone(), model_key, messages, cost }
}

/// The visible thread as a Markdown document.
pub fn to_markdown(detail: &ConversationDetail) -> String {
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
        out.push_str(&format!("\n## {who}\n\n{}\n", m.content.trim_end()));
    }
    out
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
    use crate::store::MessageStatus;

    fn msg(id: i64, role: Role, alternative_of: Option<i64>) -> Message {
        Message {
            id,
            conversation_id: "c".into(),
            role,
            content: format!("m{id}"),
            thinking: None,
            model: None,
            status: MessageStatus::Complete,
            error: None,
            input_tokens: None,
            output_tokens: None,
            created_at: id,
            alternative_of,
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
    fn a_plain_conversation_is_all_visible() {
        let ms = [msg(1, Role::User, None), msg(2, Role::Assistant, None), msg(3, Role::User, None)];
        assert_eq!(ids(&ms), [1, 2, 3]);
        assert!(alternatives(&ms).is_empty());
    }
}
