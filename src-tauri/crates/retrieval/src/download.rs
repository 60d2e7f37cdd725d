//! The MiniLM files, fetched with `perch-download` (resumable, checked against their sha256).

pub use perch_download::{DownloadError, Fetch, Progress, RemoteFile, fetch, hash_file, missing, remaining};

/// all-MiniLM-L6-v2 as [`MiniLm::load`](crate::MiniLm::load) reads it. Its `config.json` is
/// built in, so only the weights and the tokenizer are fetched.
pub const MINILM_FILES: &[RemoteFile] = &[
    RemoteFile::fixed(
        "model.safetensors",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        90_868_376,
    ),
    RemoteFile::fixed(
        "tokenizer.json",
        "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        466_247,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_minilm_files_are_huggingface_s() {
        assert_eq!(MINILM_FILES.len(), 2);
        for f in MINILM_FILES {
            assert!(
                f.url.starts_with(
                    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/"
                )
            );
            assert!(f.url.ends_with(&*f.name));
            assert_eq!(f.sha256.len(), 64);
        }
    }
}
