//! The file operations behind the tools, synchronous and confined through [`Root`]. Each
//! returns the text the model sees; errors name the path as the model wrote it.

use std::fs;
use std::io::{ErrorKind, Read};
use std::path::Path;

use crate::confine::Root;

/// Larger files would flood the model's context (and most of them are not text anyway).
pub const MAX_READ_BYTES: u64 = 5 * 1024 * 1024;

pub fn list_directory(root: &Root, path: &str) -> Result<String, String> {
    let shown = shown(path);
    let dir = root.resolve(path)?;
    let meta = fs::metadata(&dir).map_err(|e| fail("list", shown, &e))?;
    if !meta.is_dir() {
        return Err(format!("{shown} is a file, not a folder; use read_file to read it"));
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(&dir).map_err(|e| fail("list", shown, &e))? {
        let entry = entry.map_err(|e| fail("list", shown, &e))?;
        // is_dir follows links, so a link to a folder is listed as the folder it opens.
        let marker = if entry.path().is_dir() { "[DIR]" } else { "[FILE]" };
        entries.push((entry.file_name().to_string_lossy().into_owned(), marker));
    }
    if entries.is_empty() {
        return Ok(format!("{shown} is empty."));
    }
    entries.sort();
    Ok(entries.iter().map(|(name, marker)| format!("{marker} {name}")).collect::<Vec<_>>().join("\n"))
}

pub fn read_file(root: &Root, path: &str) -> Result<String, String> {
    let shown = shown(path);
    let file = root.resolve(path)?;
    let meta = fs::metadata(&file).map_err(|e| fail("read", shown, &e))?;
    if meta.is_dir() {
        return Err(format!("{shown} is a folder, not a file; use list_directory to see what it holds"));
    }
    let too_big =
        || format!("{shown} is larger than the {} MiB that read_file accepts", MAX_READ_BYTES >> 20);
    if meta.len() > MAX_READ_BYTES {
        return Err(too_big());
    }
    // Read through a limit as well: the size on disk can change, and some files report none.
    let mut bytes = Vec::new();
    fs::File::open(&file)
        .and_then(|f| f.take(MAX_READ_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| fail("read", shown, &e))?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|_| {
        format!("{shown} is not UTF-8 text (perhaps a binary file), so read_file cannot show it")
    })
}

pub fn write_file(root: &Root, path: &str, content: &str) -> Result<String, String> {
    let shown = shown(path);
    let file = root.resolve(path)?;
    if file.is_dir() {
        return Err(format!("{shown} is a folder; write_file needs the path of a file"));
    }
    if !file.parent().is_some_and(Path::is_dir) {
        return Err(format!(
            "the folder that would hold {shown} does not exist; create it first with create_folder"
        ));
    }
    let existed = file.exists();
    fs::write(&file, content).map_err(|e| fail("write", shown, &e))?;
    let verb = if existed { "Overwrote" } else { "Created" };
    Ok(format!("{verb} {shown} ({} bytes).", content.len()))
}

pub fn create_folder(root: &Root, path: &str) -> Result<String, String> {
    let shown = shown(path);
    let dir = root.resolve(path)?;
    if dir.is_dir() {
        return Ok(format!("{shown} already exists."));
    }
    if dir.exists() {
        return Err(format!("{shown} already exists as a file"));
    }
    fs::create_dir_all(&dir).map_err(|e| fail("create", shown, &e))?;
    Ok(format!("Created folder {shown}."))
}

pub fn move_file(root: &Root, source: &str, destination: &str) -> Result<String, String> {
    let from = root.resolve_entry(source)?;
    let to = root.resolve_entry(destination)?;
    if fs::symlink_metadata(&from).is_err() {
        return Err(format!("{source} does not exist"));
    }
    if fs::symlink_metadata(&to).is_ok() {
        return Err(format!(
            "{destination} already exists, and move_file never overwrites; choose another destination"
        ));
    }
    if !to.parent().is_some_and(Path::is_dir) {
        return Err(format!(
            "the folder that would hold {destination} does not exist; create it first with create_folder"
        ));
    }
    if to.starts_with(&from) {
        return Err(format!("cannot move {source} into itself"));
    }
    fs::rename(&from, &to).map_err(|e| format!("could not move {source} to {destination}: {e}"))?;
    Ok(format!("Moved {source} to {destination}."))
}

pub fn rename_file(root: &Root, path: &str, new_name: &str) -> Result<String, String> {
    if new_name.is_empty() || new_name == "." || new_name == ".." || new_name.contains(['/', '\\', '\0']) {
        return Err(format!(
            "{new_name:?} is not a bare file name; new_name must be a name like report.txt, without \
             folders (use move_file to move something into another folder)"
        ));
    }
    let from = root.resolve_entry(path)?;
    if fs::symlink_metadata(&from).is_err() {
        return Err(format!("{path} does not exist"));
    }
    let to = from.with_file_name(new_name);
    if fs::symlink_metadata(&to).is_ok() {
        return Err(format!("{new_name} already exists beside {path}, and rename_file never overwrites"));
    }
    fs::rename(&from, &to).map_err(|e| format!("could not rename {path} to {new_name}: {e}"))?;
    Ok(format!("Renamed {path} to {new_name}."))
}

/// An empty path means the root; messages call it ".".
fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

fn fail(action: &str, shown: &str, error: &std::io::Error) -> String {
    match error.kind() {
        ErrorKind::NotFound => format!("{shown} does not exist"),
        ErrorKind::PermissionDenied => format!("permission denied: cannot {action} {shown}"),
        _ => format!("could not {action} {shown}: {error}"),
    }
}
