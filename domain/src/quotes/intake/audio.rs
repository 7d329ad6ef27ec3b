//! An audio file's length from its first bytes, so that a service that cannot be held to a length
//! (Deepgram) is charged for what the file holds, not for what its feed claims.
//!
//! The intake reads the first bytes of the file (`Fetched::AudioHead`, a `Range` request) and its whole size
//! (`Content-Range`, or `Content-Length` when the host sends the whole file). From them:
//! - MP3 (after any ID3v2 tag): the frame count of a Xing, Info or VBRI header, else the first
//!   frame's bit rate over the file's size (a constant bit rate, as most podcasts use);
//! - WAV: the `data` chunk's size over the `fmt ` chunk's bytes per second;
//! - MP4 / M4A: `mvhd`'s duration over its time scale. When the `moov` box that holds it comes after
//!   the media data, the top-level boxes of the head say where it starts ([`index_at`]), and a
//!   second read there measures it ([`index_seconds`]).
//!
//! Anything else measures nothing, and the feed's claim stands.

/// The length in seconds of the audio whose first bytes are `head`, `total` bytes long in all.
pub fn measured_seconds(head: &[u8], total: Option<u64>) -> Option<f64> {
    let seconds = if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WAVE") {
        wav(head)
    } else if head.get(4..8) == Some(b"ftyp") {
        mp4(head)
    } else {
        mp3(head, total)
    }?;
    (seconds.is_finite() && seconds > 0.0).then_some(seconds)
}

fn u32_le(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u32_be(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_be(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// WAV: chunks after the 12-byte header; `fmt ` gives bytes per second, `data` its size.
fn wav(head: &[u8]) -> Option<f64> {
    let mut at = 12;
    let mut byte_rate = None;
    while let (Some(id), Some(size)) = (head.get(at..at + 4), u32_le(head, at + 4)) {
        match id {
            b"fmt " => byte_rate = u32_le(head, at + 16).filter(|rate| *rate > 0),
            b"data" => return Some(f64::from(size) / f64::from(byte_rate?)),
            _ => {}
        }
        // A hostile size must not wrap around to an earlier chunk (a loop without end).
        let next = u64::try_from(at).ok()? + 8 + u64::from(size) + u64::from(size & 1);
        at = usize::try_from(next).ok()?;
    }
    None
}

/// MP4: the `mvhd` box, wherever it sits in the head.
fn mp4(head: &[u8]) -> Option<f64> {
    let at = head.windows(4).position(|w| w == b"mvhd")? + 4;
    let (scale, duration) = match head.get(at)? {
        0 => (u32_be(head, at + 12)?, u64::from(u32_be(head, at + 16)?)),
        1 => (u32_be(head, at + 20)?, u64_be(head, at + 24)?),
        _ => return None,
    };
    (scale > 0).then(|| duration as f64 / f64::from(scale))
}

/// Where an MP4 whose head measured nothing keeps its index: the offset of the first top-level box
/// (after `ftyp`, `free`, `mdat`, …) that starts beyond the head.
pub fn index_at(head: &[u8]) -> Option<u64> {
    if head.get(4..8) != Some(b"ftyp") {
        return None;
    }
    let mut at: u64 = 0;
    loop {
        let i = usize::try_from(at).ok()?;
        if i + 16 > head.len() {
            return Some(at);
        }
        let size = match u32_be(head, i)? {
            // A box to the end of the file: nothing follows it.
            0 => return None,
            1 => u64_be(head, i + 8)?,
            size => u64::from(size),
        };
        if size < 8 {
            return None;
        }
        at = at.checked_add(size)?;
    }
}

/// The length an MP4's index says, read from where [`index_at`] pointed.
pub fn index_seconds(bytes: &[u8]) -> Option<f64> {
    if bytes.get(4..8) != Some(b"moov") {
        return None;
    }
    mp4(bytes).filter(|seconds| seconds.is_finite() && *seconds > 0.0)
}

/// One MPEG audio frame header.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Frame {
    /// MPEG 1, else 2 or 2.5.
    mpeg1: bool,
    layer: u8,
    bitrate: u32,
    sample_rate: u32,
    mono: bool,
    length: usize,
}

impl Frame {
    fn samples(self) -> u32 {
        match (self.layer, self.mpeg1) {
            (1, _) => 384,
            (3, false) => 576,
            _ => 1152,
        }
    }
}

const BITRATES_KBPS: [[u32; 15]; 5] = [
    [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448], // MPEG 1 layer I
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],    // MPEG 1 layer II
    [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],     // MPEG 1 layer III
    [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],    // MPEG 2 layer I
    [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],         // MPEG 2 layers II, III
];

fn frame(bytes: &[u8]) -> Option<Frame> {
    let [a, b, c, d] = *bytes.get(..4)? else { return None };
    if a != 0xFF || b & 0xE0 != 0xE0 {
        return None;
    }
    let version = (b >> 3) & 3; // 0: 2.5, 2: 2, 3: 1
    let layer = match (b >> 1) & 3 {
        3 => 1,
        2 => 2,
        1 => 3,
        _ => return None,
    };
    let (bitrate_index, rate_index) = (usize::from(c >> 4), usize::from((c >> 2) & 3));
    if version == 1 || bitrate_index == 0 || bitrate_index == 15 || rate_index == 3 {
        return None;
    }
    let mpeg1 = version == 3;
    let table = match (mpeg1, layer) {
        (true, layer) => usize::from(layer) - 1,
        (false, 1) => 3,
        (false, _) => 4,
    };
    let bitrate = BITRATES_KBPS[table][bitrate_index] * 1000;
    let sample_rate = [44_100, 48_000, 32_000][rate_index]
        >> match version {
            3 => 0,
            2 => 1,
            _ => 2,
        };
    let padding = usize::from((c >> 1) & 1);
    let length = if layer == 1 {
        (12 * bitrate / sample_rate) as usize * 4 + padding * 4
    } else {
        let per = if layer == 3 && !mpeg1 { 72 } else { 144 };
        (per * bitrate / sample_rate) as usize + padding
    };
    Some(Frame { mpeg1, layer, bitrate, sample_rate, mono: d >> 6 == 3, length })
}

/// MP3: the first frame that another follows, after any ID3v2 tag.
fn mp3(head: &[u8], total: Option<u64>) -> Option<f64> {
    let tag = if head.starts_with(b"ID3") {
        let size = head.get(6..10)?.iter().fold(0usize, |n, b| (n << 7) | usize::from(b & 0x7F));
        let footer = if head.get(5)? & 0x10 != 0 { 10 } else { 0 };
        10 + size + footer
    } else {
        0
    };
    let (start, first) = (tag..head.len().saturating_sub(4)).find_map(|at| {
        let first = frame(&head[at..])?;
        let next = head.get(at + first.length..)?;
        frame(next).filter(|n| n.sample_rate == first.sample_rate).map(|_| (at, first))
    })?;
    // Xing / Info sits after the side information; VBRI 32 bytes after the header.
    let side = match (first.mpeg1, first.mono) {
        (true, false) => 32,
        (true, true) | (false, false) => 17,
        (false, true) => 9,
    };
    let frames = match (head.get(start + 4 + side..start + 8 + side), head.get(start + 36..start + 40)) {
        (Some(b"Xing" | b"Info"), _) if u32_be(head, start + 8 + side)? & 1 == 1 => {
            u32_be(head, start + 12 + side)
        }
        (_, Some(b"VBRI")) => u32_be(head, start + 50),
        _ => None,
    };
    match frames {
        Some(frames) => Some(f64::from(frames) * f64::from(first.samples()) / f64::from(first.sample_rate)),
        None => {
            let audio = total?.checked_sub(start as u64)?;
            Some(audio as f64 * 8.0 / f64::from(first.bitrate))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CBR MPEG 1 layer III stream: 128 kbit/s, 44.1 kHz, stereo, `frames` frames.
    fn mp3_frames(frames: usize) -> Vec<u8> {
        let header = [0xFF, 0xFB, 0x90, 0x00];
        let length = 144 * 128_000 / 44_100;
        let mut out = Vec::new();
        for _ in 0..frames {
            out.extend_from_slice(&header);
            out.resize(out.len() + length - 4, 0);
        }
        out
    }

    #[test]
    fn a_constant_bit_rate_mp3_is_measured_by_its_size() {
        let mut file = b"ID3\x04\x00\x00\x00\x00\x01\x00".to_vec(); // a 128-byte tag
        file.resize(10 + 128, 0);
        file.extend(mp3_frames(40));
        let total = 10 + 128 + 3600 * 16_000; // an hour at 128 kbit/s
        let seconds = measured_seconds(&file, Some(total)).unwrap();
        assert!((seconds - 3600.0).abs() < 0.1, "{seconds}");
        assert_eq!(measured_seconds(&file, None), None, "without its size a CBR file is not measured");
    }

    #[test]
    fn a_xing_header_gives_the_frame_count() {
        let mut file = mp3_frames(40);
        file[4 + 32..8 + 32].copy_from_slice(b"Xing");
        file[8 + 32..12 + 32].copy_from_slice(&1u32.to_be_bytes());
        file[12 + 32..16 + 32].copy_from_slice(&100_000u32.to_be_bytes());
        let seconds = measured_seconds(&file, Some(1)).unwrap();
        assert!((seconds - 100_000.0 * 1152.0 / 44_100.0).abs() < 0.01, "{seconds}");
    }

    #[test]
    fn wav_and_mp4_say_their_length() {
        let mut wav =
            b"RIFF\0\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x40\x1f\0\0\x40\x1f\0\0\x01\0\x08\0data".to_vec();
        wav.extend_from_slice(&(8000u32 * 5400).to_le_bytes());
        assert_eq!(measured_seconds(&wav, None), Some(5400.0));
        let mut mp4 = b"\0\0\0\x18ftypM4A \0\0\0\0M4A mp42\0\0\0\x6cmoov\0\0\0\x6cmvhd".to_vec();
        mp4.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        mp4.extend_from_slice(&1000u32.to_be_bytes());
        mp4.extend_from_slice(&2_700_000u32.to_be_bytes());
        assert_eq!(measured_seconds(&mp4, None), Some(2700.0));
    }

    #[test]
    fn an_mp4_with_its_index_after_the_media_is_measured_in_a_second_read() {
        let mut head = b"\0\0\0\x18ftypM4A \0\0\0\0M4A mp42\0\0\0\x01mdat".to_vec();
        head.extend_from_slice(&(16u64 + 90_000_000).to_be_bytes());
        head.resize(65_536, 0);
        assert_eq!(measured_seconds(&head, Some(90_000_200)), None);
        assert_eq!(index_at(&head), Some(24 + 16 + 90_000_000));
        let mut index = b"\0\0\0\x6cmoov\0\0\0\x64mvhd".to_vec();
        index.extend_from_slice(&[1, 0, 0, 0]);
        index.extend_from_slice(&[0; 16]);
        index.extend_from_slice(&600u32.to_be_bytes());
        index.extend_from_slice(&(600u64 * 5400).to_be_bytes());
        assert_eq!(index_seconds(&index), Some(5400.0));
        assert_eq!(index_seconds(&head), None, "only a moov box is an index");
        assert_eq!(index_at(b"RIFF\0\0\0\0WAVE"), None);
    }

    #[test]
    fn anything_else_measures_nothing() {
        assert_eq!(measured_seconds(b"<html>not audio</html>", Some(1000)), None);
        assert_eq!(
            measured_seconds(&[0xFF, 0xFB, 0x90, 0x00, 1, 2], Some(1000)),
            None,
            "one frame is no stream"
        );
        assert_eq!(measured_seconds(b"", None), None);
        let wrapping = b"RIFF\0\0\0\0WAVEjunk\xf8\xff\xff\xffjunk";
        assert_eq!(measured_seconds(wrapping, None), None, "a chunk size that wraps ends the walk");
    }
}
