//! The loop every provider shares: stream a step of the answer; when the model asks for tools,
//! run them and stream again with their results, up to a bound.

use super::{TurnEvent, stream, tools};
use crate::providers::{ChatMessage, ChatRequest, Provider, ProviderError, Usage};

/// What the answer has become so far.
#[derive(Default)]
pub(super) struct Outcome {
    pub(super) text: String,
    pub(super) thinking: String,
    pub(super) usage: Option<Usage>,
    pub(super) error: Option<ProviderError>,
    pub(super) stopped: bool,
}

/// The loop every provider shares: stream; when the model asks for tools, run them (checked,
/// approved, concurrently) and stream again with the results, up to `max_rounds` rounds.
pub(super) async fn agent_loop(
    provider: &dyn Provider,
    mut chat: ChatRequest,
    offered: &[tools::OfferedTool],
    calls: &tools::CallContext<'_>,
    max_rounds: u32,
    out: &mut Outcome,
) {
    let mut declined: Vec<(String, String)> = Vec::new();
    let mut round = 0u32;
    loop {
        let text_before = out.text.len();
        let stream::Step { calls: asked, thinking } = stream::stream_answer(
            provider,
            chat.clone(),
            calls.agent.store(),
            calls.message_id,
            calls.cancel,
            calls.sink,
            out,
        )
        .await;
        if asked.is_empty() || out.stopped || out.error.is_some() {
            return;
        }
        if round >= max_rounds {
            let note = format!("\n\n_Perch stopped here after {max_rounds} rounds of tool calls._");
            out.text.push_str(&note);
            calls.sink.send(TurnEvent::Text(note));
            return;
        }
        // Asking again for exactly what the user declined ends the turn instead of looping.
        if asked.iter().any(|c| declined.contains(&(c.name.clone(), c.arguments.to_string()))) {
            let note = "\n\n_Perch stopped here: the model asked again for a tool call you declined._";
            out.text.push_str(note);
            calls.sink.send(TurnEvent::Text(note.to_owned()));
            return;
        }
        let offset = u32::try_from(out.text.chars().count()).unwrap_or(u32::MAX);
        let results = calls.run_round(round, offset, asked.clone(), offered).await;
        chat.messages.push(ChatMessage::Assistant {
            text: out.text[text_before..].to_owned(),
            tool_calls: asked,
            thinking,
        });
        for r in results {
            if r.denied {
                declined.push((r.call.name.clone(), r.call.arguments.to_string()));
            }
            chat.messages.push(ChatMessage::Tool {
                call_id: r.call.id.clone(),
                name: r.call.name.clone(),
                content: r.output.text.clone(),
                is_error: r.output.is_error,
            });
        }
        if calls.cancel.is_cancelled() {
            out.stopped = true;
            return;
        }
        round += 1;
        if round >= max_rounds {
            // The last request offers no tools, so the model answers with what it has.
            chat.tools.clear();
            chat.messages.push(ChatMessage::System(format!(
                "You have used {max_rounds} rounds of tool calls, the most allowed for one answer. \
                 Answer now with what you have, and say what is left to do."
            )));
        }
    }
}
