//! Google's JSON error bodies: the APIs' `{"error": {code, message, errors, status}}` and the
//! OAuth endpoints' flat `{"error", "error_description"}`.

use serde_json::{Value, json};

use crate::http::Response;

/// The canonical status name Google pairs with an HTTP code.
fn status_name(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        410 => "NOT_FOUND",
        413 => "INVALID_ARGUMENT",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

pub(crate) fn body(code: u16, message: &str, reason: &str) -> Value {
    json!({
        "error": {
            "code": code,
            "message": message,
            "errors": [{ "message": message, "domain": "global", "reason": reason }],
            "status": status_name(code),
        }
    })
}

pub(crate) fn api(code: u16, message: &str, reason: &str) -> Response {
    Response::json(code, &body(code, message, reason))
}

pub(crate) fn bad_request(message: &str) -> Response {
    api(400, message, "badRequest")
}

pub(crate) fn invalid_argument(message: &str) -> Response {
    api(400, message, "invalidArgument")
}

pub(crate) fn required(message: &str) -> Response {
    api(400, message, "required")
}

pub(crate) fn not_found() -> Response {
    api(404, "Requested entity was not found.", "notFound")
}

pub(crate) fn calendar_not_found() -> Response {
    api(404, "Not Found", "notFound")
}

pub(crate) fn unauthenticated() -> Response {
    let message = "Request had invalid authentication credentials. Expected OAuth 2 access token, login \
                   cookie or other valid authentication credential. See \
                   https://developers.google.com/identity/sign-in/web/devconsole-project.";
    let body = json!({
        "error": {
            "code": 401,
            "message": message,
            "errors": [{
                "message": "Invalid Credentials",
                "domain": "global",
                "reason": "authError",
                "location": "Authorization",
                "locationType": "header",
            }],
            "status": "UNAUTHENTICATED",
        }
    });
    Response::json(401, &body)
        .header("WWW-Authenticate", "Bearer realm=\"https://accounts.google.com/\", error=\"invalid_token\"")
}

/// No `Authorization` header at all.
pub(crate) fn missing_credentials() -> Response {
    let message = "Request is missing required authentication credential. Expected OAuth 2 access token, \
                   login cookie or other valid authentication credential. See \
                   https://developers.google.com/identity/sign-in/web/devconsole-project.";
    let body = json!({
        "error": {
            "code": 401,
            "message": message,
            "errors": [{
                "message": "Login Required.",
                "domain": "global",
                "reason": "required",
                "location": "Authorization",
                "locationType": "header",
            }],
            "status": "UNAUTHENTICATED",
        }
    });
    Response::json(401, &body).header("WWW-Authenticate", "Bearer realm=\"https://accounts.google.com/\"")
}

/// A token that is good but lacks every scope the method accepts.
pub(crate) fn insufficient_scope(service: &str, method: &str, accepted: &[&str]) -> Response {
    let body = json!({
        "error": {
            "code": 403,
            "message": "Request had insufficient authentication scopes.",
            "errors": [{
                "message": "Insufficient Permission",
                "domain": "global",
                "reason": "insufficientPermissions",
            }],
            "status": "PERMISSION_DENIED",
            "details": [{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
                "domain": "googleapis.com",
                "metadata": { "service": service, "method": method },
            }],
        }
    });
    let challenge = format!(
        "Bearer realm=\"https://accounts.google.com/\", error=\"insufficient_scope\", scope=\"{}\"",
        accepted.join(" ")
    );
    Response::json(403, &body).header("WWW-Authenticate", &challenge)
}

pub(crate) fn rate_limited(retry_after_secs: u32) -> Response {
    let message = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of \
                   service 'gmail.googleapis.com' for consumer 'project_number:1071006060591'.";
    let body = json!({
        "error": {
            "code": 429,
            "message": message,
            "errors": [{ "message": message, "domain": "usageLimits", "reason": "rateLimitExceeded" }],
            "status": "RESOURCE_EXHAUSTED",
        }
    });
    Response::json(429, &body).header("Retry-After", &retry_after_secs.to_string())
}

pub(crate) fn backend_error() -> Response {
    api(500, "Backend Error", "backendError")
}

/// The token endpoints' error shape.
pub(crate) fn oauth(code: u16, error: &str, description: &str) -> Response {
    Response::json(code, &json!({ "error": error, "error_description": description }))
}

/// The page the browser shows when Google will not even redirect back (unknown client, a
/// redirect URI the client may not use, a malformed request).
pub(crate) fn auth_page(code: &str, detail: &str) -> Response {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error 400 \
         ({code})!!1</title></head><body><h1>Access blocked: Authorization Error</h1>\
         <p>{detail}</p><p><b>Error {code_number}: {code}</b></p></body></html>",
        code_number = if code == "invalid_client" { 401 } else { 400 },
    );
    Response::html(400, page)
}
