#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The review service's actions with real processes: git commits and the editor command.
#![cfg(unix)]

use std::path::Path;
use std::process::Command;

use perch_ipc::{Mode, PresentReview};
use perch_review::references::ReferenceError;
use perch_review::{ReviewError, ReviewService};
use perch_store::{Integrity, Store};

async fn service(dir: &Path) -> ReviewService {
    let (store, _) = Store::open(&dir.join("perch.db"), Integrity::Quick).await.unwrap();
    ReviewService::new(store)
}

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn review(content: &str, base: &Path) -> PresentReview {
    PresentReview {
        content: content.into(),
        mode: Mode::Replace,
        section: None,
        base_uri: base.display().to_string(),
    }
}

#[tokio::test]
async fn commit_uses_the_review_as_the_message_and_reports_git_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["config", "user.email", "test@example.com"]);
    git(&repo, &["config", "user.name", "Test"]);
    std::fs::write(repo.join("a.txt"), "one").unwrap();
    git(&repo, &["add", "a.txt"]);

    let reviews = service(tmp.path()).await;
    // A markdown heading starts the message: git must keep it, not strip it as a comment.
    let doc =
        reviews.present(review("# Add a.txt\n\nThe first file, see [`a.txt:1`][].", &repo)).await.unwrap();
    let outcome = reviews.commit(doc.id, &[]).await.unwrap();
    assert!(outcome.success, "{}", outcome.output);
    assert_eq!(git(&repo, &["log", "-1", "--format=%B"]).trim(), doc.content);

    // Nothing staged: git says so, and so does Perch.
    let outcome = reviews.commit(doc.id, &[]).await.unwrap();
    assert!(!outcome.success);
    assert!(outcome.output.contains("nothing"), "{}", outcome.output);
}

#[tokio::test]
async fn references_open_only_when_they_are_in_the_review_and_inside_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "").unwrap();
    std::fs::write(tmp.path().join("outside.txt"), "").unwrap();
    let log = tmp.path().join("editor.log");
    let editor = format!("sh -c 'echo \"$1 $2\" >> {}' editor {{file}} {{line}}", log.display());

    let reviews = service(tmp.path()).await;
    let doc = reviews.present(review("[`src/lib.rs:7`][] and [`../outside.txt:1`][]", &repo)).await.unwrap();
    reviews.open_reference(doc.id, "src/lib.rs:7", &editor, &[]).await.unwrap();
    let canonical = repo.join("src/lib.rs").canonicalize().unwrap();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), format!("{} 7\n", canonical.display()));

    let outside = reviews.open_reference(doc.id, "../outside.txt:1", &editor, &[]).await.unwrap_err();
    assert!(matches!(&outside, ReviewError::Reference(ReferenceError::Outside { .. })), "{outside}");
    let unknown = reviews.open_reference(doc.id, "src/other.rs:1", &editor, &[]).await.unwrap_err();
    assert!(unknown.to_string().contains("not a reference in this review"), "{unknown}");
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1, "nothing else was opened");
}
