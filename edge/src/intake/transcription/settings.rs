//! The transcription service the site is configured with (`TRANSCRIBE_PROVIDER`, its address and
//! its key) and the settings its purchases are held to: the day's budgets, the longest audio, the
//! polls, and how long the service and each call to it may take.

use std::time::Duration;

use domain::quotes::intake::transcribe::Service;
use domain::site::limits::Policy;
use worker::Env;

pub(super) fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name).ok().map(|v| v.to_string()).filter(|v| !v.trim().is_empty())
}

fn secret(env: &Env, name: &str) -> Option<String> {
    env.secret(name).ok().map(|v| v.to_string()).filter(|v| !v.trim().is_empty()).or_else(|| var(env, name))
}

/// The configured service, its address and its key.
pub(super) struct Transcriber {
    pub(super) service: Service,
    pub(super) base: String,
    pub(super) key: String,
}

pub(super) fn transcriber(env: &Env) -> Result<Transcriber, String> {
    let named = var(env, "TRANSCRIBE_PROVIDER").unwrap_or_default();
    let service = Service::named(&named)?.ok_or_else(|| {
        "no transcription service is configured (TRANSCRIBE_PROVIDER): only publisher transcripts are taken"
            .to_string()
    })?;
    let (setting, default) = service.base_setting();
    let base = var(env, setting).unwrap_or_else(|| default.to_string());
    let key = secret(env, service.key_setting()).ok_or_else(|| {
        format!(
            "TRANSCRIBE_PROVIDER is `{}` but its key {} is not set",
            service.code(),
            service.key_setting()
        )
    })?;
    Ok(Transcriber { service, base, key })
}

/// Hours of a policy's setting, else its default.
pub(super) fn hours(env: &Env, policy: &Policy) -> u32 {
    var(env, policy.setting).and_then(|v| v.trim().parse().ok()).unwrap_or(policy.quota)
}

/// The longest audio transcribed, in seconds (`INTAKE_MAX_AUDIO_HOURS`, 4 by default).
pub(super) fn max_audio_s(env: &Env) -> i64 {
    let hours: f64 = var(env, "INTAKE_MAX_AUDIO_HOURS").and_then(|v| v.trim().parse().ok()).unwrap_or(4.0);
    (hours * 3600.0) as i64
}

pub(super) fn poll_s(env: &Env) -> u32 {
    var(env, "INTAKE_POLL_SECONDS").and_then(|v| v.trim().parse().ok()).unwrap_or(30).max(1)
}

/// How long a transcription may take before its job fails (`TRANSCRIBE_TIMEOUT_SECONDS`, 3 hours).
pub(super) fn timeout_s(env: &Env) -> u64 {
    var(env, "TRANSCRIBE_TIMEOUT_SECONDS").and_then(|v| v.trim().parse().ok()).unwrap_or(3 * 3600)
}

/// How long one call to the service may take, its answer read whole (`TRANSCRIBE_CALL_SECONDS`, a
/// minute): a queue message waits on it, and the jobs behind it.
pub(super) fn call_limit(env: &Env) -> Duration {
    Duration::from_secs(var(env, "TRANSCRIBE_CALL_SECONDS").and_then(|v| v.trim().parse().ok()).unwrap_or(60))
}
