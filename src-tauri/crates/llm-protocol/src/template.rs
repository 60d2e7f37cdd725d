//! What a model's chat template can do, read from its text: whether it takes tools (and in which
//! of the tool-call formats the sidecar parses), and whether the model reasons in `<think>`
//! blocks. The engine uses this for a model's capabilities; the sidecar to parse its output.

use serde::{Deserialize, Serialize};

/// How a model writes tool calls in its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolFormat {
    /// `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Qwen 2.5/3, Hermes, SmolLM3).
    Hermes,
    /// A bare JSON object `{"name": ..., "parameters": {...}}`, maybe after `<|python_tag|>`
    /// (Llama 3.1-3.3).
    LlamaJson,
    /// `[TOOL_CALLS][{"name": ..., "arguments": {...}}]` (Mistral).
    Mistral,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateFeatures {
    pub tools: Option<ToolFormat>,
    pub thinking: bool,
}

/// Reads a Jinja chat template's features. Templates that never mention `tools` take none,
/// whatever their family.
pub fn features(template: &str) -> TemplateFeatures {
    let takes_tools = template.contains("tools");
    let tools = if !takes_tools {
        None
    } else if template.contains("<tool_call>") {
        Some(ToolFormat::Hermes)
    } else if template.contains("[TOOL_CALLS]") {
        Some(ToolFormat::Mistral)
    } else if template.contains("<|python_tag|>") || template.contains("\"parameters\"") {
        Some(ToolFormat::LlamaJson)
    } else {
        None
    };
    let thinking = template.contains("<think>") || template.contains("enable_thinking");
    TemplateFeatures { tools, thinking }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_is_recognised_by_its_markers() {
        let qwen3 = "{%- if tools %}<tools>{{ tool | tojson }}</tools> <tool_call>{%- endif %}{%- if enable_thinking is defined %}<think>";
        assert_eq!(features(qwen3), TemplateFeatures { tools: Some(ToolFormat::Hermes), thinking: true });
        let llama = "{%- if tools is not none %}Respond in the format {\"name\": function name, \"parameters\": dictionary}<|python_tag|>";
        assert_eq!(features(llama).tools, Some(ToolFormat::LlamaJson));
        let mistral = "{%- if tools is not none %}[AVAILABLE_TOOLS]{{ tools|tojson }}[/AVAILABLE_TOOLS]{% endif %}[TOOL_CALLS]";
        assert_eq!(features(mistral).tools, Some(ToolFormat::Mistral));
        let chatml = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>{% endfor %}";
        assert_eq!(features(chatml), TemplateFeatures::default());
    }
}
