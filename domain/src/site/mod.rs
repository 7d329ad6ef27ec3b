//! Deployment policy, the same for both services: which hosts serve which site, where the build's
//! files live (static assets and R2 packs), rate and size limits, `Idempotency-Key`, and which
//! addresses a user gives may be fetched.

pub mod host;
pub mod idempotency;
pub mod layout;
pub mod limits;
pub mod outbound;
