//! Signing in on the kitchen page over plain HTTP (the dev-only local sign-in) and making API keys,
//! as a browser would: cookies, the CSRF token from each form, and the key read off the page.
//!
//! Sign-ins and new keys are limited per client address (`CF-Connecting-IP`, which Cloudflare sets and
//! a local run passes through), so each handle signs in from an address of its own, as separate people
//! would; a test of those limits picks the address ([`Kitchen::sign_in_from`]).

use anyhow::{Context, Result, ensure};
use reqwest::header::{COOKIE, SET_COOKIE};
use reqwest::redirect::Policy;

use crate::{Worker, send_safe};

/// The header Cloudflare names the client's address in.
pub const CONNECTING_IP: &str = "CF-Connecting-IP";

/// A signed-in kitchen session.
#[derive(Debug, Clone)]
pub struct Kitchen {
    pub base: String,
    pub handle: String,
    /// `cp_session=<token>`.
    pub session: String,
    /// The client address every request of this session comes from (`CF-Connecting-IP`).
    pub address: String,
    client: reqwest::Client,
}

/// A documentation address (RFC 3849) of a /64 of its own for each handle.
pub fn address_of(handle: &str) -> String {
    // FNV-1a: stable from run to run, unlike the standard library's hasher.
    let hash = handle
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
    format!("2001:db8:{:x}:{:x}::1", (hash >> 48) & 0xffff, (hash >> 32) & 0xffff)
}

/// The value of a cookie a response sets.
pub fn set_cookie_value(response: &reqwest::Response, name: &str) -> Option<String> {
    response.headers().get_all(SET_COOKIE).iter().find_map(|value| {
        let value = value.to_str().ok()?;
        let (pair, _) = value.split_once(';').unwrap_or((value, ""));
        let (key, value) = pair.split_once('=')?;
        (key == name).then(|| value.to_string())
    })
}

/// The `value` of the first `name="csrf"` input on a page.
pub fn csrf_of(html: &str) -> Result<String> {
    let start = html.find(r#"name="csrf" value=""#).context("the page has no CSRF field")? + 19;
    Ok(html[start..].split('"').next().unwrap_or_default().to_string())
}

/// The key shown once on the page after making it.
pub fn new_key_of(html: &str) -> Option<String> {
    let start = html.find(r#"<code id="new-key">"#)? + 19;
    Some(html[start..].split('<').next()?.to_string())
}

impl Kitchen {
    /// Signs in with the local (ENVIRONMENT=dev) sign-in as `handle`, making the account if needed,
    /// from the handle's own address ([`address_of`]).
    pub async fn sign_in(worker: &Worker, handle: &str) -> Result<Kitchen> {
        let answer = Kitchen::try_sign_in(worker, handle, &address_of(handle)).await?;
        Kitchen::signed_in(worker, handle, &address_of(handle), answer)
    }

    /// Signs in as `handle` from `address`.
    pub async fn sign_in_from(worker: &Worker, handle: &str, address: &str) -> Result<Kitchen> {
        let answer = Kitchen::try_sign_in(worker, handle, address).await?;
        Kitchen::signed_in(worker, handle, address, answer)
    }

    /// The answer to a local sign-in as `handle` from `address`, whatever it is.
    pub async fn try_sign_in(worker: &Worker, handle: &str, address: &str) -> Result<reqwest::Response> {
        let client = reqwest::Client::builder().redirect(Policy::none()).build()?;
        let page = send_safe(client.get(worker.url("/kitchen")).header(CONNECTING_IP, address)).await?;
        let csrf_cookie = set_cookie_value(&page, "cp_csrf").context("no cp_csrf cookie")?;
        let csrf = csrf_of(&page.text().await?)?;
        Ok(client
            .post(worker.url("/kitchen/login/dev"))
            .header(COOKIE, format!("cp_csrf={csrf_cookie}"))
            .header(CONNECTING_IP, address)
            .form(&[("handle", handle), ("csrf", &csrf)])
            .send()
            .await?)
    }

    fn signed_in(worker: &Worker, handle: &str, address: &str, answer: reqwest::Response) -> Result<Kitchen> {
        ensure!(answer.status() == 303, "dev sign-in answered {}", answer.status());
        let token = set_cookie_value(&answer, "cp_session").context("no session cookie")?;
        Ok(Kitchen {
            base: worker.base.clone(),
            handle: handle.to_string(),
            session: format!("cp_session={token}"),
            address: address.to_string(),
            client: reqwest::Client::builder().redirect(Policy::none()).build()?,
        })
    }

    /// The kitchen page as this session sees it.
    pub async fn page(&self) -> Result<String> {
        let page = send_safe(
            self.client
                .get(format!("{}/kitchen", self.base))
                .header(COOKIE, &self.session)
                .header(CONNECTING_IP, &self.address),
        )
        .await?;
        ensure!(page.status() == 200, "kitchen answered {}", page.status());
        Ok(page.text().await?)
    }

    /// Posts a kitchen form with this session's CSRF token.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Result<reqwest::Response> {
        let csrf = csrf_of(&self.page().await?)?;
        let mut form: Vec<(&str, &str)> = fields.to_vec();
        form.push(("csrf", &csrf));
        Ok(self
            .client
            .post(format!("{}{path}", self.base))
            .header(COOKIE, &self.session)
            .header(CONNECTING_IP, &self.address)
            .form(&form)
            .send()
            .await?)
    }

    /// Makes a key labelled `label` and returns it (it is shown only in this answer).
    pub async fn new_key(&self, label: &str) -> Result<String> {
        let answer = self.post("/kitchen/keys", &[("label", label)]).await?;
        ensure!(answer.status() == 200, "making a key answered {}", answer.status());
        new_key_of(&answer.text().await?).context("the page does not show the new key")
    }

    /// The id of the key whose label is `label`, from the key list.
    pub async fn key_id(&self, label: &str) -> Result<String> {
        let page = self.page().await?;
        let at = page.find(&format!("<bdi>{label}</bdi>")).context("no such key on the page")?;
        let before = &page[..at];
        let start = before.rfind(r#"data-key-id=""#).context("no key id")? + 13;
        Ok(before[start..].split('"').next().unwrap_or_default().to_string())
    }
}

/// Signs in as `handle` and makes one key: the usual start of a write test.
pub async fn key_for(worker: &Worker, handle: &str) -> Result<String> {
    Kitchen::sign_in(worker, handle).await?.new_key("tests").await
}
