//! The signatures the fake puts on thinking, function calls and redacted thinking, as the real
//! services do: a hash of what they sign, so a changed byte fails as it does at the service.

use serde_json::Value;

/// The signature the fake puts on `content` (thinking text, a function call, redacted data).
pub fn sign(content: &str) -> String {
    // FNV-1a, twice with different seeds, hex: stable across runs and platforms.
    let hash =
        |seed: u64| content.bytes().fold(seed, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("fake-sig-{:016x}{:016x}", hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4))
}

/// The signature of a Gemini function call: over its name and arguments.
pub fn sign_call(name: &str, args: &Value) -> String {
    sign(&format!("{name}\u{0}{args}"))
}

/// Redacted thinking as the fake sends it: opaque data that carries its own check.
pub fn redacted(payload: &str) -> String {
    format!("{payload}.{}", sign(payload))
}

/// Whether redacted thinking came back as the fake sent it.
pub fn redacted_is_intact(data: &str) -> bool {
    data.rsplit_once('.').is_some_and(|(payload, sig)| sign(payload) == sig)
}
