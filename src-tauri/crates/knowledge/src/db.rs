//! The index on disk: one SQLite file beside the history (`knowledge.db`), its own so that
//! turning the feature off removes it whole. Folders, the files indexed in them (with the size
//! and time they had, which is how a change is seen), their passages, an FTS5 index of the
//! passages (BM25) and each passage's embedding, kept as 8-bit integers with a scale.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use crate::KnowledgeError;

const SCHEMA: &str = "
PRAGMA journal_mode = WAL;
PRAGMA foreign_keys = ON;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS folders (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    added_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
    path TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    modified_ns INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS files_folder ON files(folder_id);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL,
    text TEXT NOT NULL,
    vector BLOB,
    scale REAL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
-- The words of each passage (its text, its file's name and headings, identifiers split at
-- camelCase), without a copy of the text: the chunks table has it.
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    words, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_gone AFTER DELETE ON chunks BEGIN
    DELETE FROM chunks_fts WHERE rowid = old.id;
END;
";

/// A folder being indexed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Folder {
    pub id: i64,
    pub path: PathBuf,
    pub files: u64,
    pub chunks: u64,
}

/// A file as the index last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    pub id: i64,
    pub size: u64,
    pub modified_ns: i64,
}

/// A passage ready to be stored.
pub struct NewChunk<'a> {
    pub start: usize,
    pub end: usize,
    pub heading: &'a str,
    pub text: &'a str,
    pub words: String,
}

/// A passage waiting for its vector, with what the model reads of it.
pub struct Pending {
    pub id: i64,
    /// Its file's path inside its folder.
    pub relative: String,
    pub heading: String,
    pub text: String,
}

/// A stored passage, as a search returns it.
#[derive(Debug, Clone)]
pub struct StoredChunk {
    pub id: i64,
    pub path: PathBuf,
    pub start: usize,
    pub end: usize,
    pub heading: String,
    pub text: String,
}

/// The columns [`stored_chunk`] reads, in its order.
const CHUNK_COLUMNS: &str = "c.id, f.path, c.start_line, c.end_line, c.heading, c.text";

/// A passage's row, selected with [`CHUNK_COLUMNS`].
fn stored_chunk(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredChunk> {
    Ok(StoredChunk {
        id: r.get(0)?,
        path: PathBuf::from(r.get::<_, String>(1)?),
        start: r.get::<_, i64>(2)? as usize,
        end: r.get::<_, i64>(3)? as usize,
        heading: r.get(4)?,
        text: r.get(5)?,
    })
}

pub struct Db {
    conn: Connection,
}

fn sql(e: rusqlite::Error) -> KnowledgeError {
    KnowledgeError::Database(e.to_string())
}

impl Db {
    pub fn open(path: &Path) -> Result<Self, KnowledgeError> {
        let conn = Connection::open(path).map_err(sql)?;
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(sql)?;
        conn.execute_batch(SCHEMA).map_err(sql)?;
        Ok(Self { conn })
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>, KnowledgeError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(sql)
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), KnowledgeError> {
        self.conn
            .execute(
                "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2",
                [key, value],
            )
            .map(drop)
            .map_err(sql)
    }

    pub fn add_folder(&self, path: &Path, now: i64) -> Result<i64, KnowledgeError> {
        let text = path.to_string_lossy();
        self.conn
            .execute("INSERT OR IGNORE INTO folders (path, added_at) VALUES (?1, ?2)", params![text, now])
            .map_err(sql)?;
        self.conn.query_row("SELECT id FROM folders WHERE path = ?1", [text], |r| r.get(0)).map_err(sql)
    }

    /// Removes a folder and everything indexed from it; false when it was not there.
    pub fn remove_folder(&self, path: &Path) -> Result<bool, KnowledgeError> {
        let n = self
            .conn
            .execute("DELETE FROM folders WHERE path = ?1", [path.to_string_lossy()])
            .map_err(sql)?;
        Ok(n > 0)
    }

    /// The folders' paths only: what a turn's tool list and an answer's references need, without
    /// counting every passage.
    pub fn folder_paths(&self) -> Result<Vec<(i64, PathBuf)>, KnowledgeError> {
        let mut statement = self.conn.prepare("SELECT id, path FROM folders ORDER BY path").map_err(sql)?;
        let rows = statement
            .query_map([], |r| Ok((r.get(0)?, PathBuf::from(r.get::<_, String>(1)?))))
            .map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }

    pub fn folders(&self) -> Result<Vec<Folder>, KnowledgeError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT f.id, f.path,
                    (SELECT COUNT(*) FROM files WHERE folder_id = f.id),
                    (SELECT COUNT(*) FROM chunks c JOIN files x ON c.file_id = x.id WHERE x.folder_id = f.id)
                 FROM folders f ORDER BY f.path",
            )
            .map_err(sql)?;
        let rows = statement
            .query_map([], |r| {
                Ok(Folder {
                    id: r.get(0)?,
                    path: PathBuf::from(r.get::<_, String>(1)?),
                    files: r.get::<_, i64>(2)? as u64,
                    chunks: r.get::<_, i64>(3)? as u64,
                })
            })
            .map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }

    /// Every file indexed under a folder, by path.
    pub fn seen(&self, folder_id: i64) -> Result<std::collections::HashMap<PathBuf, Seen>, KnowledgeError> {
        let mut statement = self
            .conn
            .prepare("SELECT id, path, size, modified_ns FROM files WHERE folder_id = ?1")
            .map_err(sql)?;
        let rows = statement
            .query_map([folder_id], |r| {
                Ok((
                    PathBuf::from(r.get::<_, String>(1)?),
                    Seen { id: r.get(0)?, size: r.get::<_, i64>(2)? as u64, modified_ns: r.get(3)? },
                ))
            })
            .map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }

    /// One file as the index last saw it.
    pub fn seen_one(&self, path: &Path) -> Result<Option<Seen>, KnowledgeError> {
        self.conn
            .query_row(
                "SELECT id, size, modified_ns FROM files WHERE path = ?1",
                [path.to_string_lossy()],
                |r| Ok(Seen { id: r.get(0)?, size: r.get::<_, i64>(1)? as u64, modified_ns: r.get(2)? }),
            )
            .optional()
            .map_err(sql)
    }

    /// Replaces what is indexed of one file, in one transaction.
    pub fn put_file(
        &mut self,
        folder_id: i64,
        path: &Path,
        size: u64,
        modified_ns: i64,
        chunks: &[NewChunk<'_>],
    ) -> Result<(), KnowledgeError> {
        let tx = self.conn.transaction().map_err(sql)?;
        let text = path.to_string_lossy();
        tx.execute("DELETE FROM files WHERE path = ?1", [&text]).map_err(sql)?;
        tx.execute(
            "INSERT INTO files (folder_id, path, size, modified_ns) VALUES (?1, ?2, ?3, ?4)",
            params![folder_id, text, size as i64, modified_ns],
        )
        .map_err(sql)?;
        let file_id = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO chunks (file_id, start_line, end_line, heading, text)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                )
                .map_err(sql)?;
            let mut words =
                tx.prepare("INSERT INTO chunks_fts (rowid, words) VALUES (?1, ?2)").map_err(sql)?;
            for c in chunks {
                insert
                    .execute(params![file_id, c.start as i64, c.end as i64, c.heading, c.text])
                    .map_err(sql)?;
                words.execute(params![tx.last_insert_rowid(), c.words]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// How many passages have no vector.
    pub fn pending(&self) -> Result<u64, KnowledgeError> {
        self.conn
            .query_row("SELECT COUNT(*) FROM chunks WHERE vector IS NULL", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(sql)
    }

    /// Up to `limit` passages without a vector.
    pub fn pending_batch(&self, limit: usize) -> Result<Vec<Pending>, KnowledgeError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT c.id, f.path, d.path, c.heading, c.text FROM chunks c
                 JOIN files f ON c.file_id = f.id JOIN folders d ON f.folder_id = d.id
                 WHERE c.vector IS NULL LIMIT ?1",
            )
            .map_err(sql)?;
        let rows = statement
            .query_map([limit as i64], |r| {
                let (file, folder): (String, String) = (r.get(1)?, r.get(2)?);
                let relative = file.strip_prefix(&folder).unwrap_or(&file).trim_start_matches('/').to_owned();
                Ok(Pending { id: r.get(0)?, relative, heading: r.get(3)?, text: r.get(4)? })
            })
            .map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }

    /// Stores passages' vectors (those deleted meanwhile are skipped), in one transaction.
    pub fn set_vectors(&mut self, ids: &[i64], vectors: &[Vec<f32>]) -> Result<(), KnowledgeError> {
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut update =
                tx.prepare("UPDATE chunks SET vector = ?2, scale = ?3 WHERE id = ?1").map_err(sql)?;
            for (id, vector) in ids.iter().zip(vectors) {
                let (bytes, scale) = quantize(vector);
                update.execute(params![id, bytes, scale]).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)
    }

    /// Forgets files: the given paths and everything under them (a folder deleted or renamed).
    pub fn forget(&self, path: &Path) -> Result<usize, KnowledgeError> {
        let text = path.to_string_lossy();
        let under = format!("{}/%", text.trim_end_matches('/').replace('%', "\\%").replace('_', "\\_"));
        self.conn
            .execute("DELETE FROM files WHERE path = ?1 OR path LIKE ?2 ESCAPE '\\'", [&*text, &under])
            .map_err(sql)
    }

    pub fn forget_id(&self, id: i64) -> Result<(), KnowledgeError> {
        self.conn.execute("DELETE FROM files WHERE id = ?1", [id]).map(drop).map_err(sql)
    }

    /// The best `limit` passages for an FTS5 query, best first.
    pub fn lexical(&self, query: &str, limit: usize) -> Result<Vec<i64>, KnowledgeError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?1 ORDER BY bm25(chunks_fts) LIMIT ?2",
            )
            .map_err(sql)?;
        let rows = statement.query_map(params![query, limit as i64], |r| r.get(0)).map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    }

    /// Every stored embedding, for the in-memory scan.
    pub fn vectors(&self, mut each: impl FnMut(i64, &[u8], f32)) -> Result<(), KnowledgeError> {
        let mut statement = self
            .conn
            .prepare("SELECT id, vector, scale FROM chunks WHERE vector IS NOT NULL")
            .map_err(sql)?;
        let mut rows = statement.query([]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let id: i64 = row.get(0).map_err(sql)?;
            let scale: f64 = row.get(2).map_err(sql)?;
            let blob = row
                .get_ref(1)
                .map_err(sql)?
                .as_blob()
                .map_err(|e| KnowledgeError::Database(e.to_string()))?;
            each(id, blob, scale as f32);
        }
        Ok(())
    }

    pub fn chunks(&self, ids: &[i64]) -> Result<Vec<StoredChunk>, KnowledgeError> {
        let mut statement = self
            .conn
            .prepare(&format!(
                "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON c.file_id = f.id WHERE c.id = ?1"
            ))
            .map_err(sql)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let found = statement.query_row([id], stored_chunk).optional().map_err(sql)?;
            out.extend(found);
        }
        Ok(out)
    }

    /// The passage of `path` that spans exactly `start..=end`.
    pub fn chunk_at(
        &self,
        path: &Path,
        start: usize,
        end: usize,
    ) -> Result<Option<StoredChunk>, KnowledgeError> {
        self.conn
            .query_row(
                &format!(
                    "SELECT {CHUNK_COLUMNS} FROM chunks c JOIN files f ON c.file_id = f.id
                     WHERE f.path = ?1 AND c.start_line = ?2 AND c.end_line = ?3"
                ),
                params![path.to_string_lossy(), start as i64, end as i64],
                stored_chunk,
            )
            .optional()
            .map_err(sql)
    }

    pub fn counts(&self) -> Result<(u64, u64), KnowledgeError> {
        self.conn
            .query_row("SELECT (SELECT COUNT(*) FROM files), (SELECT COUNT(*) FROM chunks)", [], |r| {
                Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64))
            })
            .map_err(sql)
    }

    /// Drops every embedding (the embedding model changed).
    pub fn clear_vectors(&self) -> Result<(), KnowledgeError> {
        self.conn.execute("UPDATE chunks SET vector = NULL, scale = NULL", []).map(drop).map_err(sql)
    }
}

/// A unit vector as signed bytes and the scale that turns them back (`byte * scale`): a
/// quarter of the size of f32, and the ranking of cosine similarities barely moves.
pub fn quantize(v: &[f32]) -> (Vec<u8>, f64) {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let bytes = v.iter().map(|x| ((x / scale).round().clamp(-127.0, 127.0) as i8) as u8).collect();
    (bytes, scale as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantized_vectors_keep_their_direction() {
        let v: Vec<f32> = (0..384).map(|i| ((i * 37 % 101) as f32 - 50.0) / 300.0).collect();
        let (q, scale) = quantize(&v);
        let back: Vec<f32> = q.iter().map(|&b| (b as i8) as f32 * scale as f32).collect();
        let cos = perch_retrieval::cosine(&v, &back);
        assert!(cos > 0.999, "{cos}");
    }

    #[test]
    fn a_file_replaced_leaves_no_old_passage_in_either_index() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::open(&dir.path().join("k.db")).unwrap();
        let folder = db.add_folder(Path::new("/p"), 0).unwrap();
        let file = Path::new("/p/a.md");
        let chunk =
            |text: &'static str| NewChunk { start: 1, end: 1, heading: "", text, words: text.to_owned() };
        db.put_file(folder, file, 3, 1, &[chunk("alpha retry"), chunk("beta")]).unwrap();
        assert_eq!(db.lexical("\"retry\"", 10).unwrap().len(), 1);
        assert_eq!(db.pending().unwrap(), 2);
        db.put_file(folder, file, 3, 2, &[chunk("gamma")]).unwrap();
        let waiting = db.pending_batch(10).unwrap();
        assert_eq!(
            (waiting.len(), waiting[0].relative.as_str(), waiting[0].text.as_str()),
            (1, "a.md", "gamma")
        );
        db.set_vectors(&[waiting[0].id], &[vec![0.6, 0.8]]).unwrap();
        assert_eq!(db.pending().unwrap(), 0);
        assert!(db.lexical("\"retry\"", 10).unwrap().is_empty());
        assert_eq!(db.counts().unwrap(), (1, 1));
        let mut n = 0;
        db.vectors(|_, _, _| n += 1).unwrap();
        assert_eq!(n, 1);
        // A folder's files go with it, and their words with them.
        assert!(db.remove_folder(Path::new("/p")).unwrap());
        assert_eq!(db.counts().unwrap(), (0, 0));
        assert!(db.lexical("\"gamma\"", 10).unwrap().is_empty());
    }

    #[test]
    fn forgetting_a_folder_path_takes_what_is_under_it_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = Db::open(&dir.path().join("k.db")).unwrap();
        let folder = db.add_folder(Path::new("/p"), 0).unwrap();
        for f in ["/p/docs/a.md", "/p/docs/b.md", "/p/docs_old/c.md", "/p/docsx.md"] {
            db.put_file(folder, Path::new(f), 1, 1, &[]).unwrap();
        }
        assert_eq!(db.forget(Path::new("/p/docs")).unwrap(), 2);
        let left: Vec<PathBuf> = db.seen(folder).unwrap().into_keys().collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }
}
