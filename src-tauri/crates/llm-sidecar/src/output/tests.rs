#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

/// Feeds `pieces` one at a time and collects everything, merging neighbouring text.
fn run(format: Option<ToolFormat>, thinking: bool, pieces: &[&str]) -> Vec<Piece> {
    let mut parser = Parser::new(format, thinking);
    let mut all: Vec<Piece> = Vec::new();
    let mut pieces: Vec<Piece> = pieces.iter().flat_map(|p| parser.push(p)).collect();
    pieces.extend(parser.finish());
    for p in pieces {
        match (all.last_mut(), p) {
            (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
            (Some(Piece::Thinking(a)), Piece::Thinking(b)) => a.push_str(&b),
            (_, p) => all.push(p),
        }
    }
    all
}

fn text(s: &str) -> Piece {
    Piece::Text(s.into())
}

#[test]
fn plain_answers_pass_through_whole() {
    assert_eq!(run(None, false, &["Hel", "lo <", "b> world"]), [text("Hello <b> world")]);
}

#[test]
fn think_blocks_become_reasoning_even_when_split_across_pieces() {
    let out = run(None, false, &["<th", "ink>\nLet me", " see.\n</thi", "nk>\n\nIt is 4."]);
    assert_eq!(out, [Piece::Thinking("Let me see.\n".into()), text("It is 4.")]);
    // A prompt that opened the block already: the output starts inside it.
    let out = run(None, true, &["Hmm.", "</think>", "Yes."]);
    assert_eq!(out, [Piece::Thinking("Hmm.".into()), text("Yes.")]);
    // Never closed (stopped mid-thought): what came is still reasoning.
    assert_eq!(run(None, false, &["<think>", "still going"]), [Piece::Thinking("still going".into())]);
}

#[test]
fn text_that_only_looks_like_a_marker_start_is_sent_at_the_end() {
    let mut parser = Parser::new(None, false);
    assert_eq!(parser.push("a <thi"), [text("a ")], "the possible marker is held back");
    assert_eq!(parser.finish(), [text("<thi")]);
}

#[test]
fn hermes_tool_calls_are_parsed_between_their_tags() {
    let out = run(
        Some(ToolFormat::Hermes),
        false,
        &[
            "I'll add.\n<tool",
            "_call>\n{\"name\": \"demo__add\", \"arguments\": {\"a\": 2, \"b\": 3}}\n</tool_call>",
        ],
    );
    assert_eq!(out[0], text("I'll add.\n"));
    let Piece::ToolCall(call) = &out[1] else { panic!("{out:?}") };
    assert_eq!((call.name.as_str(), &call.arguments), ("demo__add", &json!({"a": 2, "b": 3})));
    assert_eq!(call.id, "call_1");
    // Two calls, the second with its arguments as a JSON string.
    let out = run(
        Some(ToolFormat::Hermes),
        false,
        &[
            "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"b\",\"arguments\":\"{\\\"x\\\":1}\"}</tool_call>",
        ],
    );
    let names: Vec<_> = out
        .iter()
        .filter_map(|p| {
            if let Piece::ToolCall(c) = p {
                Some((c.name.clone(), c.arguments.clone(), c.id.clone()))
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        names,
        [("a".into(), json!({}), "call_1".into()), ("b".into(), json!({"x": 1}), "call_2".into())]
    );
}

#[test]
fn broken_tool_call_json_is_kept_as_text() {
    let out = run(Some(ToolFormat::Hermes), false, &["<tool_call>{\"name\": oops</tool_call>"]);
    assert_eq!(out, [text("{\"name\": oops")]);
}

#[test]
fn llama_json_calls_count_only_at_the_start_of_the_answer() {
    let out = run(
        Some(ToolFormat::LlamaJson),
        false,
        &[" {\"name\": \"get_time\", ", "\"parameters\": {\"tz\": \"UTC\"}}"],
    );
    let Piece::ToolCall(call) = &out[0] else { panic!("{out:?}") };
    assert_eq!((call.name.as_str(), &call.arguments), ("get_time", &json!({"tz": "UTC"})));
    let out = run(
        Some(ToolFormat::LlamaJson),
        false,
        &["<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {}}"],
    );
    assert_eq!(out.len(), 2, "{out:?}");
    // JSON later in an answer is just text.
    assert_eq!(run(Some(ToolFormat::LlamaJson), false, &["Use {\"a\": 1}"]), [text("Use {\"a\": 1}")]);
}

#[test]
fn mistral_lists_of_calls_are_parsed() {
    let out = run(
        Some(ToolFormat::Mistral),
        false,
        &["[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"n\": 1}, \"id\": \"abc123xyz\"}]"],
    );
    let Piece::ToolCall(call) = &out[0] else { panic!("{out:?}") };
    assert_eq!((call.id.as_str(), call.name.as_str()), ("abc123xyz", "a"));
}
