//! What cloud models cost, per million tokens, as data the user can edit (Settings -> Models).
//! Ollama's models have no entry (no cost is shown); Perch's own local models cost 0.

use serde::{Deserialize, Serialize};

/// USD per million tokens for a model; `model` is `provider:model`, or a prefix ending in `*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Price {
    pub model: String,
    pub input: f64,
    pub output: f64,
}

/// The shipped table, as of late 2026. Users correct it in Settings when prices change.
pub fn builtin() -> Vec<Price> {
    serde_json::from_str(include_str!("prices.json")).unwrap_or_default()
}

/// The user's entries first (they win), then the shipped ones.
pub fn merged(user: &[Price]) -> Vec<Price> {
    let mut all = user.to_vec();
    all.extend(builtin().into_iter().filter(|b| !user.iter().any(|u| u.model == b.model)));
    all
}

/// The price for `model`: an exact entry, else the longest matching `prefix*` entry.
pub fn find<'a>(table: &'a [Price], model: &str) -> Option<&'a Price> {
    table.iter().find(|p| p.model == model).or_else(|| {
        table
            .iter()
            .filter(|p| p.model.ends_with('*') && model.starts_with(p.model.trim_end_matches('*')))
            .max_by_key(|p| p.model.len())
    })
}

/// Cost in USD of one answer's tokens.
pub fn cost(table: &[Price], model: &str, input_tokens: u64, output_tokens: u64) -> Option<f64> {
    let p = find(table, model)?;
    Some((input_tokens as f64 * p.input + output_tokens as f64 * p.output) / 1_000_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_parses_and_prices_known_models() {
        let table = builtin();
        assert!(table.len() > 5);
        let c = cost(&table, "anthropic:claude-sonnet-4-5", 1_000_000, 0).unwrap();
        assert!(c > 0.0);
        assert_eq!(cost(&table, "ollama:qwen3", 1000, 1000), None, "Ollama's models have no price");
        assert_eq!(cost(&table, "local:qwen3-0.6b", 1000, 1000), Some(0.0), "local models cost nothing");
    }

    #[test]
    fn user_entries_win_and_prefixes_match() {
        let user = vec![Price { model: "openai:gpt-4.1".into(), input: 1.0, output: 2.0 }];
        let table = merged(&user);
        assert_eq!(cost(&table, "openai:gpt-4.1", 1_000_000, 1_000_000), Some(3.0));
        let prefixed = vec![
            Price { model: "openai:gpt-4*".into(), input: 10.0, output: 10.0 },
            Price { model: "openai:gpt-4.1*".into(), input: 1.0, output: 1.0 },
        ];
        assert_eq!(find(&prefixed, "openai:gpt-4.1-mini").unwrap().input, 1.0, "the longest prefix wins");
    }
}
