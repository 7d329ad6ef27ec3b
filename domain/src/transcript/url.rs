//! Source URLs and episode ids: any spelling of an episode's address finds the same episode.
//!
//! Normalising (DESIGN.md §3): lower-case scheme and host, no `www.`, no fragment, no `utm_*`
//! parameters, no trailing slash. We also treat `http` as `https` and a missing scheme as `https`,
//! since a person pasting an address means the same page either way. The id is `ep_` plus the first
//! ten lower-case base32 characters of the SHA-256 of the normalised URL, so the Worker can find an
//! episode's files from any spelling of its URL without an index lookup.

use sha2::{Digest, Sha256};

/// The normalised form of an episode's source URL, or `None` when it is not an http(s) URL with a host.
pub fn normalise_source_url(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("https".to_string(), url),
    };
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let rest = rest.split('#').next().unwrap_or_default();
    let (authority_and_path, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let (authority, path) = match authority_and_path.find('/') {
        Some(idx) => authority_and_path.split_at(idx),
        None => (authority_and_path, ""),
    };
    let mut host = authority.rsplit('@').next().unwrap_or_default().to_ascii_lowercase();
    if let Some(stripped) = host.strip_suffix(":443").or_else(|| host.strip_suffix(":80")) {
        host = stripped.to_string();
    }
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    if host.is_empty() || !host.chars().all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c)) {
        return None;
    }
    let path = path.trim_end_matches('/');
    let params: Vec<&str> = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|param| !param.is_empty() && !param.to_ascii_lowercase().starts_with("utm_"))
        .collect();
    let mut normalised = format!("https://{host}{path}");
    if !params.is_empty() {
        normalised.push('?');
        normalised.push_str(&params.join("&"));
    }
    Some(normalised)
}

/// `ep_` + 10 lower-case base32 characters of SHA-256 of the normalised URL.
pub fn episode_id(normalised_url: &str) -> String {
    let digest = Sha256::digest(normalised_url.as_bytes());
    let code = data_encoding::BASE32_NOPAD.encode(&digest).to_ascii_lowercase();
    format!("ep_{}", &code[..10])
}

/// Whether `id` has the form of an episode id (it may still name no episode).
pub fn is_episode_id(id: &str) -> bool {
    id.strip_prefix("ep_").is_some_and(|code| {
        code.len() == 10 && code.chars().all(|c| c.is_ascii_lowercase() || ('2'..='7').contains(&c))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    #[test]
    fn spellings_of_one_url_normalise_alike() {
        let spellings = [
            "https://changelog.com/jsparty/299",
            "HTTPS://WWW.Changelog.com/jsparty/299/",
            "http://changelog.com/jsparty/299#transcript",
            "https://changelog.com/jsparty/299?utm_source=x&utm_medium=y",
            "changelog.com/jsparty/299",
            " https://changelog.com:443/jsparty/299 ",
        ];
        for spelling in spellings {
            assert_eq!(
                normalise_source_url(spelling).as_deref(),
                Some("https://changelog.com/jsparty/299"),
                "{spelling}"
            );
        }
        assert_eq!(
            normalise_source_url("https://ex.com/ep?id=4&utm_campaign=z").as_deref(),
            Some("https://ex.com/ep?id=4")
        );
        assert_eq!(normalise_source_url("ftp://ex.com/x"), None);
        assert_eq!(normalise_source_url("https:///x"), None);
    }

    #[test]
    fn episode_id_is_stable() {
        let id = episode_id("https://changelog.com/jsparty/299");
        expect!["ep_ordsen2nfy"].assert_eq(&id);
        assert!(is_episode_id(&id));
        assert!(!is_episode_id("ep_XK6WYH2YLA"));
        assert!(!is_episode_id("ep_short"));
    }
}
