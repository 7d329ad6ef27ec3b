//! One call to the transcription service: sent with its method, headers and body, its answer read
//! whole within a time limit and a bound in bytes, or why there is none.

use std::time::Duration;

use domain::quotes::intake::transcribe::Call;
use futures::StreamExt;
use worker::{AbortController, Fetch, Headers, Method, Request, RequestInit};

/// The most bytes of a service's answer read: a transcript with every word's time.
pub(super) const MAX_ANSWER_BYTES: usize = 50 * 1024 * 1024;

/// A call to the service that brought no answer.
pub(super) struct Unanswered {
    pub(super) reason: String,
    /// The call went out and the service may have acted on it: it took too long, or its answer
    /// broke off.
    pub(super) maybe_heard: bool,
}

/// Sends one call to the service: its status and body, within `limit`
/// ([`super::settings::call_limit`]) and [`MAX_ANSWER_BYTES`], or why there is none.
pub(super) async fn send(call: &Call, limit: Duration) -> Result<(u16, Vec<u8>), Unanswered> {
    let unheard = |reason: String| Unanswered { reason, maybe_heard: false };
    let headers = Headers::new();
    for (name, value) in &call.headers {
        headers.set(name, value).map_err(|err| unheard(err.to_string()))?;
    }
    let mut init = RequestInit::new();
    init.with_method(if call.method == "GET" { Method::Get } else { Method::Post }).with_headers(headers);
    if let Some(body) = &call.body {
        init.with_body(Some(body.clone().into()));
    }
    let request = Request::new_with_init(&call.url, &init).map_err(|err| unheard(err.to_string()))?;
    let controller = AbortController::default();
    let signal = controller.signal();
    let answered = async {
        let mut response = Fetch::Request(request)
            .send_with_signal(&signal)
            .await
            .map_err(|err| unheard(format!("the transcription service could not be reached: {err}")))?;
        let broke_off = |err: worker::Error| Unanswered {
            reason: format!("the transcription service broke off: {err}"),
            maybe_heard: true,
        };
        let mut stream = response.stream().map_err(broke_off)?;
        let mut body = Vec::new();
        while let Some(chunk) = stream.next().await {
            body.extend_from_slice(&chunk.map_err(broke_off)?);
            if body.len() > MAX_ANSWER_BYTES {
                return Err(Unanswered {
                    reason: format!(
                        "the transcription service answered more than {} MiB",
                        MAX_ANSWER_BYTES >> 20
                    ),
                    maybe_heard: true,
                });
            }
        }
        Ok((response.status_code(), body))
    };
    crate::intake::within(limit, answered, controller).await.unwrap_or_else(|| {
        Err(Unanswered {
            reason: format!(
                "the transcription service did not answer within {} s (TRANSCRIBE_CALL_SECONDS)",
                limit.as_secs()
            ),
            maybe_heard: true,
        })
    })
}
