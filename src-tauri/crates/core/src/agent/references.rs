//! File references in chat answers (`[`src/auth.rs:45`][]` and the review panel's other forms),
//! resolved inside the user's folders (Settings -> Tools -> Folders) with the review panel's
//! checks (an existing file, inside a folder once `..` and symlinks are followed) and opened in
//! the editor the same way. Opening resolves the reference again from the saved answer, so the
//! UI cannot make Perch open anything the check would refuse.

use std::path::PathBuf;

use super::Agent;
use crate::review::ReviewError;
use crate::review::editor;
use crate::review::references::{self, FileReference, ReferenceError};

const FOLDERS: &str = "your folders (Settings -> Tools -> Folders, and the knowledge folders)";

/// The references in answer `message_id`, each checked.
pub async fn check(agent: &Agent, message_id: i64) -> Result<Vec<FileReference>, ReviewError> {
    let content = agent.store().message(message_id).await?.content;
    let found = references::extract(&content);
    if found.is_empty() {
        return Ok(found);
    }
    let roots = roots(agent).await;
    tokio::task::spawn_blocking(move || {
        let bases = folders(&roots);
        found
            .into_iter()
            .map(|mut reference| {
                reference.problem = resolve(&bases, &reference).err().map(|e| e.to_string());
                reference
            })
            .collect()
    })
    .await
    .map_err(|e| ReferenceError::Interrupted(e.to_string()).into())
}

/// Opens reference `target` of answer `message_id` (in its text, or a passage one of its
/// `search_knowledge` calls returned) in the editor `template` names.
pub async fn open(
    agent: &Agent,
    message_id: i64,
    target: &str,
    template: &str,
    envs: &[(String, String)],
) -> Result<(), ReviewError> {
    let content = agent.store().message(message_id).await?.content;
    let mut cited = references::extract(&content);
    // The passages its folder searches found, which their cards list, open too.
    if !cited.iter().any(|r| r.target == target) {
        for call in agent.store().tool_calls_of_message(message_id).await? {
            if (call.server.as_str(), call.tool.as_str())
                == (perch_knowledge::tool::SERVER, perch_knowledge::tool::TOOL)
                && let Some(output) = call.output
            {
                cited.extend(references::extract(&output.text));
            }
        }
    }
    let reference = cited
        .into_iter()
        .find(|r| r.target == target)
        .ok_or_else(|| ReferenceError::Unknown { target: target.to_owned(), source_name: "answer" })?;
    let roots = roots(agent).await;
    let checked = reference.clone();
    let file = tokio::task::spawn_blocking(move || resolve(&folders(&roots), &checked))
        .await
        .map_err(|e| ReferenceError::Interrupted(e.to_string()))??;
    editor::open(template, &file, reference.line.max(1), envs).await?;
    Ok(())
}

/// The folders an answer's references may point into: the user's folders and the knowledge
/// folders (whose passages `search_knowledge` cites).
async fn roots(agent: &Agent) -> Vec<String> {
    let mut roots = agent.settings().get().await.tools.roots;
    roots.extend(agent.knowledge().folders().await.into_iter().map(|f| f.display().to_string()));
    roots
}

/// The folders that exist, canonical, or why there are none. Blocking (file system).
fn folders(roots: &[String]) -> Result<Vec<PathBuf>, ReferenceError> {
    if roots.is_empty() {
        return Err(ReferenceError::NoFolders(FOLDERS));
    }
    let found: Vec<PathBuf> = roots
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .filter_map(|p| p.canonicalize().ok())
        .filter(|p| p.is_dir())
        .collect();
    if found.is_empty() {
        return Err(ReferenceError::FoldersMissing);
    }
    Ok(found)
}

/// The file `reference` opens, or why it cannot.
fn resolve(
    bases: &Result<Vec<PathBuf>, ReferenceError>,
    reference: &FileReference,
) -> Result<PathBuf, ReferenceError> {
    let bases = bases.as_ref().map_err(Clone::clone)?;
    if reference.line == 0 {
        return Err(ReferenceError::LineZero);
    }
    references::resolve_in(bases, &reference.path, FOLDERS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(target: &str) -> FileReference {
        references::extract(&format!("[`{target}`][]")).remove(0)
    }

    #[test]
    fn references_resolve_in_the_first_folder_that_holds_them_and_nowhere_else() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(a.join("src")).unwrap();
        std::fs::create_dir_all(b.join("lib")).unwrap();
        std::fs::write(a.join("src/auth.rs"), "").unwrap();
        std::fs::write(b.join("lib/x.ts"), "").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "").unwrap();
        let roots = [a.display().to_string(), b.display().to_string(), "/no/such/folder".into()];
        let bases = folders(&roots);

        let found = |t: &str| resolve(&bases, &reference(t));
        assert_eq!(found("src/auth.rs:45").unwrap(), a.join("src/auth.rs").canonicalize().unwrap());
        assert_eq!(found("lib/x.ts:3-9").unwrap(), b.join("lib/x.ts").canonicalize().unwrap());
        assert!(matches!(found("../secret.txt:1"), Err(ReferenceError::Outside { .. })));
        assert!(found("../secret.txt:1").unwrap_err().to_string().contains("outside your folders"));
        let absolute = format!("{}:1", tmp.path().join("secret.txt").display());
        assert!(matches!(found(&absolute), Err(ReferenceError::Outside { .. })));
        assert!(matches!(found("src/missing.rs:1"), Err(ReferenceError::Missing(_))));
        assert_eq!(found("src/auth.rs:0"), Err(ReferenceError::LineZero));
    }

    #[test]
    fn without_folders_nothing_opens_and_the_reason_says_where_to_add_one() {
        let none = folders(&[]);
        let why = resolve(&none, &reference("src/a.rs:1")).unwrap_err();
        assert!(
            matches!(why, ReferenceError::NoFolders(_))
                && why.to_string().contains("Settings -> Tools -> Folders")
        );
        let missing = folders(&["/no/such/folder".into(), "relative/dir".into()]);
        assert_eq!(resolve(&missing, &reference("src/a.rs:1")), Err(ReferenceError::FoldersMissing));
    }
}
