//! Addresses readers paste: a platform's other spellings of an episode's address find it
//! through the real Worker, on a build of `tests/data/two-licences`, whose episodes are published at a
//! YouTube and a Spotify address.

use anyhow::{Result, ensure};
use serde_json::Value;
use tests::Worker;

use crate::quotes::enc;

const YOUTUBE: &str = "https://www.youtube.com/watch?v=Xk3a9Zq_L0w";
const SPOTIFY: &str = "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk";
const YOUTUBE_QUOTE: &str = "the first light through a homemade mirror is worth every scratched lens";
const SPOTIFY_QUOTE: &str = "herons stand so still by the weir";

async fn attribute(w: &Worker, source_url: &str, quote: &str) -> Result<(u16, Value)> {
    let path = format!("/api/attribute?source_url={}&quote={}", enc(source_url), enc(quote));
    let response = reqwest::get(w.url(&path)).await?;
    let status = response.status().as_u16();
    let body: Value = serde_json::from_str(&response.text().await?)?;
    Ok((status, body))
}

/// `youtu.be/ID`, `m.youtube.com/watch?v=ID`, `&t=42s`, `&feature=share`, `?si=…` and the
/// service's own `listen_url` (`…&t=2160s`) were 404 for an episode published at
/// `youtube.com/watch?v=ID`, and Spotify's `?si=…` for one published at its episode address.
pub async fn pasted_platform_addresses_find_the_published_episode() -> Result<()> {
    let work = tests::root().join(format!("tests/.work/addresses-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = work.join("dist");
    let built = tokio::process::Command::new(tests::builder_bin())
        .args(["build", "--content", "tests/data/two-licences", "--out", out.to_str().unwrap()])
        .current_dir(tests::root())
        .output()
        .await?;
    ensure!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let w = Worker::start_with(tests::Config { out: Some(out), ..tests::Config::default() }).await?;

    let (status, published) = attribute(&w, YOUTUBE, YOUTUBE_QUOTE).await?;
    ensure!(status == 200 && published["found"] == true, "{status} {published}");
    let id = published["episode"]["id"].clone();
    let listen_url = published["listen_url"].as_str().unwrap_or_default().to_string();
    ensure!(listen_url.ends_with("t=2160s"), "YouTube's own time parameter: {published}");
    for spelling in [
        "https://youtu.be/Xk3a9Zq_L0w",
        "youtu.be/Xk3a9Zq_L0w?si=AbCdEf123",
        "https://m.youtube.com/watch?v=Xk3a9Zq_L0w",
        "https://www.youtube.com/watch?v=Xk3a9Zq_L0w&t=42s",
        "https://www.youtube.com/watch?v=Xk3a9Zq_L0w&feature=share",
        "https://youtube.com/watch?v=Xk3a9Zq_L0w&si=AbCdEf123",
        "https://youtube.com/shorts/Xk3a9Zq_L0w",
        "https://music.youtube.com/watch?v=Xk3a9Zq_L0w&list=RDAMVM",
        "https://www.youtube.com/live/Xk3a9Zq_L0w?si=AbCdEf123",
        "https://www.youtube.com/embed/Xk3a9Zq_L0w",
        listen_url.as_str(),
    ] {
        let (status, answer) = attribute(&w, spelling, YOUTUBE_QUOTE).await?;
        ensure!(status == 200 && answer["found"] == true, "{spelling}: {status} {answer}");
        ensure!(answer["episode"]["id"] == id, "{spelling} found another episode: {answer}");
    }

    let (status, published) = attribute(&w, SPOTIFY, SPOTIFY_QUOTE).await?;
    ensure!(status == 200 && published["found"] == true, "{status} {published}");
    for spelling in [
        "https://open.spotify.com/episode/4rOoJ6Egrf8K2IrywzwOMk?si=a1b2c3d4e5f6",
        "https://open.spotify.com/intl-de/episode/4rOoJ6Egrf8K2IrywzwOMk?si=a1b2c3d4e5f6",
    ] {
        let (status, answer) = attribute(&w, spelling, SPOTIFY_QUOTE).await?;
        ensure!(
            status == 200 && answer["episode"]["id"] == published["episode"]["id"],
            "{spelling}: {answer}"
        );
    }

    // Another video, a playlist on its own and another Spotify episode are other addresses.
    for other in [
        "https://youtu.be/Xk3a9Zq_L0W",
        "https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
        "https://open.spotify.com/episode/7makk4oTQel546B0PZlDM5?si=a1b2",
    ] {
        let (status, answer) = attribute(&w, other, YOUTUBE_QUOTE).await?;
        ensure!(status == 404, "{other} is not a published episode: {status} {answer}");
    }
    drop(w);
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
