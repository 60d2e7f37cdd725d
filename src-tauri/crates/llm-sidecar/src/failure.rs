//! A request that could not be answered, as the protocol reports it: what loading, the prompt
//! and generation each fail with.

use perch_llm_protocol::wire::ErrorKind;

#[derive(Debug)]
pub struct Failure {
    pub kind: ErrorKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}
