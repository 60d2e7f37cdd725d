//! The conversation as it continues: regenerated answers and edited questions are kept in
//! the database as alternatives, and the newest of each group is the one that counts.

use std::collections::HashMap;

use crate::store::{Message, Role};

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
