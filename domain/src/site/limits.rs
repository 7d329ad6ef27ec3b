//! Who may do how much: the fixed-window limits (writes and AI requests per account; sign-ins and new
//! keys per client address), the cap on an account's live keys, and the `RateLimit` headers that say
//! where a caller stands.
//!
//! Limits count per account, never per key: an account makes keys at will, so a limit per key is no
//! limit at all (ten keys of one account would send ten times the limit). What
//! makes accounts and keys — signing in, making a key — is counted per client address, since no
//! account exists yet to count against. The edge keeps the counts (one D1 row per policy, subject and
//! window); everything it decides with them is here, so the rules read in one place.
//!
//! Rejected: a token bucket or sliding window. A fixed window needs one upsert per request and no
//! clock arithmetic in SQL; its known flaw (up to twice the quota across a window boundary) is no
//! worse than what the limits are for, which is keeping one person from flooding the site.

use core::net::IpAddr;

/// One limit: `quota` requests per `window_s` for each subject (an account, or a client address).
#[derive(Debug, PartialEq, Eq)]
pub struct Policy {
    /// The policy's name in the `RateLimit` headers and the counters' table.
    pub name: &'static str,
    pub window_s: u64,
    /// The default quota; the setting below overrides it.
    pub quota: u32,
    /// The Worker variable that overrides the quota (load tests raise the write limit, say).
    pub setting: &'static str,
    /// What is counted and per whom, in plain words: the kitchen page and refusals say it.
    pub counts: &'static str,
    /// The title of the 429 problem.
    pub refusal: &'static str,
}

/// Recipe and speaker-name writes (create, change, fork, name a speaker), per account.
pub const WRITES: Policy = Policy {
    name: "writes",
    window_s: 60,
    quota: 60,
    setting: "WRITES_PER_MINUTE",
    counts: "writes a minute per account, all its keys together",
    refusal: "Too many writes",
};

/// Requests that reach the site's AI, per account.
pub const AI: Policy = Policy {
    name: "ai",
    window_s: 3600,
    quota: 20,
    setting: "AI_PER_HOUR",
    counts: "AI requests an hour per account, all its keys together",
    refusal: "Too many AI requests",
};

/// Sign-ins (each of which may make an account: a sign-up is a first sign-in), per client address.
pub const SIGN_INS: Policy = Policy {
    name: "sign-ins",
    window_s: 3600,
    quota: 20,
    setting: "SIGN_INS_PER_HOUR",
    counts: "sign-ins an hour from one address",
    refusal: "Too many sign-ins",
};

/// Keys made, per client address.
pub const NEW_KEYS: Policy = Policy {
    name: "new-keys",
    window_s: 3600,
    quota: 30,
    setting: "NEW_KEYS_PER_HOUR",
    counts: "new keys an hour from one address",
    refusal: "Too many new keys",
};

/// Hours of audio transcribed a day, per account (the intake's paid transcription). Not counted in the
/// counters' table: the charges are the intake's own rows (`intake_transcriptions`), one per episode.
pub const TRANSCRIBED_HOURS: Policy = Policy {
    name: "transcribed-hours",
    window_s: 86_400,
    quota: 4,
    setting: "INTAKE_HOURS_PER_ACCOUNT_PER_DAY",
    counts: "hours of audio transcribed a day (UTC) for one account",
    refusal: "This account's transcription budget for today is spent",
};

/// Hours of audio transcribed a day for the whole site, counted as [`TRANSCRIBED_HOURS`] is.
pub const SITE_TRANSCRIBED_HOURS: Policy = Policy {
    name: "site-transcribed-hours",
    window_s: 86_400,
    quota: 24,
    setting: "INTAKE_HOURS_PER_DAY",
    counts: "hours of audio transcribed a day (UTC) for the whole site",
    refusal: "The site's transcription budget for today is spent",
};

/// The most live (unrevoked) keys one account may hold; making another is refused until one is revoked.
pub const LIVE_KEYS_PER_ACCOUNT: u32 = 20;

/// The longest window of any policy: a counter older than this is spent whatever its policy.
pub const LONGEST_WINDOW_S: u64 = 3600;

// A policy with a longer window would have its counters deleted while they still count.
const _: () = assert!(
    WRITES.window_s <= LONGEST_WINDOW_S
        && AI.window_s <= LONGEST_WINDOW_S
        && SIGN_INS.window_s <= LONGEST_WINDOW_S
        && NEW_KEYS.window_s <= LONGEST_WINDOW_S
);

/// Whom a policy counts against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Account(i64),
    /// A client address bucket ([`address_bucket`]).
    Address(String),
}

impl Subject {
    /// The subject as the counters' table keys it: `account:12`, `ip:203.0.113.7`.
    pub fn key(&self) -> String {
        match self {
            Subject::Account(id) => format!("account:{id}"),
            Subject::Address(bucket) => format!("ip:{bucket}"),
        }
    }
}

/// The bucket of the address in `CF-Connecting-IP`. An IPv4 address is its own bucket; an IPv6
/// address counts by its /64, which is what one subscriber is given, so walking through one's own
/// addresses does not make one new people. No header (a local run not behind Cloudflare) or one that
/// is not an address goes to the one bucket `local`.
pub fn address_bucket(connecting_ip: Option<&str>) -> String {
    let Some(address) = connecting_ip.and_then(|header| header.trim().parse::<IpAddr>().ok()) else {
        return "local".to_string();
    };
    match address {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let segments = v6.segments();
                let prefix =
                    core::net::Ipv6Addr::new(segments[0], segments[1], segments[2], segments[3], 0, 0, 0, 0);
                format!("{prefix}/64")
            }
        },
    }
}

/// The start of the fixed window of `len_s` seconds that `now_s` falls in.
pub fn window_of(now_s: u64, len_s: u64) -> u64 {
    now_s - now_s % len_s
}

/// Counters whose window started before this have ended, whatever their policy, and may be deleted.
pub fn spent_before(now_s: u64) -> u64 {
    now_s.saturating_sub(LONGEST_WINDOW_S)
}

/// What a policy says about the `count`th request of a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateDecision {
    pub allowed: bool,
    pub limit: u32,
    pub remaining: u32,
    /// Seconds until the window resets.
    pub reset_s: u64,
    pub policy: &'static Policy,
}

impl Policy {
    /// The decision on the `count`th request (this one included) of the window `now_s` falls in,
    /// under `quota` (the default, or the override the edge read).
    pub fn decide(&'static self, count: u32, quota: u32, now_s: u64) -> RateDecision {
        let window_s = window_of(now_s, self.window_s);
        RateDecision {
            allowed: count <= quota,
            limit: quota,
            remaining: quota.saturating_sub(count),
            reset_s: (window_s + self.window_s).saturating_sub(now_s).max(1),
            policy: self,
        }
    }
}

impl RateDecision {
    /// `RateLimit` (draft-ietf-httpapi-ratelimit-headers): remaining quota and seconds to reset.
    pub fn header(&self) -> String {
        format!("\"{}\";r={};t={}", self.policy.name, self.remaining, self.reset_s)
    }

    /// The decision as it stands once this request was given back (an AI request that made nothing
    /// costs nothing): one more remaining, never more than the quota.
    pub fn given_back(&self) -> RateDecision {
        RateDecision { remaining: (self.remaining + 1).min(self.limit), ..self.clone() }
    }

    /// `RateLimit-Policy`: the quota and its window.
    pub fn policy_header(&self) -> String {
        format!("\"{}\";q={};w={}", self.policy.name, self.limit, self.policy.window_s)
    }

    /// The refusal's detail: the limit in plain words and when to come back.
    pub fn detail(&self) -> String {
        format!("the limit is {} {}; try again in {} s", self.limit, self.policy.counts, self.reset_s)
    }
}

/// The refusal's detail when an account already holds `live` keys of at most [`LIVE_KEYS_PER_ACCOUNT`].
pub fn key_cap_detail(live: u32) -> String {
    format!(
        "this account holds {live} live keys, the most one account may hold; revoke one on /kitchen \
         before making another"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sixty_first_write_in_a_minute_is_refused() {
        assert_eq!(window_of(125, 60), 120);
        let ok = WRITES.decide(60, 60, 125);
        assert!(ok.allowed);
        assert_eq!(ok.header(), "\"writes\";r=0;t=55");
        let refused = WRITES.decide(61, 60, 179);
        assert!(!refused.allowed);
        assert_eq!(refused.reset_s, 1);
        assert_eq!(refused.policy_header(), "\"writes\";q=60;w=60");
        assert_eq!(
            refused.detail(),
            "the limit is 60 writes a minute per account, all its keys together; try again in 1 s"
        );
    }

    #[test]
    fn an_override_changes_the_quota_but_not_the_window() {
        let decision = AI.decide(3, 2, 7200 + 600);
        assert!(!decision.allowed);
        assert_eq!(decision.policy_header(), "\"ai\";q=2;w=3600");
        assert_eq!(decision.header(), "\"ai\";r=0;t=3000");
    }

    #[test]
    fn a_given_back_request_shows_its_quota_again() {
        let decision = AI.decide(5, 20, 100);
        assert_eq!(decision.given_back().header(), "\"ai\";r=16;t=3500");
        assert_eq!(AI.decide(1, 20, 100).given_back().remaining, 20);
    }

    #[test]
    fn accounts_and_addresses_are_counted_apart() {
        assert_eq!(Subject::Account(12).key(), "account:12");
        assert_eq!(Subject::Address(address_bucket(Some("203.0.113.7"))).key(), "ip:203.0.113.7");
    }

    #[test]
    fn an_ipv6_address_counts_by_its_64() {
        let a = address_bucket(Some("2001:db8:1:2:aaaa::1"));
        let b = address_bucket(Some("2001:db8:1:2:bbbb:cccc:dddd:eeee"));
        assert_eq!(a, "2001:db8:1:2::/64");
        assert_eq!(a, b);
        assert_ne!(a, address_bucket(Some("2001:db8:1:3::1")));
        assert_eq!(address_bucket(Some("::ffff:198.51.100.4")), "198.51.100.4");
    }

    #[test]
    fn no_address_is_the_local_bucket() {
        assert_eq!(address_bucket(None), "local");
        assert_eq!(address_bucket(Some("")), "local");
        assert_eq!(address_bucket(Some("not an address")), "local");
        assert_eq!(address_bucket(Some(" 192.0.2.1 ")), "192.0.2.1");
    }

    #[test]
    fn counters_are_spent_after_the_longest_window() {
        // At 10:30 the hour that began at 9:00 is over, and so is every minute before 9:30.
        let now = 10 * 3600 + 1800;
        assert_eq!(spent_before(now), 9 * 3600 + 1800);
        assert!(window_of(now, AI.window_s) >= spent_before(now));
        assert_eq!(spent_before(100), 0);
    }
}
