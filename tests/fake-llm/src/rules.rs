//! What the real services refuse in a chat request, checked before the fake answers, so a
//! client that would fail against the service fails against the fake too.
//!
//! - Anthropic, thinking on: the assistant message before tool results must start with the
//!   `thinking` or `redacted_thinking` blocks of that step, and every such block must come back
//!   exactly as sent (its signature checks).
//! - Gemini: in the current turn, the first `functionCall` part of each model step must carry
//!   the `thoughtSignature` it was sent with. A function's `parameters` take only Gemini's
//!   OpenAPI-style Schema fields (an unknown one, such as JSON Schema's `additionalProperties`
//!   or `$schema`, is refused by name, and `type` is one name, not a list);
//!   `parametersJsonSchema` takes JSON Schema describing an object; the two exclude each other.
//! - OpenAI: every tool call of an assistant message is answered by a `tool` message with its
//!   id, and `tool` messages answer only such calls.

use serde_json::{Value, json};

use crate::signatures::{redacted_is_intact, sign, sign_call};
use crate::wire::{Dialect, error_body};

/// Ollama's context window when a request sets none (below 24 GiB of VRAM).
pub const OLLAMA_DEFAULT_CONTEXT: u64 = 4096;

/// What an Ollama model reads of a chat: Ollama runs it at `options.num_ctx` (its own small
/// default without one) and cuts a longer prompt from the start, without an error, so the
/// system prompt and the oldest messages go first. Tokens are counted as four characters.
pub fn ollama_window(body: &Value) -> Vec<Value> {
    let window = body["options"]["num_ctx"].as_u64().unwrap_or(OLLAMA_DEFAULT_CONTEXT);
    let tokens = |m: &Value| m["content"].as_str().map_or(0, str::len).div_ceil(4) as u64 + 4;
    let messages = items(&body["messages"]);
    let mut total: u64 = messages.iter().map(tokens).sum();
    let mut kept = messages.to_vec();
    while total > window && !kept.is_empty() {
        total -= tokens(&kept.remove(0));
    }
    kept
}

/// Ollama refuses `think: true` for a model without the `thinking` capability (and takes
/// `false` from any model).
pub fn ollama_thinking(body: &Value, model: &str, capabilities: &[String]) -> Result<(), (u16, Value)> {
    if body["think"] == true && !capabilities.iter().any(|c| c == "thinking") {
        let message = format!("\"{model}\" does not support thinking");
        return Err((400, error_body(Dialect::Ollama, 400, &message)));
    }
    Ok(())
}

/// `Err((status, body))` when the service would refuse this chat request.
pub fn check(dialect: Dialect, body: &Value) -> Result<(), (u16, Value)> {
    let refuse = |message: String| Err((400, error_body(dialect, 400, &message)));
    let problem = match dialect {
        Dialect::Anthropic => anthropic(body),
        Dialect::Gemini => gemini(body),
        Dialect::OpenAi => openai(body),
        Dialect::Ollama => None,
    };
    problem.map_or(Ok(()), refuse)
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn anthropic(body: &Value) -> Option<String> {
    let messages = items(&body["messages"]);
    for (i, m) in messages.iter().enumerate() {
        for (j, block) in items(&m["content"]).iter().enumerate() {
            match block["type"].as_str() {
                Some("thinking") => {
                    let text = block["thinking"].as_str().unwrap_or_default();
                    if block["signature"].as_str() != Some(sign(text).as_str()) {
                        return Some(format!(
                            "messages.{i}.content.{j}: Invalid `signature` in `thinking` block"
                        ));
                    }
                }
                Some("redacted_thinking")
                    if !redacted_is_intact(block["data"].as_str().unwrap_or_default()) =>
                {
                    return Some(format!(
                        "messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block"
                    ));
                }
                _ => {}
            }
        }
    }
    if body.pointer("/thinking/type") != Some(&json!("enabled")) {
        return None;
    }
    // The final assistant message, when tool results follow it, must start with its thinking.
    let answers_tools = messages.last().is_some_and(|m| {
        m["role"] == "user" && items(&m["content"]).iter().any(|b| b["type"] == "tool_result")
    });
    let i = messages.iter().rposition(|m| m["role"] == "assistant")?;
    let first = items(&messages[i]["content"]).first().and_then(|b| b["type"].as_str()).unwrap_or("nothing");
    (answers_tools && first != "thinking" && first != "redacted_thinking").then(|| {
        format!(
            "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. \
             When `thinking` is enabled, a final `assistant` message must start with a thinking block \
             (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include \
             thinking blocks from previous turns. To avoid this requirement, disable `thinking`."
        )
    })
}

/// The fields of Gemini's `Schema` (the OpenAPI subset `parameters` takes).
const GEMINI_SCHEMA_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

fn gemini_declarations(body: &Value) -> Option<String> {
    for (t, tool) in items(&body["tools"]).iter().enumerate() {
        for (f, decl) in items(&tool["functionDeclarations"]).iter().enumerate() {
            let at = format!("tools[{t}].function_declarations[{f}]");
            match (decl.get("parameters"), decl.get("parametersJsonSchema")) {
                (Some(_), Some(_)) => {
                    return Some(format!(
                        "Invalid value at '{at}': parameters and parameters_json_schema are mutually exclusive."
                    ));
                }
                (Some(schema), None) => {
                    if let Some(problem) = gemini_schema(schema, &format!("{at}.parameters")) {
                        return Some(problem);
                    }
                }
                (None, Some(schema)) if schema["type"] != "object" => {
                    return Some(format!(
                        "Invalid value at '{at}.parameters_json_schema': the schema must describe an object."
                    ));
                }
                _ => {}
            }
        }
    }
    None
}

/// Google's words for a `parameters` schema the Schema message cannot hold.
fn gemini_schema(schema: &Value, at: &str) -> Option<String> {
    let fields = schema.as_object()?;
    for (name, value) in fields {
        if !GEMINI_SCHEMA_FIELDS.contains(&name.as_str()) {
            return Some(format!(
                "Invalid JSON payload received. Unknown name \"{name}\" at '{at}': Cannot find field."
            ));
        }
        if name == "type" && !value.is_string() {
            return Some(format!(
                "Invalid JSON payload received. Invalid value at '{at}.type' \
                 (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), {value}"
            ));
        }
    }
    let mut nested: Vec<(&Value, String)> = Vec::new();
    if let Some(properties) = fields.get("properties").and_then(Value::as_object) {
        nested
            .extend(properties.values().enumerate().map(|(i, v)| (v, format!("{at}.properties[{i}].value"))));
    }
    if let Some(item) = fields.get("items") {
        nested.push((item, format!("{at}.items")));
    }
    if let Some(any) = fields.get("anyOf").and_then(Value::as_array) {
        nested.extend(any.iter().enumerate().map(|(i, v)| (v, format!("{at}.any_of[{i}]"))));
    }
    for (value, path) in nested {
        if let Some(problem) = gemini_schema(value, &path) {
            return Some(problem);
        }
    }
    None
}

fn gemini(body: &Value) -> Option<String> {
    if let Some(problem) = gemini_declarations(body) {
        return Some(problem);
    }
    let contents = items(&body["contents"]);
    // The current turn starts at the last user content that is not only function responses.
    let start = contents
        .iter()
        .rposition(|c| {
            c["role"] == "user" && items(&c["parts"]).iter().any(|p| p.get("functionResponse").is_none())
        })
        .unwrap_or(0);
    for (i, content) in contents.iter().enumerate().skip(start) {
        let Some((j, part)) =
            items(&content["parts"]).iter().enumerate().find(|(_, p)| p.get("functionCall").is_some())
        else {
            continue;
        };
        let call = &part["functionCall"];
        let expected = sign_call(call["name"].as_str().unwrap_or_default(), &call["args"]);
        match part["thoughtSignature"].as_str() {
            Some(sig) if sig == expected => {}
            Some(_) => return Some(format!("Invalid thought_signature at contents[{i}].parts[{j}].")),
            None => {
                let name = call["name"].as_str().unwrap_or_default();
                return Some(format!(
                    "Function call is missing a thought_signature in functionCall parts. This is required \
                     for tools to work correctly. Additional data, function call `default_api:{name}`, \
                     position {}.",
                    i + 1
                ));
            }
        }
    }
    None
}

fn openai(body: &Value) -> Option<String> {
    let mut open: Vec<String> = Vec::new();
    for (i, m) in items(&body["messages"]).iter().enumerate() {
        if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or_default();
            let Some(k) = open.iter().position(|o| o == id) else {
                return Some(format!(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message \
                     with 'tool_calls'. (messages[{i}], tool_call_id {id:?})"
                ));
            };
            open.remove(k);
            continue;
        }
        if !open.is_empty() {
            return Some(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each \
                 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
                open.join(", ")
            ));
        }
        open = items(&m["tool_calls"]).iter().filter_map(|c| c["id"].as_str().map(str::to_owned)).collect();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signatures::redacted;

    fn anthropic_round(first: Value) -> Value {
        json!({ "thinking": { "type": "enabled", "budget_tokens": 1024 }, "messages": [
            { "role": "user", "content": [{ "type": "text", "text": "add" }] },
            { "role": "assistant", "content": [first, { "type": "tool_use", "id": "t1", "name": "add", "input": {} }] },
            { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": "5" }] } ] })
    }

    #[test]
    fn gemini_parameters_take_only_its_schema_fields_and_json_schema_goes_in_its_own_field() {
        let with = |decl: Value| json!({ "contents": [], "tools": [{ "functionDeclarations": [decl] }] });
        let json_schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": { "limit": { "type": ["integer", "null"] } },
            "additionalProperties": false,
        });
        let refused = |decl: Value| match check(Dialect::Gemini, &with(decl)) {
            Err((400, body)) => body["error"]["message"].as_str().unwrap_or_default().to_owned(),
            other => panic!("accepted: {other:?}"),
        };
        let message = refused(json!({ "name": "f", "parameters": json_schema.clone() }));
        assert!(message.contains("Unknown name \"$schema\""), "{message}");
        let nested = json!({ "type": "object", "properties": { "limit": { "type": ["integer", "null"] } } });
        let message = refused(json!({ "name": "f", "parameters": nested }));
        assert!(message.contains("parameters.properties[0].value.type"), "{message}");
        let both = json!({ "name": "f", "parameters": { "type": "object" }, "parametersJsonSchema": json_schema.clone() });
        assert!(refused(both).contains("mutually exclusive"));
        assert!(
            refused(json!({ "name": "f", "parametersJsonSchema": { "type": "string" } }))
                .contains("an object")
        );
        // Gemini's own fields, and JSON Schema in its field, pass.
        let openapi = json!({ "type": "object", "properties": { "a": { "type": "number", "nullable": true } }, "required": ["a"] });
        assert!(check(Dialect::Gemini, &with(json!({ "name": "f", "parameters": openapi }))).is_ok());
        assert!(
            check(Dialect::Gemini, &with(json!({ "name": "f", "parametersJsonSchema": json_schema })))
                .is_ok()
        );
    }

    #[test]
    fn ollama_reads_only_the_tail_that_fits_its_window() {
        let message = |role: &str, chars: usize| json!({ "role": role, "content": "x".repeat(chars) });
        let body = |num_ctx: Option<u64>| {
            let mut b = json!({ "messages": [message("system", 400), message("user", 12_000), message("user", 8_000)] });
            if let Some(n) = num_ctx {
                b["options"] = json!({ "num_ctx": n });
            }
            b
        };
        // 5,000 tokens: past the 4k default, the system prompt and the first question are cut.
        let seen = ollama_window(&body(None));
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0]["content"].as_str().unwrap().len(), 8_000);
        // Run at a window that holds it all, it reads it all.
        assert_eq!(ollama_window(&body(Some(8192))).len(), 3);
    }

    #[test]
    fn anthropic_wants_the_signed_thinking_back_unchanged() {
        let signed = json!({ "type": "thinking", "thinking": "hmm", "signature": sign("hmm") });
        assert!(check(Dialect::Anthropic, &anthropic_round(signed)).is_ok());
        let tampered = json!({ "type": "thinking", "thinking": "hmm!", "signature": sign("hmm") });
        assert!(check(Dialect::Anthropic, &anthropic_round(tampered)).is_err());
        let redacted = json!({ "type": "redacted_thinking", "data": redacted("x") });
        assert!(check(Dialect::Anthropic, &anthropic_round(redacted)).is_ok());
        let missing = json!({ "type": "text", "text": "Let me add." });
        let (status, body) = check(Dialect::Anthropic, &anthropic_round(missing)).unwrap_err();
        assert_eq!(status, 400);
        assert!(body["error"]["message"].as_str().unwrap().contains("found `text`"), "{body}");
    }

    #[test]
    fn gemini_wants_the_thought_signature_on_the_first_call_of_the_turn() {
        let body = |sig: Option<String>| {
            let mut call = json!({ "functionCall": { "name": "add", "args": { "a": 1 } } });
            if let Some(sig) = sig {
                call["thoughtSignature"] = json!(sig);
            }
            json!({ "contents": [
                { "role": "user", "parts": [{ "text": "add" }] },
                { "role": "model", "parts": [call] },
                { "role": "user", "parts": [{ "functionResponse": { "name": "add", "response": {} } }] } ] })
        };
        assert!(check(Dialect::Gemini, &body(Some(sign_call("add", &json!({ "a": 1 }))))).is_ok());
        assert!(check(Dialect::Gemini, &body(None)).is_err());
        assert!(check(Dialect::Gemini, &body(Some("forged".into()))).is_err());
    }

    #[test]
    fn openai_wants_every_tool_call_answered() {
        let call = json!({ "role": "assistant", "tool_calls": [{ "id": "c1", "type": "function" }] });
        let answer = json!({ "role": "tool", "tool_call_id": "c1", "content": "5" });
        let user = json!({ "role": "user", "content": "hi" });
        assert!(check(Dialect::OpenAi, &json!({ "messages": [user, call, answer] })).is_ok());
        assert!(check(Dialect::OpenAi, &json!({ "messages": [user, call, user] })).is_err());
        assert!(check(Dialect::OpenAi, &json!({ "messages": [user, answer] })).is_err());
    }
}
