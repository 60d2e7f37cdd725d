//! Cancellation: the stdin reader marks a request cancelled the moment its `cancel` line
//! arrives, while the model keeps working on the main thread; the generation loop looks before
//! every token. The reader also notes how many tokens the request had produced by then, so the
//! reply can say how many came after (0 or 1). When stdin closes (Perch exited or died), every
//! request is cancelled: nobody is left to read the answer.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use perch_llm_protocol::wire::RequestId;

#[derive(Default)]
pub struct Cancels {
    /// Cancelled requests, with the running request's token count when the cancel arrived.
    cancelled: Mutex<HashMap<RequestId, u64>>,
    /// Tokens the running request has produced.
    produced: AtomicU64,
    /// Stdin closed: everything is cancelled, and nothing more is served.
    closed: AtomicBool,
}

impl Cancels {
    pub fn cancel(&self, id: RequestId) {
        let produced = self.produced.load(Ordering::SeqCst);
        self.lock().entry(id).or_insert(produced);
    }

    pub fn is_cancelled(&self, id: RequestId) -> bool {
        self.is_closed() || self.lock().contains_key(&id)
    }

    /// Stdin closed: the running request stops before its next token.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// A new request starts: nothing produced yet.
    pub fn start(&self) {
        self.produced.store(0, Ordering::SeqCst);
    }

    pub fn progress(&self, produced: u64) {
        self.produced.store(produced, Ordering::SeqCst);
    }

    /// Tokens produced between the cancel's arrival and `produced`.
    pub fn tokens_after_cancel(&self, id: RequestId, produced: u64) -> Option<u32> {
        let at = *self.lock().get(&id)?;
        u32::try_from(produced.saturating_sub(at)).ok()
    }

    /// Forgets a finished request.
    pub fn finish(&self, id: RequestId) {
        self.lock().remove(&id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, u64>> {
        self.cancelled.lock().unwrap_or_else(|p| p.into_inner())
    }
}
