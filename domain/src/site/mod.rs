//! Deployment policy, the same for both services: which hosts serve which site, where the build's
//! files live (static assets and R2 packs), rate and size limits, and `Idempotency-Key`.

pub mod host;
pub mod idempotency;
pub mod layout;
pub mod limits;
