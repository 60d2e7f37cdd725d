//! Model names as Ollama reads them: `[host/][namespace/]model[:tag][@digest]`, with
//! `registry.ollama.ai`, `library` and `latest` filling in what is left out, compared without
//! regard to case. So `llama3.2`, `Llama3.2:latest` and
//! `registry.ollama.ai/library/llama3.2:latest` all name one model.

const DEFAULT_HOST: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";
const DEFAULT_TAG: &str = "latest";

/// The full, lower-case form of a model name, for comparing names (never for display).
pub fn canonical(name: &str) -> String {
    let name = name.trim();
    let name = name.split_once('@').map_or(name, |(before, _digest)| before);
    // A colon after the last slash starts the tag; one before it belongs to a host's port.
    let (rest, tag) = match (name.rfind(':'), name.rfind('/')) {
        (Some(colon), slash) if slash.is_none_or(|s| colon > s) => (&name[..colon], &name[colon + 1..]),
        _ => (name, ""),
    };
    let (rest, model) = rest.rsplit_once('/').unwrap_or(("", rest));
    let (host, namespace) = match rest.rsplit_once('/') {
        Some((host, namespace)) => (host.split_once("://").map_or(host, |(_, h)| h), namespace),
        None => ("", rest),
    };
    let or = |part: &str, default: &'static str| {
        if part.is_empty() { default.to_owned() } else { part.to_owned() }
    };
    format!(
        "{}/{}/{}:{}",
        or(host, DEFAULT_HOST),
        or(namespace, DEFAULT_NAMESPACE),
        model,
        or(tag, DEFAULT_TAG)
    )
    .to_lowercase()
}

/// The installed name `wanted` refers to, if any.
pub fn find<'a>(installed: &'a [String], wanted: &str) -> Option<&'a str> {
    let key = canonical(wanted);
    installed.iter().map(String::as_str).find(|name| canonical(name) == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_parts_take_ollamas_defaults() {
        assert_eq!(canonical("llama3.2"), "registry.ollama.ai/library/llama3.2:latest");
        assert_eq!(canonical("llama3.2:3b"), "registry.ollama.ai/library/llama3.2:3b");
        assert_eq!(canonical("jmorgan/mistral"), "registry.ollama.ai/jmorgan/mistral:latest");
        assert_eq!(
            canonical("hf.co/bartowski/Llama-3.2-1B-GGUF:Q4_K_M"),
            "hf.co/bartowski/llama-3.2-1b-gguf:q4_k_m"
        );
        assert_eq!(
            canonical("qwen3-vl:8b-instruct@sha256:abc"),
            "registry.ollama.ai/library/qwen3-vl:8b-instruct"
        );
    }

    #[test]
    fn a_port_is_not_a_tag() {
        assert_eq!(canonical("localhost:5000/me/model"), "localhost:5000/me/model:latest");
        assert_eq!(canonical("https://localhost:5000/me/model:v1"), "localhost:5000/me/model:v1");
    }

    fn same(a: &str, b: &str) -> bool {
        canonical(a) == canonical(b)
    }

    #[test]
    fn every_spelling_of_a_model_is_the_same_model() {
        for name in [
            "llama3.2",
            "llama3.2:latest",
            "Llama3.2",
            "library/llama3.2",
            "registry.ollama.ai/library/llama3.2:latest",
        ] {
            assert!(same(name, "llama3.2:latest"), "{name}");
        }
        assert!(!same("llama3.2:3b", "llama3.2:latest"));
        assert!(!same("me/llama3.2", "llama3.2"));
    }

    #[test]
    fn finds_the_installed_name_a_user_means() {
        let installed = vec!["llama3.2:latest".to_owned(), "qwen3-vl:8b-instruct".to_owned()];
        assert_eq!(find(&installed, "llama3.2"), Some("llama3.2:latest"));
        assert_eq!(find(&installed, "QWEN3-VL:8b-instruct"), Some("qwen3-vl:8b-instruct"));
        assert_eq!(find(&installed, "qwen3-vl"), None);
    }
}
