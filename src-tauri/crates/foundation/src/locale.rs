//! The user's language: the one chosen in Settings -> General, else the system's locale
//! (`LC_ALL`, then `LC_MESSAGES`, then `LANG`, as POSIX looks them up). The UI starts in it and
//! the model is told it, so answers match the words around them.

/// The language of `de_DE.UTF-8`-style locale values in words a model reads unambiguously
/// ("German (DE)"), or `None` for the C/POSIX locale and values that name no language.
pub fn language_of(locale: &str) -> Option<String> {
    let tag = locale.split(['.', '@']).next().unwrap_or_default();
    if tag.is_empty() || tag == "C" || tag == "POSIX" {
        return None;
    }
    let mut parts = tag.split(['_', '-']);
    let code = parts.next()?.to_ascii_lowercase();
    if !(2..=3).contains(&code.len()) || !code.chars().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    // A region (`BR`, `419`), not a script (`Hans`) or a variant.
    let region = parts
        .next()
        .filter(|r| {
            r.len() == 2 && r.chars().all(|c| c.is_ascii_alphabetic())
                || r.len() == 3 && r.chars().all(|c| c.is_ascii_digit())
        })
        .map(str::to_ascii_uppercase);
    let name = LANGUAGES.iter().find(|(c, _)| *c == code).map(|(_, n)| (*n).to_owned());
    Some(match (name, region) {
        (Some(name), Some(region)) => format!("{name} ({region})"),
        (Some(name), None) => name,
        (None, Some(region)) => format!("{code}-{region}"),
        (None, None) => code,
    })
}

/// The locale this process runs in, as the environment gives it (`de_DE.UTF-8`).
pub fn system_locale() -> Option<String> {
    ["LC_ALL", "LC_MESSAGES", "LANG"].iter().find_map(|var| std::env::var(var).ok().filter(|v| !v.is_empty()))
}

/// [`language_of`] the language chosen in Settings (a BCP 47 tag such as `pt-BR`), else of the
/// locale this process runs in.
pub fn user_language(chosen: Option<&str>) -> Option<String> {
    chosen.and_then(language_of).or_else(|| system_locale().and_then(|value| language_of(&value)))
}

/// Whether `tag` has the shape of a BCP 47 language tag (`en`, `zh-CN`, `es-419`): what the
/// language setting accepts.
pub fn is_language_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let language = parts.next().unwrap_or_default();
    (2..=3).contains(&language.len())
        && language.chars().all(|c| c.is_ascii_lowercase())
        && tag.len() <= 35
        && parts.all(|p| (2..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Names for the languages Perch's users most often run in; any other code is passed as is.
const LANGUAGES: &[(&str, &str)] = &[
    ("ar", "Arabic"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("en", "English"),
    ("es", "Spanish"),
    ("fa", "Persian"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("he", "Hebrew"),
    ("hi", "Hindi"),
    ("hu", "Hungarian"),
    ("id", "Indonesian"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("nb", "Norwegian"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("pt", "Portuguese"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("sv", "Swedish"),
    ("th", "Thai"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("vi", "Vietnamese"),
    ("zh", "Chinese"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_posix_locale_values() {
        assert_eq!(language_of("de_DE.UTF-8").as_deref(), Some("German (DE)"));
        assert_eq!(language_of("pt_BR.utf8").as_deref(), Some("Portuguese (BR)"));
        assert_eq!(language_of("sr_RS@latin").as_deref(), Some("sr-RS"));
        assert_eq!(language_of("ja").as_deref(), Some("Japanese"));
        assert_eq!(language_of("zh-Hans").as_deref(), Some("Chinese"));
        assert_eq!(language_of("es_419").as_deref(), Some("Spanish (419)"));
    }

    #[test]
    fn the_chosen_language_comes_before_the_system_locale() {
        assert_eq!(user_language(Some("pt-BR")).as_deref(), Some("Portuguese (BR)"));
        assert_eq!(user_language(Some("ar")).as_deref(), Some("Arabic"));
    }

    #[test]
    fn language_tags_are_checked_for_shape() {
        for tag in ["en", "zh-CN", "pt-BR", "es-419", "zh-Hans-CN"] {
            assert!(is_language_tag(tag), "{tag}");
        }
        for tag in ["", "E", "english", "de_DE", "de-", "ja-\u{0}", "en-CA; rm -rf /"] {
            assert!(!is_language_tag(tag), "{tag}");
        }
    }

    #[test]
    fn the_c_locale_and_nonsense_name_no_language() {
        for value in ["C", "C.UTF-8", "POSIX", "", ".UTF-8", "1234", "english_US"] {
            assert_eq!(language_of(value), None, "{value}");
        }
    }
}
