//! Parsing and validating requests. Every failure names what was wrong, and carries the
//! request's id whenever one could be read, so the client can match the error to its request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Size limits the server enforces; all are settings in Perch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest review content, in characters.
    pub max_content_chars: usize,
    /// Longest request line, in bytes, newline excluded.
    pub max_line_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_content_chars: 100_000, max_line_bytes: 1 << 20 }
    }
}

/// A request as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: Value,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub payload: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: Value,
    pub success: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Response {
    pub fn ok(id: Value, data: Value) -> Self {
        Self { id, success: true, data: Some(data), error: None }
    }
    pub fn err(id: Value, error: impl Into<String>) -> Self {
        Self { id, success: false, data: None, error: Some(error.into()) }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Replace,
    Append,
    UpdateSection,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Replace => "replace",
            Mode::Append => "append",
            Mode::UpdateSection => "update-section",
        }
    }
}

impl std::str::FromStr for Mode {
    type Err = ProtocolError;
    fn from_str(s: &str) -> Result<Self, ProtocolError> {
        match s {
            "replace" => Ok(Mode::Replace),
            "append" => Ok(Mode::Append),
            "update-section" => Ok(Mode::UpdateSection),
            other => Err(ProtocolError::UnknownMode(other.to_owned())),
        }
    }
}

/// The payload of `present_review`, validated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PresentReview {
    pub content: String,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    #[serde(rename = "baseUri")]
    pub base_uri: String,
}

/// How `screenshot` captures; absent means the mode set in Perch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScreenshotMode {
    Fullscreen,
    Precision,
    Window,
}

impl ScreenshotMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fullscreen => "fullscreen",
            Self::Precision => "precision",
            Self::Window => "window",
        }
    }
}

impl std::str::FromStr for ScreenshotMode {
    type Err = ProtocolError;
    fn from_str(s: &str) -> Result<Self, ProtocolError> {
        match s {
            "fullscreen" => Ok(Self::Fullscreen),
            "precision" => Ok(Self::Precision),
            "window" => Ok(Self::Window),
            other => Err(ProtocolError::UnknownScreenshotMode(other.to_owned())),
        }
    }
}

/// Requests for the app itself (its window and its shortcut's actions), for users who bind
/// keys in their desktop's settings instead of Perch's global shortcuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppCommand {
    /// Bring the window forward (out of mini mode).
    Show,
    /// Show the window, or hide it when it is in front.
    Toggle,
    /// What the screenshot shortcut does, in this mode or the one set in Perch.
    Screenshot { mode: Option<ScreenshotMode> },
    /// `perch selection`: what the selection shortcut does: the focused application's selected
    /// text into Perch's composer.
    ActOnSelection,
    /// `perch dictate --toggle`: start dictate-anywhere, or stop it (the words are then typed).
    DictateToggle,
    /// `perch update check`: is there a newer Perch?
    UpdateCheck,
    /// `perch update apply`: download it, verify it and install it (or save it, where this
    /// copy cannot replace itself). Takes as long as the download.
    UpdateApply,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    PresentReview(PresentReview),
    GetSelection,
    Ping,
    App(AppCommand),
    /// A connection (Google) was changed from the command line: the app's servers that use it
    /// start again with what it now allows.
    ConnectionsChanged,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    #[error("a request must be a JSON object with \"id\", \"type\" and \"payload\"")]
    NotAnObject,
    #[error("the request has no \"id\"")]
    MissingId,
    #[error("the request has no \"type\"")]
    MissingType,
    #[error(
        "unknown request type {0:?}; expected present_review, get_selection, ping, show, toggle or screenshot"
    )]
    UnknownType(String),
    #[error("present_review needs a \"payload\" object")]
    MissingPayload,
    #[error("present_review needs \"content\" (the review's markdown)")]
    MissingContent,
    #[error("the review content is empty")]
    EmptyContent,
    #[error("the review content has {chars} characters; the limit is {limit}")]
    ContentTooLong { chars: usize, limit: usize },
    #[error("unknown mode {0:?}; expected replace, append or update-section")]
    UnknownMode(String),
    #[error("update-section needs \"section\", the heading of the section to update")]
    MissingSection,
    #[error("present_review needs \"baseUri\", the folder file references are relative to")]
    MissingBaseUri,
    #[error("{field} must be a string")]
    NotAString { field: &'static str },
    #[error("unknown screenshot mode {0:?}; expected fullscreen, precision or window")]
    UnknownScreenshotMode(String),
    #[error("{0} takes no payload fields; got {1:?}")]
    UnexpectedField(&'static str, String),
    #[error("the request line is longer than {limit} bytes")]
    LineTooLong { limit: usize },
}

/// Parses one request line. On failure, returns the id (or null) with the reason.
pub fn parse_request(line: &[u8], limits: &Limits) -> Result<(Value, Command), (Value, ProtocolError)> {
    if line.len() > limits.max_line_bytes {
        return Err((Value::Null, ProtocolError::LineTooLong { limit: limits.max_line_bytes }));
    }
    let value: Value =
        serde_json::from_slice(line).map_err(|e| (Value::Null, ProtocolError::InvalidJson(e.to_string())))?;
    let Value::Object(mut map) = value else {
        return Err((Value::Null, ProtocolError::NotAnObject));
    };
    let id = match map.remove("id") {
        None | Some(Value::Null) => return Err((Value::Null, ProtocolError::MissingId)),
        Some(id) => id,
    };
    let fail = |e| Err((id.clone(), e));
    let kind = match map.remove("type") {
        Some(Value::String(kind)) => kind,
        Some(_) => return fail(ProtocolError::NotAString { field: "type" }),
        None => return fail(ProtocolError::MissingType),
    };
    let command = match kind.as_str() {
        "ping" => Command::Ping,
        "get_selection" => Command::GetSelection,
        "screenshot" => match screenshot(map.remove("payload")) {
            Ok(mode) => Command::App(AppCommand::Screenshot { mode }),
            Err(e) => return fail(e),
        },
        "present_review" => match present_review(map.remove("payload"), limits) {
            Ok(review) => Command::PresentReview(review),
            Err(e) => return fail(e),
        },
        fieldless => match FIELDLESS.iter().find(|(name, _)| *name == fieldless) {
            Some((name, command)) => match no_fields(map.remove("payload"), name) {
                Ok(()) => command.clone(),
                Err(e) => return fail(e),
            },
            None => return fail(ProtocolError::UnknownType(kind.clone())),
        },
    };
    Ok((id, command))
}

/// The requests that carry no payload, by type.
const FIELDLESS: [(&str, Command); 7] = [
    ("show", Command::App(AppCommand::Show)),
    ("toggle", Command::App(AppCommand::Toggle)),
    ("act_on_selection", Command::App(AppCommand::ActOnSelection)),
    ("dictate_toggle", Command::App(AppCommand::DictateToggle)),
    ("update_check", Command::App(AppCommand::UpdateCheck)),
    ("update_apply", Command::App(AppCommand::UpdateApply)),
    ("connections_changed", Command::ConnectionsChanged),
];

/// A fieldless request accepts no payload, an empty one, or null; anything else is a mistake
/// worth reporting rather than ignoring.
fn no_fields(payload: Option<Value>, kind: &'static str) -> Result<(), ProtocolError> {
    match payload {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(map)) => match map.keys().next() {
            None => Ok(()),
            Some(key) => Err(ProtocolError::UnexpectedField(kind, key.clone())),
        },
        Some(_) => Err(ProtocolError::NotAnObject),
    }
}

fn screenshot(payload: Option<Value>) -> Result<Option<ScreenshotMode>, ProtocolError> {
    let mut map = match payload {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(ProtocolError::NotAnObject),
    };
    let mode = match map.remove("mode") {
        None | Some(Value::Null) => None,
        Some(Value::String(mode)) => Some(mode.parse()?),
        Some(_) => return Err(ProtocolError::NotAString { field: "mode" }),
    };
    match map.keys().next() {
        Some(key) => Err(ProtocolError::UnexpectedField("screenshot", key.clone())),
        None => Ok(mode),
    }
}

fn present_review(payload: Option<Value>, limits: &Limits) -> Result<PresentReview, ProtocolError> {
    let Some(Value::Object(mut p)) = payload else { return Err(ProtocolError::MissingPayload) };
    let mut string = |field: &'static str, missing: ProtocolError| match p.remove(field) {
        None | Some(Value::Null) => Err(missing),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ProtocolError::NotAString { field }),
    };
    let content = string("content", ProtocolError::MissingContent)?;
    let base_uri = string("baseUri", ProtocolError::MissingBaseUri)?;
    let mode = match string("mode", ProtocolError::MissingContent) {
        Ok(mode) => mode.parse()?,
        Err(ProtocolError::MissingContent) => Mode::Replace,
        Err(e) => return Err(e),
    };
    let section = match string("section", ProtocolError::MissingSection) {
        Ok(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Ok(_) | Err(ProtocolError::MissingSection) => None,
        Err(e) => return Err(e),
    };
    if content.trim().is_empty() {
        return Err(ProtocolError::EmptyContent);
    }
    let chars = content.chars().count();
    if chars > limits.max_content_chars {
        return Err(ProtocolError::ContentTooLong { chars, limit: limits.max_content_chars });
    }
    if base_uri.trim().is_empty() {
        return Err(ProtocolError::MissingBaseUri);
    }
    if mode == Mode::UpdateSection && section.is_none() {
        return Err(ProtocolError::MissingSection);
    }
    Ok(PresentReview { content, mode, section, base_uri })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<(Value, Command), (Value, ProtocolError)> {
        parse_request(v.to_string().as_bytes(), &Limits::default())
    }

    #[test]
    fn a_full_present_review_parses() {
        let (id, cmd) = parse(json!({"id": "r1", "type": "present_review", "payload": {
            "content": "# Review", "mode": "update-section", "section": " Summary ", "baseUri": "/repo"}}))
        .unwrap();
        assert_eq!(id, json!("r1"));
        assert_eq!(
            cmd,
            Command::PresentReview(PresentReview {
                content: "# Review".into(),
                mode: Mode::UpdateSection,
                section: Some("Summary".into()),
                base_uri: "/repo".into(),
            })
        );
    }

    #[test]
    fn mode_defaults_to_replace_and_numbers_are_fine_as_ids() {
        let (id, cmd) =
            parse(json!({"id": 7, "type": "present_review", "payload": {"content": "x", "baseUri": "/r"}}))
                .unwrap();
        assert_eq!(id, json!(7));
        assert!(matches!(cmd, Command::PresentReview(PresentReview { mode: Mode::Replace, .. })));
        assert_eq!(parse(json!({"id": 1, "type": "ping"})).unwrap().1, Command::Ping);
        assert_eq!(
            parse(json!({"id": 1, "type": "get_selection", "payload": {}})).unwrap().1,
            Command::GetSelection
        );
    }

    #[test]
    fn each_bad_request_gets_its_own_reason_and_keeps_the_id() {
        let cases = [
            (json!({"id": 1, "type": "nope"}), ProtocolError::UnknownType("nope".into())),
            (json!({"id": 1, "type": "present_review"}), ProtocolError::MissingPayload),
            (
                json!({"id": 1, "type": "present_review", "payload": {"baseUri": "/r"}}),
                ProtocolError::MissingContent,
            ),
            (
                json!({"id": 1, "type": "present_review", "payload": {"content": "  \n", "baseUri": "/r"}}),
                ProtocolError::EmptyContent,
            ),
            (
                json!({"id": 1, "type": "present_review", "payload": {"content": "x", "baseUri": "/r", "mode": "merge"}}),
                ProtocolError::UnknownMode("merge".into()),
            ),
            (
                json!({"id": 1, "type": "present_review", "payload": {"content": "x", "baseUri": "/r", "mode": "update-section"}}),
                ProtocolError::MissingSection,
            ),
            (
                json!({"id": 1, "type": "present_review", "payload": {"content": "x"}}),
                ProtocolError::MissingBaseUri,
            ),
            (
                json!({"id": 1, "type": "present_review", "payload": {"content": 5, "baseUri": "/r"}}),
                ProtocolError::NotAString { field: "content" },
            ),
            (json!({"id": 1, "type": 3}), ProtocolError::NotAString { field: "type" }),
            (json!({"id": 1}), ProtocolError::MissingType),
        ];
        for (request, expected) in cases {
            let (id, err) = parse(request.clone()).unwrap_err();
            assert_eq!(err, expected, "{request}");
            assert_eq!(id, json!(1), "{request}");
        }
        assert_eq!(parse(json!({"type": "ping"})).unwrap_err(), (Value::Null, ProtocolError::MissingId));
        assert_eq!(parse(json!([1, 2])).unwrap_err().1, ProtocolError::NotAnObject);
        assert!(matches!(
            parse_request(b"{nope", &Limits::default()),
            Err((Value::Null, ProtocolError::InvalidJson(_)))
        ));
    }

    #[test]
    fn app_commands_parse_and_bad_ones_are_named() {
        let app = |v: Value| match parse(v) {
            Ok((_, Command::App(c))) => Ok(c),
            Ok((_, other)) => panic!("not an app command: {other:?}"),
            Err((_, e)) => Err(e),
        };
        assert_eq!(app(json!({"id": 1, "type": "show"})), Ok(AppCommand::Show));
        let changed = parse_request(br#"{"id": 2, "type": "connections_changed"}"#, &Limits::default());
        assert_eq!(changed.map(|(_, c)| c), Ok(Command::ConnectionsChanged));
        let extra = parse_request(
            br#"{"id": 3, "type": "connections_changed", "payload": {"x": 1}}"#,
            &Limits::default(),
        );
        assert!(extra.is_err());
        assert_eq!(app(json!({"id": 1, "type": "toggle", "payload": {}})), Ok(AppCommand::Toggle));
        assert_eq!(app(json!({"id": 1, "type": "act_on_selection"})), Ok(AppCommand::ActOnSelection));
        assert_eq!(app(json!({"id": 1, "type": "dictate_toggle"})), Ok(AppCommand::DictateToggle));
        assert_eq!(app(json!({"id": 1, "type": "update_check"})), Ok(AppCommand::UpdateCheck));
        assert_eq!(app(json!({"id": 1, "type": "update_apply", "payload": {}})), Ok(AppCommand::UpdateApply));
        assert_eq!(
            app(json!({"id": 1, "type": "update_apply", "payload": {"version": "9.9.9"}})),
            Err(ProtocolError::UnexpectedField("update_apply", "version".into()))
        );
        assert_eq!(app(json!({"id": 1, "type": "screenshot"})), Ok(AppCommand::Screenshot { mode: None }));
        assert_eq!(
            app(json!({"id": 1, "type": "screenshot", "payload": {"mode": "precision"}})),
            Ok(AppCommand::Screenshot { mode: Some(ScreenshotMode::Precision) })
        );
        assert_eq!(
            app(json!({"id": 1, "type": "screenshot", "payload": {"mode": "region"}})),
            Err(ProtocolError::UnknownScreenshotMode("region".into()))
        );
        assert_eq!(
            app(json!({"id": 1, "type": "screenshot", "payload": {"mode": 2}})),
            Err(ProtocolError::NotAString { field: "mode" })
        );
        assert_eq!(
            app(json!({"id": 1, "type": "screenshot", "payload": {"mode": "window", "delay": 3}})),
            Err(ProtocolError::UnexpectedField("screenshot", "delay".into()))
        );
        assert_eq!(
            app(json!({"id": 1, "type": "show", "payload": {"x": 1}})),
            Err(ProtocolError::UnexpectedField("show", "x".into()))
        );
        assert_eq!(app(json!({"id": 1, "type": "toggle", "payload": [1]})), Err(ProtocolError::NotAnObject));
    }

    #[test]
    fn content_and_line_limits_are_enforced() {
        let limits = Limits { max_content_chars: 5, max_line_bytes: 200 };
        let line =
            json!({"id": 1, "type": "present_review", "payload": {"content": "ééééééé", "baseUri": "/r"}});
        let err = parse_request(line.to_string().as_bytes(), &limits).unwrap_err().1;
        assert_eq!(err, ProtocolError::ContentTooLong { chars: 7, limit: 5 });
        let long = vec![b'x'; 201];
        assert_eq!(parse_request(&long, &limits).unwrap_err().1, ProtocolError::LineTooLong { limit: 200 });
    }

    proptest! {
        // Whatever bytes arrive, parsing returns (never panics), and success implies a valid review.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse_request(&bytes, &Limits::default());
        }

        #[test]
        fn arbitrary_json_objects_parse_or_fail_cleanly(
            id in prop_oneof![Just(json!(null)), any::<i64>().prop_map(|n| json!(n)), "[a-z0-9]{0,8}".prop_map(|s| json!(s))],
            kind in prop_oneof![Just("present_review".to_owned()), Just("ping".to_owned()), "[a-z_]{0,14}"],
            content in proptest::option::of(".{0,40}"),
            mode in proptest::option::of(prop_oneof![Just("replace".to_owned()), Just("append".to_owned()), Just("update-section".to_owned()), "[a-z-]{0,12}"]),
            section in proptest::option::of(".{0,10}"),
            base in proptest::option::of("[/a-z]{0,10}"),
        ) {
            let mut payload = serde_json::Map::new();
            if let Some(c) = content { payload.insert("content".into(), json!(c)); }
            if let Some(m) = mode { payload.insert("mode".into(), json!(m)); }
            if let Some(s) = section { payload.insert("section".into(), json!(s)); }
            if let Some(b) = base { payload.insert("baseUri".into(), json!(b)); }
            let request = json!({"id": id, "type": kind, "payload": payload});
            if let Ok((_, Command::PresentReview(r))) = parse(request) {
                prop_assert!(!r.content.trim().is_empty());
                prop_assert!(!r.base_uri.trim().is_empty());
                prop_assert!(r.mode != Mode::UpdateSection || r.section.is_some());
            }
        }
    }
}
