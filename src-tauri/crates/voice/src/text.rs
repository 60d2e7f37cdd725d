//! Comparing transcripts with what was said: word and letter error rates over normalised words.

/// Lowercase words without punctuation ("Don't stop." -> ["don't", "stop"]).
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric() || *c == '\'').collect::<String>().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate: (substitutions + deletions + insertions) / words in the reference.
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    error_rate(&words(reference), &words(hypothesis))
}

/// Letter error rate: the same over the letters of the words, spaces left out, so a compound
/// heard as two words ("screenshot", "screen shot") is no error and a small word misheard
/// ("a", "the") a small one. For a voice that says a text differently each time (Piper's VITS
/// draws noise as it speaks), where whether whisper joins a compound is chance.
pub fn letter_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let letters = |text: &str| words(text).concat().chars().collect::<Vec<char>>();
    error_rate(&letters(reference), &letters(hypothesis))
}

/// Edits (substitutions, deletions, insertions) from `reference` to `hypothesis` over the
/// reference's length.
fn error_rate<T: PartialEq>(reference: &[T], hypothesis: &[T]) -> f64 {
    if reference.is_empty() {
        return if hypothesis.is_empty() { 0.0 } else { 1.0 };
    }
    // Levenshtein distance, one row at a time.
    let mut previous: Vec<usize> = (0..=hypothesis.len()).collect();
    for (i, r) in reference.iter().enumerate() {
        let mut row = vec![i + 1; hypothesis.len() + 1];
        for (j, h) in hypothesis.iter().enumerate() {
            let substitution = previous[j] + usize::from(r != h);
            row[j + 1] = substitution.min(previous[j + 1] + 1).min(row[j] + 1);
        }
        previous = row;
    }
    previous[hypothesis.len()] as f64 / reference.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_error_rate_counts_edits_over_reference_words() {
        assert_eq!(word_error_rate("Take a screenshot.", "take a screenshot"), 0.0);
        assert_eq!(word_error_rate("one two three four", "one too three four"), 0.25);
        assert_eq!(word_error_rate("one two three four", "one two four"), 0.25);
        assert_eq!(word_error_rate("one two", "one two three four"), 1.0);
        assert_eq!(word_error_rate("", ""), 0.0);
        assert_eq!(words("Don't STOP, now!"), vec!["don't", "stop", "now"]);
    }

    #[test]
    fn letter_error_rate_forgives_a_split_compound_not_a_wrong_word() {
        assert_eq!(letter_error_rate("Take a screenshot.", "take a screen shot"), 0.0);
        // "a" heard as "the": three edits over 31 letters.
        let rate = letter_error_rate(
            "Please take a screenshot of my editor.",
            "Please take the screen shot of my editor.",
        );
        assert!((rate - 3.0 / 31.0).abs() < 1e-9, "{rate}");
        assert!(letter_error_rate("Please take a screenshot.", "Police bake a green spot.") > 0.3);
        assert_eq!(letter_error_rate("", ""), 0.0);
        assert_eq!(letter_error_rate("", "x"), 1.0);
    }
}
