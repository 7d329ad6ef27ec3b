//! The transcription service's callback (`POST /api/intake/{job_id}/transcribed`): checked against
//! the job's token and transcription, it moves the job along at once.

use domain::quotes::intake::transcribe::{self, Progress, Service};
use serde_json::json;
use worker::{Env, Request, Response};

use super::answers::keep_answer;
use super::call::MAX_ANSWER_BYTES;
use crate::auth::{now_iso, sha256_hex};
use crate::error::ApiError;
use crate::intake::{Message, QUEUE};
use crate::store;

/// `POST /api/intake/{job_id}/transcribed?token=…`: the service's callback. The job's token must
/// come with it (in the query, or AssemblyAI's header); it must name the job's transcription. The
/// first delivery moves the job along at once; any later one changes nothing.
pub async fn callback_route(mut req: Request, env: &Env, job_id: &str) -> Result<Response, ApiError> {
    let db = store::db(env)?;
    let Some(row) = store::transcription(&db, job_id).await? else {
        return Err(ApiError::NotFound(format!("job `{job_id}` awaits no transcription")));
    };
    let url = req.url()?;
    let token = req
        .headers()
        .get(transcribe::WEBHOOK_HEADER)?
        .or_else(|| url.query_pairs().find(|(name, _)| name == "token").map(|(_, value)| value.into_owned()));
    if token.is_none_or(|token| sha256_hex(&token) != row.token_hash) {
        return Err(ApiError::Unauthorized("the callback does not carry this job's token".into()));
    }
    let body = crate::http::body_within(&mut req, MAX_ANSWER_BYTES).await?;
    let service = Service::named(&row.service)
        .ok()
        .flatten()
        .ok_or_else(|| ApiError::Internal(format!("job {job_id} was transcribed by `{}`", row.service)))?;
    // A callback may come before the submission's answer is recorded (the row still `charged`,
    // its remote id unknown): the job's token alone then vouches for it.
    let named = transcribe::callback_names(service, &body);
    if named.is_none() || (row.remote_id.is_some() && named != row.remote_id) {
        return Err(ApiError::Invalid(vec![domain::Diagnostic::new(
            "body",
            format!(
                "the callback is not about this job's transcription ({})",
                row.remote_id.unwrap_or_default()
            ),
        )]));
    }
    let now = now_iso();
    let ending = ["charged", "submitted"];
    let first = match service {
        // Deepgram's callback is the transcript itself: kept, then the transcription is complete.
        Service::Deepgram if matches!(row.state.as_str(), "charged" | "submitted") => {
            match transcribe::progress(service, 200, &body) {
                Progress::Done => {
                    keep_answer(env, job_id, service, &body).await?;
                    store::move_transcription(&db, job_id, &ending, "completed", named.as_deref(), None, &now)
                        .await?
                }
                Progress::Failed(reason) => {
                    store::settle_transcription(&db, job_id, 0).await?;
                    let reason = Some(reason.as_str());
                    store::move_transcription(&db, job_id, &ending, "failed", named.as_deref(), reason, &now)
                        .await?
                }
                Progress::Waiting => false,
            }
        }
        Service::Deepgram => false,
        // AssemblyAI's says only that it finished: the job then asks for the transcript.
        Service::AssemblyAi => store::transcription_notified(&db, job_id, &now).await?,
    };
    if first {
        env.queue(QUEUE)?.send(Message::Job(job_id.to_string())).await?;
    }
    let body = json!({ "job_id": job_id, "accepted": first });
    crate::http::public_json(&body, 0)
}
