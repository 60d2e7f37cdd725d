#![allow(clippy::unwrap_used)]
//! Recall with the real all-MiniLM-L6-v2: a question gets the memories it is about (in other
//! words too), and none of the others.

use perch_memories::{Memory, Recall};

fn memory(id: i64, text: &str) -> Memory {
    Memory { id, text: text.into(), created_at: 0, updated_at: 0, conversation_id: None }
}

fn memories() -> Vec<Memory> {
    [
        "The user indents Python code with tabs, never spaces",
        "The user's team deploys the billing service every Friday afternoon",
        "The user is allergic to peanuts",
        "Project Kestrel is the user's Rust rewrite of the invoice importer",
        "The user prefers answers in British English",
    ]
    .iter()
    .enumerate()
    .map(|(i, t)| memory(i as i64 + 1, t))
    .collect()
}

fn recalled(recall: &Recall, question: &str, model: Option<&perch_retrieval::MiniLm>) -> Vec<i64> {
    recall.relevant(question, &memories(), model).iter().map(|m| m.id).collect()
}

#[test]
fn a_question_gets_the_memories_it_is_about_by_meaning_and_none_of_the_others() {
    let model = perch_retrieval::MiniLm::load(&perch_retrieval::test_support::minilm_dir()).unwrap();
    let recall = Recall::default();
    // The figures RELATED was chosen from.
    let all = memories();
    for q in [
        "how should I format the indentation in this script?",
        "when do we ship the payments code to production?",
        "suggest a snack for the afternoon",
        "what's the capital of Australia?",
        "write a haiku about autumn",
    ] {
        let texts: Vec<String> =
            std::iter::once(q.to_owned()).chain(all.iter().map(|m| m.text.clone())).collect();
        let v = model.embed_blocking(&texts).unwrap();
        let sims: Vec<String> =
            v[1..].iter().map(|m| format!("{:.2}", perch_retrieval::cosine(&v[0], m))).collect();
        eprintln!("{q:?}: {}", sims.join(" "));
    }

    // Other words, same matter.
    assert_eq!(recalled(&recall, "how should I format the indentation in this script?", Some(&model)), [1]);
    assert_eq!(recalled(&recall, "when do we ship the payments code to production?", Some(&model)), [2]);
    assert!(recalled(&recall, "suggest a snack for the afternoon", Some(&model)).contains(&3));
    // A shared name is enough.
    assert_eq!(recalled(&recall, "What does Kestrel do again?", Some(&model))[0], 4);
    // Nothing about them: none go.
    assert_eq!(recalled(&recall, "what's the capital of Australia?", Some(&model)), Vec::<i64>::new());
    assert_eq!(recalled(&recall, "write a haiku about autumn", Some(&model)), Vec::<i64>::new());
}

#[test]
fn without_the_model_memories_are_recalled_by_the_words_they_share_with_the_question() {
    let recall = Recall::default();
    assert_eq!(recalled(&recall, "Is Kestrel's importer done?", None), [4]);
    assert_eq!(recalled(&recall, "tabs or spaces?", None), [1]);
    // Words every memory has ("user", "prefer") recall nothing.
    assert_eq!(recalled(&recall, "what would the user prefer?", None), Vec::<i64>::new());
    assert_eq!(
        recalled(&recall, "how should I format the indentation in this script?", None),
        Vec::<i64>::new()
    );
}

#[test]
fn at_most_five_memories_go_with_a_question() {
    let many: Vec<Memory> = (0..12).map(|i| memory(i, &format!("Kestrel fact number {i}"))).collect();
    assert_eq!(
        Recall::default().relevant("tell me about Kestrel", &many, None).len(),
        perch_memories::recall::MOST
    );
}
