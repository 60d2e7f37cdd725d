//! The fake's server (one request per connection), the routing to Google's services,
//! misbehaviour on demand, and the control API the end-to-end tests drive over HTTP.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};

use crate::http::{ReadError, Request, Response, read_request, write_response};
use crate::{Consent, Failure, Recorded, Shared, lock};

pub(crate) async fn serve(listener: TcpListener, state: Shared) {
    while let Ok((socket, _)) = listener.accept().await {
        tokio::spawn(handle(socket, state.clone()));
    }
}

/// Paths whose requests count as API requests (recorded, and needing a bearer token).
fn is_api(path: &str) -> bool {
    ["/gmail/", "/upload/gmail/", "/calendar/", "/v1/userinfo"].iter().any(|p| path.starts_with(p))
}

async fn handle(mut socket: TcpStream, state: Shared) {
    let request = match read_request(&mut socket).await {
        Ok(request) => request,
        Err(ReadError::Closed) => return,
        // What Google's front end answers to a body over any method's limit.
        Err(ReadError::TooLarge) => {
            let page = "<html><head><title>413 Request Entity Too Large</title></head><body>\
                        <h1>Request Entity Too Large</h1></body></html>";
            return write_response(&mut socket, &Response::html(413, page.to_owned())).await;
        }
    };
    if request.path.starts_with("/test/") {
        let response = control(&state, &request);
        return write_response(&mut socket, &response).await;
    }
    let failure = {
        let mut s = lock(&state);
        if is_api(&request.path) {
            s.api_requests.push(Recorded {
                method: request.method.clone(),
                path_and_query: request.target.clone(),
                authorization: request.header("authorization").map(str::to_owned),
            });
        }
        s.take_failure(&request.path)
    };
    let response = match failure {
        None => route(&state, &request),
        Some(Failure::RateLimited { retry_after_secs }) => crate::errors::rate_limited(retry_after_secs),
        Some(Failure::ServerError) => crate::errors::backend_error(),
        Some(Failure::Stall) => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return;
        }
        Some(Failure::Malformed) => {
            let mut response = route(&state, &request);
            let cut = (response.body.len() / 2).max(1).min(response.body.len());
            response.body.truncate(cut);
            response.status = 200;
            response.content_type = "application/json; charset=UTF-8";
            response
        }
    };
    write_response(&mut socket, &response).await;
}

fn route(state: &Shared, request: &Request) -> Response {
    let mut s = lock(state);
    let path = request.path.as_str();
    match path {
        "/o/oauth2/v2/auth" => crate::oauth::authorize(&mut s, request),
        "/token" => crate::oauth::token(&mut s, request),
        "/revoke" => crate::oauth::revoke(&mut s, request),
        "/v1/userinfo" => crate::oauth::userinfo(&mut s, request),
        _ if path.starts_with("/gmail/v1/users/") || path.starts_with("/upload/gmail/v1/users/") => {
            crate::gmail::route(&mut s, request)
        }
        _ if path.starts_with("/calendar/v3/") => crate::calendar::route(&mut s, request),
        _ => crate::errors::api(404, "Not Found", "notFound"),
    }
}

/// The controls the end-to-end tests (in another process) use; the library offers the same.
fn control(state: &Shared, request: &Request) -> Response {
    let mut s = lock(state);
    let body = request.json().unwrap_or(Value::Null);
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    match (request.method.as_str(), request.path.as_str()) {
        ("GET", "/test/state") => Response::json(
            200,
            &json!({
                "sent": s.mailbox.sent,
                "drafts": s.mailbox.draft_log,
                "events": s.calendar.events,
                "authorization_requests": s.authorization_requests,
                "token_requests": s.token_requests,
                "revocations": s.revocations,
                "api_requests": s.api_requests,
            }),
        ),
        ("POST", "/test/consent") => {
            let consent = match body["mode"].as_str() {
                Some("grant") => Consent::Grant,
                Some("deny") => Consent::Deny,
                Some("grantOnly") => Consent::GrantOnly(strings(&body["scopes"])),
                _ => return Response::json(400, &json!({ "error": "mode: grant | deny | grantOnly" })),
            };
            s.oauth.consent = consent;
            Response::json(200, &json!({}))
        }
        ("POST", "/test/expire-access") => {
            s.oauth.expire_access_tokens();
            Response::json(200, &json!({}))
        }
        ("POST", "/test/revoke-all") => {
            s.oauth.revoke_all();
            Response::json(200, &json!({}))
        }
        ("POST", "/test/fail") => {
            let failure = match body["kind"].as_str() {
                Some("rateLimited") => Failure::RateLimited {
                    retry_after_secs: body["retryAfter"].as_u64().unwrap_or(1).try_into().unwrap_or(1),
                },
                Some("serverError") => Failure::ServerError,
                Some("malformed") => Failure::Malformed,
                Some("stall") => Failure::Stall,
                _ => {
                    return Response::json(
                        400,
                        &json!({ "error": "kind: rateLimited | serverError | malformed | stall" }),
                    );
                }
            };
            let Some(path) = body["path"].as_str() else {
                return Response::json(400, &json!({ "error": "path is required" }));
            };
            let count = body["count"].as_u64().unwrap_or(1).try_into().unwrap_or(1);
            s.failing.push(crate::Failing { prefix: path.to_owned(), remaining: count, failure });
            Response::json(200, &json!({}))
        }
        ("POST", "/test/mint") => {
            let token = crate::oauth::mint(&mut s, &strings(&body["scopes"]));
            Response::json(200, &json!({ "access_token": token }))
        }
        _ => Response::json(404, &json!({ "error": "no such control" })),
    }
}
