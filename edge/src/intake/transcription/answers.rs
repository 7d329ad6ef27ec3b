//! What the transcription service answered, kept whole in the `INTAKE` bucket beside the job
//! (`jobs/{job_id}/{service}.json`), so a job, or another job of the same audio, can make its run
//! from it again.

use domain::quotes::intake::transcribe::Service;
use worker::Env;

use crate::error::ApiError;
use crate::intake::BUCKET;

fn answer_key(job_id: &str, service: &str) -> String {
    format!("jobs/{job_id}/{service}.json")
}

/// Keeps what the service answered, whole, beside the job.
pub(super) async fn keep_answer(
    env: &Env,
    job_id: &str,
    service: Service,
    body: &[u8],
) -> Result<(), ApiError> {
    env.bucket(BUCKET)?.put(answer_key(job_id, service.code()), body.to_vec()).execute().await?;
    Ok(())
}

pub(super) async fn stored_answer(
    env: &Env,
    job_id: &str,
    service: &str,
) -> Result<Option<Vec<u8>>, ApiError> {
    match env.bucket(BUCKET)?.get(answer_key(job_id, service)).execute().await? {
        Some(object) => Ok(Some(
            object
                .body()
                .ok_or_else(|| ApiError::Internal("an R2 object without a body".into()))?
                .bytes()
                .await?,
        )),
        None => Ok(None),
    }
}
