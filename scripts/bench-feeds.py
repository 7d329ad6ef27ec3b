"""Feed reading against a peer: podcastparser (gPodder's parser, from PyPI) on the same feeds.

Writes one RSS feed per show of the imported Changelog corpus (tests/.work/corpus-content/shows, made
by scripts/bench-quotes.sh or scripts/bench-feeds.sh) into tests/.work/feeds, in the spellings feeds
in the wild use, item by item: a `guid` or none, absolute or relative links and enclosures, HTML
entities and CDATA, the Podcasting 2.0 namespace under `podcast:` or another prefix, transcripts of
several types, `podcast:person` with and without roles, `itunes:duration` as seconds or `[H:]M:S`.
Then runs `cargo bench -p domain --bench feeds` on them and podcastparser on the same bytes, and
compares every item: its guid, its audio address, its transcripts and its people. podcastparser keeps
one transcript address per item (the last it meets); ours keeps each, so "agree" means podcastparser's
is among ours.
"""

import html
import io
import json
import os
import subprocess
import sys
import time
from email.utils import format_datetime
from datetime import datetime, timezone
from pathlib import Path

import podcastparser

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "tests" / ".work"
SHOWS = WORK / "corpus-content" / "shows"
FEEDS = WORK / "feeds"


SPEC_URI = "https://podcastindex.org/namespace/1.0"
GITHUB_URI = "https://github.com/Podcastindex-org/podcast-namespace/blob/main/docs/1.0.md"


def feed_for(show: str, show_record: dict, episodes: list[tuple[str, dict]], prefix: str, uri: str) -> str:
    base = f"https://feeds.example.org/{show}/"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
        f'xmlns:{prefix}="{uri}">',
        "<channel>",
        f"<title>{html.escape(show_record['title'])} &amp; friends</title>",
        f"<link>{show_record['url']}</link>",
        f"<description><![CDATA[{show_record['description']} &mdash; <b>weekly</b>]]></description>",
        f"<copyright>{html.escape(show_record['attribution'])}</copyright>",
        f"<{prefix}:license>{show_record['licence']}</{prefix}:license>",
    ]
    for n, (slug, episode) in enumerate(episodes):
        published = datetime.fromisoformat(episode["published"]).replace(hour=10, tzinfo=timezone.utc)
        title = episode["title"].replace("&", "&amp;") + (" &#8212; &#8220;live&#8221;" if n % 7 == 0 else "")
        link = episode["source_url"] if n % 10 else f"../episodes/{slug}/"
        audio = f"https://cdn.example.org/{show}/{slug}.mp3" if n % 20 else f"audio/{slug}.mp3"
        seconds = 1800 + (n * 97) % 5400
        duration = (
            str(seconds)
            if n % 3 == 0
            else f"{seconds // 60}:{seconds % 60:02}"
            if n % 3 == 1
            else f"{seconds // 3600}:{seconds // 60 % 60:02}:{seconds % 60:02}"
        )
        item = [
            "<item>",
            f"<title>{title}</title>",
            f"<link>{link}</link>",
            f"<pubDate>{format_datetime(published)}</pubDate>",
            f"<itunes:duration>{duration}</itunes:duration>",
            f'<enclosure url="{audio}" length="{seconds * 16000}" type="audio/mpeg"/>',
            f"<description><![CDATA[<p>Episode {n} of {html.escape(show_record['title'])}.</p>]]></description>",
        ]
        if n % 11:
            item.append(f'<guid isPermaLink="false">{show}-{slug}</guid>')
        kinds = [("vtt", "text/vtt"), ("json", "application/json"), ("srt", "application/x-subrip")]
        for k in range(n % 4):
            ext, mime = kinds[(n + k) % 3]
            url = f"https://example.org/t/{show}/{slug}.{ext}" if k % 2 == 0 else f"/t/{slug}.{ext}"
            item.append(f'<{prefix}:transcript url="{url}" type="{mime}"/>')
        for person in episode.get("roster", [])[: n % 4]:
            role = f' role="{person["role"]}"' if n % 2 else ""
            item.append(f"<{prefix}:person{role}>{html.escape(person['name'])}</{prefix}:person>")
        item.append("</item>")
        out.extend(item)
    out += ["</channel>", "</rss>", ""]
    return "\n".join(out)


def write_feeds() -> None:
    FEEDS.mkdir(parents=True, exist_ok=True)
    for old in FEEDS.iterdir():
        old.unlink()
    for n, show_dir in enumerate(sorted(p for p in SHOWS.iterdir() if p.is_dir())):
        show_record = json.loads((show_dir / "show.json").read_text())
        episodes = []
        for episode_dir in sorted(p for p in show_dir.iterdir() if p.is_dir()):
            episodes.append((episode_dir.name, json.loads((episode_dir / "episode.json").read_text())))
        episodes.sort(key=lambda e: e[1]["published"], reverse=True)
        prefix = "podcast" if n % 2 == 0 else "pi"
        # The spec's namespace URI, or the older one many feeds still declare.
        uri = SPEC_URI if n % 3 == 0 else GITHUB_URI
        (FEEDS / f"{show_dir.name}.xml").write_text(feed_for(show_dir.name, show_record, episodes, prefix, uri))
        (FEEDS / f"{show_dir.name}.url").write_text(f"https://feeds.example.org/{show_dir.name}/rss\n")


def main() -> int:
    if not SHOWS.is_dir():
        print(f"no imported corpus at {SHOWS}: run scripts/bench-feeds.sh", file=sys.stderr)
        return 1
    write_feeds()
    ours_json = WORK / "feeds-ours.json"
    env = dict(os.environ, FEEDS_DIR=str(FEEDS), FEEDS_OUT=str(ours_json))
    subprocess.run(["cargo", "bench", "--quiet", "-p", "domain", "--bench", "feeds"], cwd=ROOT, env=env, check=True)
    ours = json.loads(ours_json.read_text())

    names = sorted(p.stem for p in FEEDS.glob("*.xml"))
    blobs = {name: (FEEDS / f"{name}.xml").read_bytes() for name in names}
    urls = {name: (FEEDS / f"{name}.url").read_text().strip() for name in names}
    peer = {name: podcastparser.parse(urls[name], io.BytesIO(blobs[name]), max_episodes=0) for name in names}
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for name in names:
            podcastparser.parse(urls[name], io.BytesIO(blobs[name]), max_episodes=0)
        best = min(best, time.perf_counter() - started)
    n_bytes = sum(len(b) for b in blobs.values())
    n_items = sum(len(p["episodes"]) for p in peer.values())
    print(
        f"podcastparser {podcastparser.__version__}: {len(names)} feeds, {n_items} items, "
        f"{n_bytes / 1048576:.1f} MiB in {best * 1000:.1f} ms: {n_bytes / 1048576 / best:.0f} MiB/s, "
        f"{n_items / (best * 1000):.0f} items/ms"
    )

    checks = {"items": 0, "guid": 0, "audio": 0, "transcript": 0, "persons": 0}
    agree = dict.fromkeys(checks, 0)
    disagreements = []
    # podcastparser knows the Podcasting 2.0 namespace only by its older URI: on feeds declaring the
    # spec's, it finds no transcript or person. Those are counted apart, not compared.
    spec_feeds = [name for name in names if SPEC_URI.encode() in blobs[name]]
    unseen = {"transcripts": 0, "persons": 0}
    for name in spec_feeds:
        for item in ours[name]:
            unseen["transcripts"] += bool(item["transcripts"])
            unseen["persons"] += bool(item["persons"])
    for name in names:
        known_namespace = name not in spec_feeds
        mine = ours[name]
        theirs = peer[name]["episodes"]
        checks["items"] += 1
        agree["items"] += len(mine) == len(theirs)
        # podcastparser sorts newest first; match items by audio address.
        by_audio = {item["audio_url"]: item for item in mine}
        for episode in theirs:
            audio = episode["enclosures"][0]["url"] if episode["enclosures"] else None
            item = by_audio.get(audio)
            checks["audio"] += 1
            if item is None:
                disagreements.append(f"{name}: no item of ours has the audio {audio}")
                continue
            agree["audio"] += 1
            # podcastparser makes up a guid from the link or enclosure when there is none.
            checks["guid"] += 1
            if item["guid"] is not None:
                agree["guid"] += item["guid"] == episode["guid"]
            else:
                agree["guid"] += episode["guid"] in (item["link"], item["audio_url"])
            if known_namespace and (episode.get("transcript_url") or item["transcripts"]):
                checks["transcript"] += 1
                same = episode.get("transcript_url") in item["transcripts"]
                agree["transcript"] += same
                if not same:
                    disagreements.append(f"{name}: transcript {episode.get('transcript_url')} vs {item['transcripts']}")
            if known_namespace and (episode.get("persons") or item["persons"]):
                checks["persons"] += 1
                theirs_names = [p.get("name") for p in episode.get("persons", [])]
                same = theirs_names == item["persons"]
                agree["persons"] += same
                if not same:
                    disagreements.append(f"{name}: persons {theirs_names} vs {item['persons']}")
    print("agreement with podcastparser (checked / agreeing):")
    for key in checks:
        print(f"  {key}: {checks[key]} / {agree[key]}")
    print(
        f"  on the {len(spec_feeds)} feeds declaring the spec's URI ({SPEC_URI}), podcastparser found no "
        f"transcript and no person; ours found {unseen['transcripts']} items with transcripts and "
        f"{unseen['persons']} with people"
    )
    for line in disagreements[:10]:
        print("  disagree:", line)
    return 0 if not disagreements and checks == agree else 1


if __name__ == "__main__":
    sys.exit(main())
