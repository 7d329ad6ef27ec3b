//! The edge's one error type and the one place it becomes an RFC 9457 problem response.

use domain::Diagnostic;
use serde_json::json;
use worker::Response;

use crate::http;

#[derive(Debug)]
pub enum ApiError {
    /// Query parameters that do not parse; each names its parameter.
    BadParameters(Vec<Diagnostic>),
    NotFound(String),
    MethodNotAllowed(&'static str),
    /// Something on our side: a missing or corrupt build artefact, a binding that failed.
    Internal(String),
}

impl From<worker::Error> for ApiError {
    fn from(err: worker::Error) -> Self {
        ApiError::Internal(err.to_string())
    }
}

impl ApiError {
    fn parts(&self) -> (u16, &'static str, &'static str, String) {
        match self {
            ApiError::BadParameters(problems) => (
                400,
                "invalid-parameter",
                "A query parameter is not valid",
                problems.iter().map(Diagnostic::to_string).collect::<Vec<_>>().join("; "),
            ),
            ApiError::NotFound(detail) => (404, "not-found", "Not found", detail.clone()),
            ApiError::MethodNotAllowed(allowed) => {
                (405, "method-not-allowed", "Method not allowed", format!("this path answers {allowed}"))
            }
            ApiError::Internal(detail) => (500, "internal", "Internal error", detail.clone()),
        }
    }

    /// The problem+json response for this error.
    pub fn into_response(self, instance: &str) -> Response {
        let (status, kind, title, detail) = self.parts();
        let mut body = json!({
            "type": format!("/problems/{kind}"),
            "title": title,
            "status": status,
            "detail": detail,
            "instance": instance,
        });
        if let ApiError::BadParameters(problems) = &self {
            body["errors"] = json!(problems);
        }
        let mut response = Response::from_bytes(body.to_string().into_bytes())
            .expect("a byte body always builds")
            .with_status(status);
        let headers = response.headers_mut();
        let _ = headers.set("Content-Type", "application/problem+json");
        let _ = headers.set("Cache-Control", "no-store");
        if let ApiError::MethodNotAllowed(allowed) = &self {
            let _ = headers.set("Allow", allowed);
        }
        http::cors(headers);
        response
    }
}
