//! Images and text files attached to questions: stored once as files named by their content
//! hash, referenced by rows, and read back for the model when a question is sent or answered
//! again. A text file is stored as the block the model read (its path, and which lines).

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::context::estimate_tokens;
use super::{ChatError, FileInput, ImageInput};
use crate::files::{self, FileKind, FilesError, Limits, MAX_IMAGE_BYTES, TextFile};
use crate::providers::ImageData;
use crate::store::{Message, NewAttachment, Role};

/// The mime type of a stored file block.
const FILE_BLOCK_MIME: &str = "text/plain";

/// A picked or dropped file, checked: a text chip, an image chip, or too large (with the
/// number of first lines that would fit, to offer instead).
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attachable {
    Text { path: String, name: String, bytes: u32, tokens: u32, first_lines: Option<u32> },
    Image { image: ImageInput },
    TooLarge { path: String, message: String, lines_that_fit: u32 },
}

/// Checks a file before it becomes a chip (binary, size, encoding); `first_lines` accepts the
/// offer made for a file too large. An image is measured before it is read, so a huge one is
/// refused without being loaded. Blocking: run it off the async threads.
pub fn check(path: &Path, first_lines: Option<u32>) -> Result<Attachable, FilesError> {
    let name = path.file_name().map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy()).into_owned();
    if let FileKind::Image { mime, bytes } = files::inspect(path)? {
        if bytes > MAX_IMAGE_BYTES {
            return Err(FilesError::ImageTooLarge { path: path.to_owned(), bytes });
        }
        let data = std::fs::read(path).map_err(|source| FilesError::Io { path: path.to_owned(), source })?;
        let base64 = STANDARD.encode(data);
        return Ok(Attachable::Image {
            image: ImageInput { name, mime: mime.into(), base64, capture: None },
        });
    }
    let display = path.to_string_lossy().into_owned();
    let first = first_lines.map(|n| n as usize);
    match files::read_text(path, &Limits::default(), first, &CancellationToken::new()) {
        Ok(text) => Ok(Attachable::Text {
            bytes: u32::try_from(text.text.len()).unwrap_or(u32::MAX),
            tokens: u32::try_from(estimate_tokens(&text.block())).unwrap_or(u32::MAX),
            name,
            first_lines,
            path: display,
        }),
        // The chip names the file, and the offer is a button: the message says only why.
        Err(FilesError::TooLarge { bytes, limit, lines_that_fit, .. }) => Ok(Attachable::TooLarge {
            message: format!("{name} is {} KB; a file may be at most {} KB.", bytes / 1024, limit / 1024),
            path: display,
            lines_that_fit: u32::try_from(lines_that_fit).unwrap_or(u32::MAX),
        }),
        Err(e) => Err(e),
    }
}

fn extension(mime: &str) -> &'static str {
    match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/webp" => "webp",
        "image/gif" => "gif",
        FILE_BLOCK_MIME => "txt",
        _ => "bin",
    }
}

pub async fn save_images(agent: &Agent, message_id: i64, images: &[ImageInput]) -> Result<(), ChatError> {
    let mut sent_captures = Vec::new();
    for image in images {
        if let Some(id) = &image.capture {
            // A capture: the model's copy is the image; the original is kept beside it.
            let files = agent.captures().files(id).await.map_err(|e| ChatError::Invalid(e.to_string()))?;
            save_file(agent, message_id, "image", files.model, files.mime, &image.name, None).await?;
            // Stored as a file (not an image the model reads again), so the model never gets it twice.
            save_file(agent, message_id, "file", files.original, "image/png", &image.name, None).await?;
            sent_captures.push(id.clone());
            continue;
        }
        if !image.mime.starts_with("image/") {
            return Err(ChatError::Invalid(format!("{} is not an image", image.name)));
        }
        let bytes = STANDARD
            .decode(image.base64.trim())
            .map_err(|_| ChatError::Invalid(format!("{} could not be read as an image", image.name)))?;
        save_file(agent, message_id, "image", bytes, &image.mime, &image.name, None).await?;
    }
    // Sent captures leave the shelf: their files now live in the conversation's attachments.
    for id in sent_captures {
        let _ = agent.captures().remove(&id);
    }
    Ok(())
}

/// Stores each selection as the block the model reads, named by its application.
pub async fn save_selections(
    agent: &Agent,
    message_id: i64,
    selections: &[super::SelectionInput],
) -> Result<(), ChatError> {
    for s in selections {
        let block = perch_typing::selection_block(&s.app, &s.text).into_bytes();
        let name =
            if s.app.is_empty() { "selected text".to_owned() } else { format!("selected in {}", s.app) };
        save_file(agent, message_id, "file", block, FILE_BLOCK_MIME, &name, Some(&name)).await?;
    }
    Ok(())
}

/// Stores one file under its content hash (once, however often it is attached) and its row.
async fn save_file(
    agent: &Agent,
    message_id: i64,
    kind: &str,
    bytes: Vec<u8>,
    mime: &str,
    name: &str,
    original: Option<&str>,
) -> Result<(), ChatError> {
    if bytes.len() as u64 > MAX_IMAGE_BYTES {
        return Err(ChatError::Invalid(format!("{name} is larger than {} MB", MAX_IMAGE_BYTES >> 20)));
    }
    let hash = format!("{:x}", Sha256::digest(&bytes));
    let file = format!("{hash}.{}", extension(mime));
    let path = agent.data_dir().attachments_dir().join(&file);
    let len = bytes.len() as i64;
    if !path.exists() {
        tokio::fs::write(&path, bytes)
            .await
            .map_err(|e| ChatError::Invalid(format!("{name} could not be saved: {e}")))?;
    }
    let row = NewAttachment { kind, path: &file, mime, bytes: len, sha256: &hash, name: original };
    agent.store().add_attachment(message_id, row).await?;
    Ok(())
}

/// Reads a question's files before anything is saved: a file that is missing, binary or too
/// large refuses the question (the UI keeps it). Off the async threads; `stop` (the turn's
/// Stop) ends it, even in the middle of counting a huge log's lines. A passage picked with `#`
/// (`lines`) is read from the knowledge index, as the picker showed it (a PDF's page too); one
/// that is gone since (its file changed) refuses the question with what to do.
pub async fn read_files(
    agent: &Agent,
    inputs: &[FileInput],
    stop: &CancellationToken,
) -> Result<Vec<TextFile>, ChatError> {
    if inputs.is_empty() {
        return Ok(Vec::new());
    }
    let mut passages = Vec::new();
    for (at, input) in inputs.iter().enumerate() {
        if let Some((start, end)) = input.lines {
            passages.push((at, read_passage(agent, &input.path, start, end).await?));
        }
    }
    let (inputs, stop) = (inputs.to_vec(), stop.clone());
    let read = tokio::task::spawn_blocking(move || {
        let limits = Limits::default();
        let mut passages = passages.into_iter().peekable();
        let mut read = Vec::with_capacity(inputs.len());
        for (at, f) in inputs.iter().enumerate() {
            match passages.next_if(|(p, _)| *p == at) {
                Some((_, passage)) => read.push(passage),
                None => read.push(files::read_text(
                    Path::new(&f.path),
                    &limits,
                    f.first_lines.map(|n| n as usize),
                    &stop,
                )?),
            }
        }
        files::within_message_limit(&read, &limits)?;
        Ok::<_, FilesError>(read)
    });
    let read =
        read.await.map_err(|e| ChatError::Invalid(format!("reading the attached files failed: {e}")))?;
    Ok(read?)
}

/// One passage of the knowledge folders, as the index holds it now.
async fn read_passage(agent: &Agent, path: &str, start: u32, end: u32) -> Result<TextFile, ChatError> {
    let gone = || {
        ChatError::Invalid(format!(
            "{path}:{start}-{end} is no longer in your knowledge folders (the file changed since it was \
             picked): pick the passage again with #"
        ))
    };
    let passage = agent
        .knowledge()
        .passage(Path::new(path), start as usize, end as usize)
        .await
        .map_err(|e| ChatError::Invalid(format!("the picked passage could not be read: {e}")))?
        .ok_or_else(gone)?;
    let part = if passage.is_pdf() {
        files::Part::Page(passage.start)
    } else {
        files::Part::Lines(passage.start, passage.end)
    };
    Ok(TextFile {
        path: passage.path,
        text: passage.text,
        encoding: "UTF-8",
        shown_lines: None,
        part: Some(part),
    })
}

/// Stores each file as the block the model reads, named by its path.
pub async fn save_text_files(agent: &Agent, message_id: i64, read: &[TextFile]) -> Result<(), ChatError> {
    for file in read {
        let name = file.name();
        let block = file.block().into_bytes();
        save_file(agent, message_id, "file", block, FILE_BLOCK_MIME, &name, Some(&name)).await?;
    }
    Ok(())
}

/// Questions as the model reads them: each one's file blocks before its text. Every provider
/// gets them this way, in every later turn too. A stored block that went missing is skipped.
pub async fn with_file_blocks(
    agent: &Agent,
    conversation: &str,
    messages: Vec<Message>,
) -> Result<Vec<Message>, ChatError> {
    let blocks: Vec<_> = agent
        .store()
        .attachments(conversation)
        .await?
        .into_iter()
        .filter(|a| a.kind == "file" && a.mime == FILE_BLOCK_MIME)
        .collect();
    if blocks.is_empty() {
        return Ok(messages);
    }
    let mut out = Vec::with_capacity(messages.len());
    for mut m in messages {
        let mut text = String::new();
        for a in blocks.iter().filter(|a| a.message_id == m.id && m.role == Role::User) {
            match tokio::fs::read_to_string(agent.data_dir().attachments_dir().join(&a.path)).await {
                Ok(block) => text.push_str(&format!("{block}\n\n")),
                Err(e) => tracing::warn!(file = %a.path, error = %e, "an attached file is missing"),
            }
        }
        if !text.is_empty() {
            m.content = format!("{text}{}", m.content);
        }
        out.push(m);
    }
    Ok(out)
}

/// An edited question keeps the images of the one it replaces.
pub async fn copy_attachments(agent: &Agent, from: i64, to: i64) -> Result<(), ChatError> {
    let conversation = agent.store().call(move |c| {
        Ok(c.query_row("SELECT conversation_id FROM messages WHERE id = ?1", [from], |r| {
            r.get::<_, String>(0)
        })?)
    });
    for a in
        agent.store().attachments(&conversation.await?).await?.into_iter().filter(|a| a.message_id == from)
    {
        let hash = a.path.split('.').next().unwrap_or("");
        let row = NewAttachment {
            kind: &a.kind,
            path: &a.path,
            mime: &a.mime,
            bytes: a.bytes,
            sha256: hash,
            name: a.name.as_deref(),
        };
        agent.store().add_attachment(to, row).await?;
    }
    Ok(())
}

/// One image sent in a conversation, as a data URL for the chat's large view of it.
pub async fn image_url(agent: &Agent, conversation: &str, id: i64) -> Result<String, ChatError> {
    let image = agent
        .store()
        .attachments(conversation)
        .await?
        .into_iter()
        .find(|a| a.id == id && a.kind == "image")
        .ok_or_else(|| ChatError::Invalid(format!("this conversation has no image {id}")))?;
    let bytes = tokio::fs::read(agent.data_dir().attachments_dir().join(&image.path))
        .await
        .map_err(|e| ChatError::Invalid(format!("the image is no longer on this computer ({e})")))?;
    Ok(format!("data:{};base64,{}", image.mime, STANDARD.encode(bytes)))
}

/// The images of one message, encoded for a provider. Missing files are skipped with a warning.
pub async fn load_images(
    agent: &Agent,
    conversation: &str,
    message_id: i64,
) -> Result<Vec<ImageData>, ChatError> {
    let mut out = Vec::new();
    for a in agent.store().attachments(conversation).await? {
        if a.message_id != message_id || a.kind != "image" {
            continue;
        }
        match tokio::fs::read(agent.data_dir().attachments_dir().join(&a.path)).await {
            Ok(bytes) => out.push(ImageData { mime: a.mime, base64: STANDARD.encode(bytes) }),
            Err(e) => tracing::warn!(file = %a.path, error = %e, "an attached image is missing"),
        }
    }
    Ok(out)
}
