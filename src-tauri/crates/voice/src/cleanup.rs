//! Tidying dictated text before Perch types it into another application.
//!
//! Whisper's output goes straight into whatever the user is writing in (a mail, a chat, an
//! editor), so small slips show: a hesitation whisper kept, a name it spelled its own way, a
//! missing capital or full stop. This runs on every dictation, after whisper and before the
//! keystrokes, so it is plain string work (microseconds, no model, nothing leaves the machine)
//! and deliberately cautious: a word it wrongly removes or changes costs the user more than one
//! it leaves alone. Order matters: fillers first (so a term split by an "um" still matches),
//! then the vocabulary, then punctuation (so capitals never undo a term's spelling).
//!
//! Longer than 500 lines because of its tests; the code itself is about half.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::ops::Range;

/// What to tidy; from Settings -> Voice.
#[derive(Debug, Clone, Copy)]
pub struct Cleanup<'a> {
    /// Capital at each sentence start and a full stop at the end when the text has none.
    pub punctuation: bool,
    /// Hesitations removed ("um", "uh", "äh", "euh", ...), for the dictation's language.
    pub fillers: bool,
    /// Names and terms the user wants spelled their way ("Perch", "Kubernetes", "gRPC"): a word
    /// or phrase matching one case-insensitively (whole words only) takes the vocabulary's
    /// spelling. Applies whatever the other switches say.
    pub vocabulary: &'a [String],
    /// The dictation's language code ("en", "de", "en-US", "auto"). Fillers are removed only for
    /// languages with a list below; "auto" (or "") uses every list minus the sounds that are real
    /// words in one of the languages ("um" is German and Portuguese, "er" German, "em" Portuguese).
    pub language: &'a str,
}

/// The clean-up a dictation runs with, fixed at its start (`Cleanup` owned).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tidy {
    pub punctuation: bool,
    pub fillers: bool,
    pub vocabulary: Vec<String>,
    pub language: String,
}

impl Tidy {
    pub fn from_settings(settings: &super::settings::VoiceSettings) -> Self {
        Self {
            punctuation: settings.tidy_punctuation,
            fillers: settings.remove_fillers,
            vocabulary: settings.vocabulary.clone(),
            // An English-only model ("tiny.en", "ggml-base.en.bin") hears English whatever the
            // language setting says, so its hesitations are English ones.
            language: if super::models::english_only(&settings.model) {
                "en".into()
            } else {
                settings.language.clone()
            },
        }
    }

    pub fn apply(&self, text: &str) -> String {
        let cleanup = Cleanup {
            punctuation: self.punctuation,
            fillers: self.fillers,
            vocabulary: &self.vocabulary,
            language: &self.language,
        };
        tidy(text, &cleanup)
    }
}

/// Dictated text tidied as `cleanup` asks; "" for empty or blank text, otherwise at least trimmed.
pub fn tidy(text: &str, cleanup: &Cleanup<'_>) -> String {
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let terms = terms(cleanup.vocabulary);
    let fillers = if cleanup.fillers { Fillers::for_language(cleanup.language) } else { None };
    let mut out = match fillers {
        Some(fillers) => remove_fillers(text, fillers),
        None => text.to_owned(),
    };
    if !terms.is_empty() {
        out = apply_vocabulary(&out, &terms);
    }
    if cleanup.punctuation {
        out = punctuate(&out, &terms);
    }
    out
}

/// Whisper's prompt holds at most 224 tokens (half its text context) and whisper.cpp drops the
/// *start* of a longer one, which is where the user's first terms are; names cost about one
/// token per three characters, so 600 characters stays inside.
const PROMPT_CHARS: usize = 600;

/// The vocabulary as whisper's initial prompt (whisper spells names it has just "seen"), or None
/// when there is none; whole terms only, up to [`PROMPT_CHARS`].
pub fn initial_prompt(vocabulary: &[String]) -> Option<String> {
    let mut prompt = String::new();
    let mut used = 0;
    let mut seen: Vec<String> = Vec::new();
    for term in vocabulary.iter().map(|v| normalise_term(v)).filter(|t| !t.is_empty()) {
        let folded = term.to_lowercase();
        if seen.contains(&folded) {
            continue;
        }
        let cost = term.chars().count() + if prompt.is_empty() { 0 } else { 2 };
        // A long term that does not fit must not keep out the short ones after it.
        if used + cost > PROMPT_CHARS {
            continue;
        }
        if !prompt.is_empty() {
            prompt.push_str(", ");
        }
        prompt.push_str(&term);
        used += cost;
        seen.push(folded);
    }
    (!prompt.is_empty()).then_some(prompt)
}

// ---- Fillers ----------------------------------------------------------------------------------

/// Hesitations by language. A trailing `+` lets the last letter repeat, as whisper spells a
/// drawn-out sound ("uhhh", "hmmm"); words that only look like fillers when stretched ("err" is
/// a word, "mm" is millimetres) are listed without it or not at all. Discourse words ("like",
/// "so", "well", "you know") are real words and are never removed.
const FILLERS: &[(&str, &[&str])] = &[
    ("en", &["um", "umm+", "uh+", "uhm+", "erm+", "er", "hm+", "mmm+"]),
    ("de", &["äh+", "ähm+", "öh+", "öhm+", "hm+"]),
    ("fr", &["euh+", "heu+"]),
    ("es", &["eh", "em", "ehm+"]),
    ("pt", &["hum+"]),
    ("ru", &["э+", "эм+", "хм+"]),
];

/// Fillers that are real words in another listed language (or an English interjection that
/// means something), so "auto" leaves them: "um" (German "around", Portuguese "one"), "er"
/// (German "he"), "em" (Portuguese "in"), "eh" (English "eh?"), "hum" (English "to hum").
const NOT_IN_AUTO: &[&str] = &["um", "er", "em", "eh", "hum+"];

#[derive(Debug, Clone, Copy)]
enum Fillers {
    Known(&'static [&'static str]),
    Auto,
}

impl Fillers {
    fn for_language(language: &str) -> Option<Self> {
        let code = language.trim().split(['-', '_']).next().unwrap_or_default().to_ascii_lowercase();
        if code.is_empty() || code == "auto" {
            return Some(Self::Auto);
        }
        FILLERS.iter().find(|(lang, _)| *lang == code).map(|(_, list)| Self::Known(list))
    }

    fn contains(self, word: &str) -> bool {
        match self {
            Self::Known(list) => list.iter().any(|p| pattern_matches(p, word)),
            Self::Auto => FILLERS
                .iter()
                .flat_map(|(_, list)| list.iter())
                .filter(|p| !NOT_IN_AUTO.contains(p))
                .any(|p| pattern_matches(p, word)),
        }
    }
}

fn pattern_matches(pattern: &str, word: &str) -> bool {
    match pattern.strip_suffix('+') {
        None => word == pattern,
        Some(base) => {
            let last = base.chars().next_back();
            word.strip_prefix(base).is_some_and(|rest| rest.chars().all(|c| Some(c) == last))
        }
    }
}

/// A token that is a filler, split into the punctuation around it.
struct Filler<'t> {
    lead: &'t str,
    trail: &'t str,
    capitalised: bool,
}

fn as_filler(token: &str, fillers: Fillers) -> Option<Filler<'_>> {
    let core = token.trim_matches(|c: char| !c.is_alphanumeric());
    if core.is_empty() {
        return None;
    }
    // "ER", "UM": written in capitals it is an abbreviation, not a sound.
    if core.chars().count() > 1 && !core.chars().any(char::is_lowercase) {
        return None;
    }
    if !fillers.contains(&core.to_lowercase()) {
        return None;
    }
    let lead_len = token.len() - token.trim_start_matches(|c: char| !c.is_alphanumeric()).len();
    Some(Filler {
        lead: &token[..lead_len],
        trail: &token[lead_len + core.len()..],
        capitalised: core.starts_with(char::is_uppercase),
    })
}

fn remove_fillers(text: &str, fillers: Fillers) -> String {
    // Each kept word with the whitespace before it (line breaks survive).
    let mut kept: Vec<(&str, String)> = Vec::new();
    let mut gap: Option<&str> = None;
    let mut prefix = String::new();
    let mut capitalise_next = false;
    for token in tokens(text) {
        let Some(filler) = as_filler(token.text, fillers) else {
            let sep = match gap.take() {
                Some(g) if g.contains('\n') && !token.sep.contains('\n') => g,
                _ => token.sep,
            };
            let word = if capitalise_next { capitalise(token.text) } else { Cow::Borrowed(token.text) };
            capitalise_next = false;
            kept.push((sep, format!("{}{word}", std::mem::take(&mut prefix))));
            continue;
        };
        gap.get_or_insert(token.sep);
        let at_start = kept.last().is_none_or(|(_, w)| ends_sentence(w));
        // Whisper capitalised the sentence on the filler; the sentence now starts one word on.
        capitalise_next |= at_start && filler.capitalised;
        // An opening quote or bracket belongs to the next word, unless the filler closes it too.
        let mut paired: Vec<usize> = Vec::new();
        for opener in filler.lead.chars() {
            let Some(closer) = closer_of(opener) else { continue };
            match filler.trail.char_indices().find(|(i, c)| *c == closer && !paired.contains(i)) {
                Some((i, _)) => paired.push(i),
                None => prefix.push(opener),
            }
        }
        // Commas, dashes and ellipses were part of the hesitation; a sentence's end and a
        // closing quote were not, and go to the word before.
        let ellipsis = filler.trail.contains("..") || filler.trail.contains('…');
        let rest = filler.trail.char_indices().filter(|(i, _)| !paired.contains(i));
        for (_, c) in rest {
            let Some((_, previous)) = kept.last_mut() else { break };
            match c {
                '.' | '!' | '?' if !ellipsis => end_sentence(previous, c),
                _ if is_closer(c) => previous.push(c),
                _ => {}
            }
        }
    }
    // "I don't know, um": the comma was waiting for words that never came.
    if gap.is_some()
        && let Some((_, last)) = kept.last_mut()
    {
        let len = last.trim_end_matches([',', ';']).len();
        last.truncate(len);
    }
    let mut out = String::with_capacity(text.len());
    for (i, (sep, word)) in kept.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(word);
    }
    out
}

/// Ends the sentence at `word` with `mark`, in place of a comma that was leading into a filler.
fn end_sentence(word: &mut String, mark: char) {
    let len = word.trim_end_matches([',', ';', ':']).len();
    word.truncate(len);
    if ends_with_terminator(word) {
        return;
    }
    if word.chars().next_back().is_some_and(|c| c.is_alphanumeric() || is_closer(c)) {
        word.push(mark);
    }
}

// ---- Vocabulary -------------------------------------------------------------------------------

/// A term with its inner whitespace made single spaces (a space in it matches any whitespace).
fn normalise_term(term: &str) -> String {
    term.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The usable terms, longest first so "Visual Studio Code" wins over "Code".
fn terms(vocabulary: &[String]) -> Vec<String> {
    let mut terms: Vec<String> =
        vocabulary.iter().map(|v| normalise_term(v)).filter(|t| !t.is_empty()).collect();
    terms.sort_by_key(|t| Reverse(t.chars().count()));
    terms
}

fn same_letter(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// Where `term` ends if the text at `start` spells it in any case and the match ends on a word
/// boundary (whatever follows a term that ends in a symbol, such as "C++").
fn match_at(text: &str, start: usize, term: &str) -> Option<usize> {
    let mut chars = text[start..].char_indices().peekable();
    for want in term.chars() {
        if want == ' ' {
            let mut spaced = false;
            while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {
                spaced = true;
            }
            if !spaced {
                return None;
            }
        } else {
            let (_, got) = chars.next()?;
            if !same_letter(got, want) {
                return None;
            }
        }
    }
    let next = chars.peek().copied();
    if term.ends_with(char::is_alphanumeric) && next.is_some_and(|(_, c)| c.is_alphanumeric()) {
        return None;
    }
    Some(next.map_or(text.len(), |(i, _)| start + i))
}

fn apply_vocabulary(text: &str, terms: &[String]) -> String {
    let verbatim: Vec<Range<usize>> = tokens(text)
        .into_iter()
        .filter(|t| is_verbatim(t.text))
        .map(|t| t.start..t.start + t.text.len())
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut previous: Option<char> = None;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let boundary = previous.is_none_or(|p| !p.is_alphanumeric());
        let found = terms.iter().find_map(|term| {
            if !boundary && term.starts_with(char::is_alphanumeric) {
                return None;
            }
            let end = match_at(text, i, term)?;
            let in_verbatim = verbatim.iter().any(|r| r.start < end && i < r.end);
            (!in_verbatim).then_some((term, end))
        });
        match found {
            Some((term, end)) => {
                out.push_str(term);
                previous = term.chars().next_back();
                i = end;
            }
            None => {
                out.push(c);
                previous = Some(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

// ---- Punctuation ------------------------------------------------------------------------------

/// Abbreviations whose full stop does not end a sentence (lowercase). "etc." and "U.S." are
/// left out: they end sentences as often as not.
const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "vs.", "cf.", "mr.", "mrs.", "ms.", "dr.", "prof.", "approx.", "incl.", "z.b.", "d.h.",
    "bzw.", "ca.",
];

fn punctuate(text: &str, terms: &[String]) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::with_capacity(collapsed.len() + 1);
    let mut sentence_start = true;
    for token in tokens(&collapsed) {
        if !out.is_empty() {
            out.push(' ');
        }
        if sentence_start && !starts_with_term(&collapsed[token.start..], terms) {
            out.push_str(&capitalise(token.text));
        } else {
            out.push_str(token.text);
        }
        sentence_start = ends_sentence(token.text);
    }
    let last_token = out.rsplit(' ').next().unwrap_or_default();
    let needs_stop = out.chars().next_back().is_some_and(|c| c.is_alphanumeric() && !has_own_full_stop(c))
        && !is_verbatim(last_token);
    if needs_stop {
        out.push('.');
    }
    out
}

/// Whether a vocabulary term, spelled exactly as the user wants it, starts `rest`: "gRPC" opening
/// a sentence stays "gRPC".
fn starts_with_term(rest: &str, terms: &[String]) -> bool {
    let rest = rest.trim_start_matches(is_opener);
    terms.iter().any(|term| {
        rest.strip_prefix(term.as_str()).is_some_and(|after| {
            !term.ends_with(char::is_alphanumeric) || !after.starts_with(char::is_alphanumeric)
        })
    })
}

/// The word with its first letter in capitals (after an opening quote or bracket); words that
/// start with a digit or symbol, capitals already, and URLs, emails and paths are left alone.
fn capitalise(word: &str) -> Cow<'_, str> {
    if is_verbatim(word) {
        return Cow::Borrowed(word);
    }
    let lead = word.len() - word.trim_start_matches(is_opener).len();
    let mut rest = word[lead..].chars();
    let Some(first) = rest.next().filter(|c| c.is_lowercase()) else {
        return Cow::Borrowed(word);
    };
    // "ß" would become "SS": better left than wrong.
    let mut upper = first.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => Cow::Owned(format!("{}{u}{}", &word[..lead], rest.as_str())),
        _ => Cow::Borrowed(word),
    }
}

/// Whether a sentence ends with this word. An ellipsis does not count: whisper writes one for a
/// pause in the middle of a sentence at least as often as at its end.
fn ends_sentence(word: &str) -> bool {
    let bare = word.trim_end_matches(is_closer);
    if bare.ends_with("..") || bare.ends_with('…') || !ends_with_terminator(bare) {
        return false;
    }
    !ABBREVIATIONS.contains(&bare.trim_start_matches(is_opener).to_lowercase().as_str())
}

fn ends_with_terminator(word: &str) -> bool {
    word.trim_end_matches(is_closer).ends_with(['.', '!', '?', '。', '！', '？'])
}

/// A URL, an email address or a path: typed exactly as whisper heard it.
fn is_verbatim(token: &str) -> bool {
    token.contains("://") || token.contains('@') || token.contains('/') || token.starts_with('~')
}

fn is_opener(c: char) -> bool {
    closer_of(c).is_some()
}

fn closer_of(opener: char) -> Option<char> {
    Some(match opener {
        '"' => '"',
        '\'' => '\'',
        '“' => '”',
        '‘' => '’',
        '„' => '“',
        '‚' => '‘',
        '«' => '»',
        '‹' => '›',
        '(' => ')',
        '[' => ']',
        '{' => '}',
        '¿' => '?',
        '¡' => '!',
        _ => return None,
    })
}

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | '”' | '’' | '“' | '‘' | '»' | '›' | ')' | ']' | '}')
}

/// Scripts whose sentences end with their own mark (。, ।, ။, ።, ։) or with none (Thai): a Latin
/// full stop there would be wrong, and choosing theirs is whisper's business.
fn has_own_full_stop(c: char) -> bool {
    matches!(c as u32,
        0x0530..=0x058F // Armenian
        | 0x0900..=0x09FF // Devanagari, Bengali
        | 0x0E00..=0x0FFF // Thai, Lao, Tibetan
        | 0x1000..=0x109F // Myanmar
        | 0x1200..=0x139F // Ethiopic
        | 0x1780..=0x17FF // Khmer
        | 0x3040..=0x312F // Hiragana, Katakana, Bopomofo
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // Han
        | 0xFF66..=0xFF9F // Half-width Katakana
        | 0x20000..=0x3FFFF // Han, supplementary planes
    )
}

// ---- Tokens -----------------------------------------------------------------------------------

/// A whitespace-separated token with the whitespace before it and its byte offset.
struct Token<'t> {
    sep: &'t str,
    start: usize,
    text: &'t str,
}

fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut sep_start = 0;
    let mut word_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), word_start) {
            (true, Some(start)) => {
                out.push(Token { sep: &text[sep_start..start], start, text: &text[start..i] });
                word_start = None;
                sep_start = i;
            }
            (false, None) => word_start = Some(i),
            _ => {}
        }
    }
    if let Some(start) = word_start {
        out.push(Token { sep: &text[sep_start..start], start, text: &text[start..] });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_english_only_model_drops_english_hesitations_even_when_the_language_is_auto() {
        use crate::settings::VoiceSettings;
        let settings = |model: &str| VoiceSettings {
            model: model.into(),
            language: "auto".into(),
            ..VoiceSettings::default()
        };
        assert_eq!(Tidy::from_settings(&settings("tiny.en")).apply("um, hello there"), "hello there");
        assert_eq!(
            Tidy::from_settings(&settings("/models/ggml-base.en.bin")).apply("um, hello there"),
            "hello there"
        );
        // A multilingual model under "auto": "um" may be German or Portuguese, so it stays.
        assert_eq!(Tidy::from_settings(&settings("base")).apply("um, hello there"), "um, hello there");
    }

    fn run(text: &str, punctuation: bool, fillers: bool, language: &str, vocabulary: &[&str]) -> String {
        let vocabulary: Vec<String> = vocabulary.iter().map(|s| (*s).to_owned()).collect();
        tidy(text, &Cleanup { punctuation, fillers, vocabulary: &vocabulary, language })
    }

    fn fillers(text: &str, language: &str) -> String {
        run(text, false, true, language, &[])
    }

    fn punctuation(text: &str) -> String {
        run(text, true, false, "en", &[])
    }

    fn vocabulary(text: &str, terms: &[&str]) -> String {
        run(text, false, false, "en", terms)
    }

    #[test]
    fn fillers_go_with_their_commas() {
        assert_eq!(fillers("So, um, I think, uh, we should go.", "en"), "So, I think, we should go.");
        assert_eq!(fillers("we should um go", "en"), "we should go");
    }

    #[test]
    fn a_leading_filler_goes_with_its_full_stop_and_punctuation_capitalises() {
        assert_eq!(fillers("Um. Let's start", "en"), "Let's start");
        assert_eq!(run("um. let's start", true, true, "en", &[]), "Let's start.");
    }

    #[test]
    fn a_capitalised_filler_at_a_sentence_start_hands_its_capital_on() {
        assert_eq!(fillers("Um, so we go. Uh, then we stop.", "en"), "So we go. Then we stop.");
    }

    #[test]
    fn a_filler_ending_a_sentence_hands_its_full_stop_to_the_word_before() {
        assert_eq!(fillers("we should go, um. Then stop", "en"), "we should go. Then stop");
        assert_eq!(fillers("is that right, uh?", "en"), "is that right?");
        assert_eq!(fillers("Done. Um. Next", "en"), "Done. Next");
    }

    #[test]
    fn trailing_fillers_leave_no_dangling_comma() {
        assert_eq!(fillers("I don't know, um", "en"), "I don't know");
        assert_eq!(fillers("I don't know, um...", "en"), "I don't know");
    }

    #[test]
    fn repeated_fillers_are_all_removed() {
        assert_eq!(fillers("um, uh, um we go uh uh", "en"), "we go");
        assert_eq!(fillers("Um uh hmm.", "en"), "");
    }

    #[test]
    fn stretched_fillers_are_removed_but_lookalike_words_stay() {
        assert_eq!(fillers("uhhh, hmmm, ummm ok", "en"), "ok");
        assert_eq!(
            fillers("to err is human, umbrella, 5 mm, uh-huh", "en"),
            "to err is human, umbrella, 5 mm, uh-huh"
        );
    }

    #[test]
    fn fillers_are_case_insensitive_but_capital_abbreviations_stay() {
        assert_eq!(fillers("UH, we went to the ER, Er, fast", "en"), "UH, we went to the ER, fast");
        assert_eq!(fillers("Uh, we went to the ER, er, fast", "en"), "We went to the ER, fast");
    }

    #[test]
    fn fillers_never_merge_words_and_keep_line_breaks() {
        assert_eq!(fillers("one um\ntwo", "en"), "one\ntwo");
        assert_eq!(fillers("one  uh  two", "en"), "one  two");
    }

    #[test]
    fn fillers_in_quotes_and_brackets_keep_the_other_punctuation() {
        assert_eq!(fillers("he said \"um, yes\" (uh) and left", "en"), "he said \"yes\" and left");
        assert_eq!(fillers("she said \"yes um\"", "en"), "she said \"yes\"");
    }

    #[test]
    fn discourse_words_are_never_removed() {
        let text = "so, like, well, you know, I mean it";
        assert_eq!(fillers(text, "en"), text);
        assert_eq!(fillers(text, "auto"), text);
    }

    #[test]
    fn german_fillers_go_but_the_word_um_stays() {
        assert_eq!(fillers("Ähm, wir treffen uns äh um fünf.", "de"), "Wir treffen uns um fünf.");
        assert_eq!(fillers("Ähm, wir treffen uns um fünf.", "auto"), "Wir treffen uns um fünf.");
    }

    #[test]
    fn auto_removes_only_fillers_that_are_no_word_in_a_listed_language() {
        assert_eq!(
            fillers("uh, eu tenho um carro, euh, er kommt, hum", "auto"),
            "eu tenho um carro, er kommt, hum"
        );
    }

    #[test]
    fn language_codes_are_matched_on_their_language_part() {
        assert_eq!(fillers("euh, bonjour", "fr-FR"), "bonjour");
        assert_eq!(fillers("Э, привет", "ru"), "Привет");
        assert_eq!(fillers("eh, hola", "ES"), "hola");
    }

    #[test]
    fn an_unknown_language_keeps_every_word() {
        assert_eq!(fillers("um, ciao", "it"), "um, ciao");
    }

    #[test]
    fn whitespace_is_collapsed_and_trimmed() {
        assert_eq!(punctuation("  hello \n\t world  "), "Hello world.");
    }

    #[test]
    fn sentence_starts_are_capitalised_unicode_aware() {
        assert_eq!(
            punctuation("élan vital. über alles! ça va? ¿qué tal?"),
            "Élan vital. Über alles! Ça va? ¿Qué tal?"
        );
        assert_eq!(punctuation("he said \"stop.\" then \"go\" now"), "He said \"stop.\" Then \"go\" now.");
    }

    #[test]
    fn text_starting_with_a_digit_or_symbol_is_left_alone() {
        assert_eq!(punctuation("3 apples. #tag here"), "3 apples. #tag here.");
    }

    #[test]
    fn a_full_stop_is_added_only_after_a_letter_or_digit() {
        assert_eq!(punctuation("pay 42"), "Pay 42.");
        for done in ["really?", "wow!", "as follows:", "(maybe)", "\"quoted\"", "done."] {
            assert_eq!(punctuation(done), capitalise(done));
        }
    }

    #[test]
    fn scripts_with_their_own_full_stop_get_no_latin_one() {
        assert_eq!(punctuation("我很好"), "我很好");
        assert_eq!(punctuation("こんにちは"), "こんにちは");
        assert_eq!(punctuation("สวัสดี"), "สวัสดี");
        assert_eq!(punctuation("안녕하세요"), "안녕하세요.");
    }

    #[test]
    fn abbreviations_and_ellipses_do_not_start_sentences() {
        assert_eq!(
            punctuation("bring fruit, e.g. apples. and i.e. pears"),
            "Bring fruit, e.g. apples. And i.e. pears."
        );
        assert_eq!(punctuation("wait... then go"), "Wait... then go.");
    }

    #[test]
    fn urls_emails_and_paths_are_left_alone() {
        assert_eq!(punctuation("https://example.com is down"), "https://example.com is down.");
        assert_eq!(punctuation("done. ~/notes is full"), "Done. ~/notes is full.");
        assert_eq!(punctuation("write to me@example.com"), "Write to me@example.com");
        assert_eq!(punctuation("open src/main.rs"), "Open src/main.rs");
    }

    #[test]
    fn vocabulary_takes_the_terms_spelling_case_insensitively() {
        assert_eq!(
            vocabulary("PERCH uses grpc and kubernetes", &["Perch", "gRPC", "Kubernetes"]),
            "Perch uses gRPC and Kubernetes"
        );
    }

    #[test]
    fn vocabulary_matches_whole_words_only() {
        assert_eq!(vocabulary("perched on a perch, grpcs", &["Perch", "gRPC"]), "perched on a Perch, grpcs");
        assert_eq!(vocabulary("zürich, zürichsee", &["Zürich"]), "Zürich, zürichsee");
    }

    #[test]
    fn multi_word_terms_match_across_whitespace_and_the_longest_wins() {
        let terms = ["Code", "Visual Studio Code"];
        assert_eq!(
            vocabulary("open visual  studio\ncode and code", &terms),
            "open Visual Studio Code and Code"
        );
    }

    #[test]
    fn vocabulary_keeps_surrounding_punctuation() {
        assert_eq!(vocabulary("(grpc), \"grpc's\" grpc.", &["gRPC"]), "(gRPC), \"gRPC's\" gRPC.");
        assert_eq!(vocabulary("i like c++ a lot", &["C++"]), "i like C++ a lot");
    }

    #[test]
    fn vocabulary_leaves_urls_alone() {
        assert_eq!(vocabulary("grpc at github.com/grpc/grpc", &["gRPC"]), "gRPC at github.com/grpc/grpc");
    }

    #[test]
    fn empty_vocabulary_entries_are_ignored_and_entries_trimmed() {
        assert_eq!(vocabulary("perch", &["", "   ", "  Perch  "]), "Perch");
        assert_eq!(initial_prompt(&["  ".to_owned(), String::new()]), None);
    }

    #[test]
    fn vocabulary_applies_with_everything_else_off_and_after_fillers() {
        assert_eq!(vocabulary("  grpc  ", &["gRPC"]), "gRPC");
        assert_eq!(
            run("open visual um studio code", false, true, "en", &["Visual Studio Code"]),
            "open Visual Studio Code"
        );
    }

    #[test]
    fn a_vocabulary_term_starting_a_sentence_keeps_its_spelling() {
        let terms = ["gRPC", "iPhone"];
        assert_eq!(run("grpc is fast. iphone too", true, false, "en", &terms), "gRPC is fast. iPhone too.");
        assert_eq!(run("Um, grpc is fast", true, true, "en", &terms), "gRPC is fast.");
    }

    #[test]
    fn empty_or_blank_text_gives_nothing() {
        assert_eq!(run("", true, true, "en", &["Perch"]), "");
        assert_eq!(run(" \n\t ", true, true, "auto", &[]), "");
    }

    #[test]
    fn everything_off_only_trims() {
        let text = "  um,  so e.g. hello\nworld  ";
        assert_eq!(run(text, false, false, "en", &[]), text.trim());
    }

    #[test]
    fn initial_prompt_lists_the_terms_once() {
        assert_eq!(initial_prompt(&[]), None);
        let terms = ["Perch", " Visual  Studio Code ", "perch", "gRPC"].map(str::to_owned);
        assert_eq!(initial_prompt(&terms).as_deref(), Some("Perch, Visual Studio Code, gRPC"));
    }

    #[test]
    fn initial_prompt_is_bounded_to_whole_terms() {
        let mut terms: Vec<String> = (0..200).map(|i| format!("Term{i:03}")).collect();
        terms.insert(1, "x".repeat(700));
        let prompt = initial_prompt(&terms).unwrap();
        assert!(prompt.chars().count() <= PROMPT_CHARS);
        assert!(prompt.starts_with("Term000, Term001, "));
        assert!(prompt.split(", ").all(|t| t.len() == 7 && t.starts_with("Term")));
    }
}
