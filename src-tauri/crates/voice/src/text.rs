//! Comparing transcripts with what was said: word error rate over normalised words.

/// Lowercase words without punctuation ("Don't stop." -> ["don't", "stop"]).
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.chars().filter(|c| c.is_alphanumeric() || *c == '\'').collect::<String>().to_lowercase())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate: (substitutions + deletions + insertions) / words in the reference.
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let (r, h) = (words(reference), words(hypothesis));
    if r.is_empty() {
        return if h.is_empty() { 0.0 } else { 1.0 };
    }
    // Levenshtein distance over words, one row at a time.
    let mut previous: Vec<usize> = (0..=h.len()).collect();
    for (i, rw) in r.iter().enumerate() {
        let mut row = vec![i + 1; h.len() + 1];
        for (j, hw) in h.iter().enumerate() {
            let substitution = previous[j] + usize::from(rw != hw);
            row[j + 1] = substitution.min(previous[j + 1] + 1).min(row[j] + 1);
        }
        previous = row;
    }
    previous[h.len()] as f64 / r.len() as f64
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
}
