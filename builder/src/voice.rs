//! Speaker embeddings for source 3 (voice match): Resemblyzer's GE2E speaker encoder (Apache-2.0), a
//! 3-layer LSTM over 40-band mel frames of 16 kHz speech, run here in Rust on the weights
//! `scripts/voice-model.py` takes out of the package's PyPI wheel ([`weights_path`]). It computes what
//! the Python package's `embed_utterance(preprocess_wav(…))` does — quiet speech raised to −30 dBFS,
//! silences cut by WebRTC's voice activity detector, 1.6 s windows every 0.77 s embedded and averaged —
//! and `embeddings_match_the_python_package_on_the_same_audio` holds it to that package's own output (cosine ≥ 0.99).
//!
//! Rejected: candle (its PyTorch reader takes only the zip format, and a 60-line LSTM needs no
//! framework), an ONNX runtime (a C++ library to ship), and an energy threshold in place of WebRTC's
//! detector (the embedding of speech with pauses then drifts from the reference's).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use ndarray::linalg::general_mat_mul;
use ndarray::{Array1, Array2, ArrayView1, Axis, s};
use realfft::{RealFftPlanner, RealToComplex};

/// Names every embedding this encoder makes: prints of other models are never compared with them.
pub const MODEL: &str = "resemblyzer-ge2e-0.1.4";

/// Where the weights are: `COMMONPLACE_VOICE_WEIGHTS`, else the cache `scripts/setup.sh` fills
/// (`~/.cache/commonplace/voice/`).
pub fn weights_path() -> PathBuf {
    if let Some(path) = std::env::var_os("COMMONPLACE_VOICE_WEIGHTS").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"));
    cache.join("commonplace/voice").join(format!("{MODEL}.safetensors"))
}

/// The encoder from [`weights_path`], or why there is none (the voice source then abstains saying so).
pub fn load() -> Result<Encoder> {
    let path = weights_path();
    let bytes = std::fs::read(&path).with_context(|| {
        format!("no speaker encoder weights at {} (scripts/setup.sh fetches them)", path.display())
    })?;
    Encoder::from_safetensors(&bytes).with_context(|| format!("{}", path.display()))
}

pub const SAMPLE_RATE: u32 = 16_000;
const N_FFT: usize = 400;
const HOP: usize = 160;
const N_MELS: usize = 40;
const HIDDEN: usize = 256;
const PARTIAL_FRAMES: usize = 160;
/// Windows start every 77 frames (Resemblyzer's `rate` of 1.3 windows a second).
const FRAME_STEP: usize = 77;
const MIN_COVERAGE: f32 = 0.75;
const TARGET_DBFS: f32 = -30.0;
const VAD_WINDOW: usize = 480;

struct Layer {
    /// (input + 256) × 1024: PyTorch's `weight_ih` over `weight_hh`, transposed, columns in the gate
    /// order i, f, g, o, so that a step is one product of `[x, h]` with it.
    w: Array2<f32>,
    /// `b_ih + b_hh`.
    bias: Array1<f32>,
    input: usize,
}

pub struct Encoder {
    layers: Vec<Layer>,
    /// 256 × 256, transposed.
    linear_w: Array2<f32>,
    linear_b: Array1<f32>,
    /// 40 × 201.
    mel: Vec<f32>,
    window: Vec<f32>,
    fft: Arc<dyn RealToComplex<f32>>,
}

fn tensor(file: &safetensors::SafeTensors, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let view = file.tensor(name).with_context(|| format!("the weights lack {name}"))?;
    if view.dtype() != safetensors::Dtype::F32 || view.shape() != shape {
        bail!("{name} is {:?} {:?}, not F32 {shape:?}", view.dtype(), view.shape());
    }
    Ok(view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

impl Encoder {
    pub fn from_safetensors(bytes: &[u8]) -> Result<Encoder> {
        let file = safetensors::SafeTensors::deserialize(bytes).context("reading the weights")?;
        let transposed = |rows: usize, cols: usize, data: Vec<f32>| -> Result<Array2<f32>> {
            Ok(Array2::from_shape_vec((rows, cols), data)?.reversed_axes().as_standard_layout().into_owned())
        };
        let mut layers = Vec::new();
        for (k, input) in [(0, N_MELS), (1, HIDDEN), (2, HIDDEN)] {
            let w_ih = tensor(&file, &format!("lstm.weight_ih_l{k}"), &[4 * HIDDEN, input])?;
            let w_hh = tensor(&file, &format!("lstm.weight_hh_l{k}"), &[4 * HIDDEN, HIDDEN])?;
            let b_ih = tensor(&file, &format!("lstm.bias_ih_l{k}"), &[4 * HIDDEN])?;
            let b_hh = tensor(&file, &format!("lstm.bias_hh_l{k}"), &[4 * HIDDEN])?;
            let bias = b_ih.iter().zip(&b_hh).map(|(a, b)| a + b).collect();
            let (w_ih, w_hh) = (transposed(4 * HIDDEN, input, w_ih)?, transposed(4 * HIDDEN, HIDDEN, w_hh)?);
            let w = ndarray::concatenate(Axis(0), &[w_ih.view(), w_hh.view()])?;
            layers.push(Layer { w, bias, input });
        }
        let linear_w = transposed(HIDDEN, HIDDEN, tensor(&file, "linear.weight", &[HIDDEN, HIDDEN])?)?;
        let linear_b = tensor(&file, "linear.bias", &[HIDDEN])?.into();
        let window = (0..N_FFT)
            .map(|n| (0.5 - 0.5 * (std::f64::consts::TAU * n as f64 / N_FFT as f64).cos()) as f32)
            .collect();
        let fft = RealFftPlanner::<f32>::new().plan_fft_forward(N_FFT);
        Ok(Encoder { layers, linear_w, linear_b, mel: mel_filters(), window, fft })
    }

    /// The embedding of one speaker's speech at 16 kHz, as Resemblyzer's `embed_utterance` of its
    /// `preprocess_wav`: quiet speech raised to −30 dBFS, long silences cut, then 1.6 s windows every
    /// 0.77 s embedded and averaged. `None` when nothing of it is speech.
    pub fn embed(&self, wav: &[f32]) -> Option<Vec<f32>> {
        self.embed_many(&[wav]).remove(0)
    }

    /// [`Encoder::embed`] of each utterance, their windows going through the LSTM together (many
    /// short turns cost about what one long one does).
    pub fn embed_many(&self, wavs: &[&[f32]]) -> Vec<Option<Vec<f32>>> {
        let mut mel = Vec::new();
        // Each window's first frame in `mel`, and whose it is.
        let mut windows: Vec<(usize, usize)> = Vec::new();
        for (owner, wav) in wavs.iter().enumerate() {
            let wav = trim_long_silences(&normalize_volume(wav));
            if wav.is_empty() {
                continue;
            }
            let (padded, starts) = windows_of(&wav);
            let offset = mel.len() / N_MELS;
            mel.extend(self.mel_spectrogram(&padded));
            windows.extend(starts.into_iter().map(|start| (offset + start, owner)));
        }
        let mut sums: Vec<Option<Vec<f32>>> = vec![None; wavs.len()];
        for batch in windows.chunks(BATCH) {
            let starts: Vec<usize> = batch.iter().map(|(start, _)| *start).collect();
            for (partial, (_, owner)) in self.forward(&mel, &starts).rows().into_iter().zip(batch) {
                let sum = sums[*owner].get_or_insert_with(|| vec![0f32; HIDDEN]);
                for (s, x) in sum.iter_mut().zip(partial) {
                    *s += x;
                }
            }
        }
        sums.into_iter().map(|sum| sum.map(normalised)).collect()
    }

    /// Frames × 40 mel bands (power, not log) of `wav`, centred frames of 400 samples every 160.
    fn mel_spectrogram(&self, wav: &[f32]) -> Vec<f32> {
        let n_frames = 1 + wav.len() / HOP;
        let mut padded = vec![0f32; N_FFT / 2];
        padded.extend_from_slice(wav);
        padded.resize(padded.len() + N_FFT / 2, 0.0);
        let mut input = self.fft.make_input_vec();
        let mut spectrum = self.fft.make_output_vec();
        let mut power = vec![0f32; N_FFT / 2 + 1];
        let mut out = Vec::with_capacity(n_frames * N_MELS);
        for frame in 0..n_frames {
            let at = frame * HOP;
            for (k, slot) in input.iter_mut().enumerate() {
                *slot = padded[at + k] * self.window[k];
            }
            self.fft.process(&mut input, &mut spectrum).expect("sizes match the plan");
            for (p, c) in power.iter_mut().zip(&spectrum) {
                *p = c.re * c.re + c.im * c.im;
            }
            for band in self.mel.chunks_exact(N_FFT / 2 + 1) {
                out.push(band.iter().zip(&power).map(|(w, p)| w * p).sum());
            }
        }
        out
    }

    /// The windows of 160 frames starting at `starts` through the LSTM and the head, all at once: one
    /// row of unit length per window. Each step of a layer is one matrix product of every window's
    /// `[x, h]` with the layer's weights: the weights are packed once per step for the whole batch.
    fn forward(&self, mel: &[f32], starts: &[usize]) -> Array2<f32> {
        let batch = starts.len();
        // The previous layer's outputs, row `t * batch + b` for step t of window b.
        let mut below: Option<Array2<f32>> = None;
        let mut h = Array2::<f32>::zeros((batch, HIDDEN));
        let mut gates = Array2::<f32>::zeros((batch, 4 * HIDDEN));
        for layer in &self.layers {
            let width = layer.input;
            let mut x = Array2::<f32>::zeros((batch, width + HIDDEN));
            let mut outputs = Array2::<f32>::zeros((PARTIAL_FRAMES * batch, HIDDEN));
            let mut c = Array2::<f32>::zeros((batch, HIDDEN));
            h.fill(0.0);
            for t in 0..PARTIAL_FRAMES {
                match &below {
                    None => {
                        for (b, start) in starts.iter().enumerate() {
                            let frame = &mel[(start + t) * N_MELS..(start + t + 1) * N_MELS];
                            x.slice_mut(s![b, ..width]).assign(&ArrayView1::from(frame));
                        }
                    }
                    Some(below) => {
                        x.slice_mut(s![.., ..width]).assign(&below.slice(s![t * batch..(t + 1) * batch, ..]))
                    }
                }
                x.slice_mut(s![.., width..]).assign(&h);
                gates.assign(&layer.bias.broadcast((batch, 4 * HIDDEN)).expect("a row per window"));
                general_mat_mul(1.0, &x, &layer.w, 1.0, &mut gates);
                for ((gate, c), h) in gates.rows().into_iter().zip(c.rows_mut()).zip(h.rows_mut()) {
                    let gate = gate.as_slice().expect("rows of a standard layout");
                    let (c, h) = (c.into_slice().expect("standard"), h.into_slice().expect("standard"));
                    for j in 0..HIDDEN {
                        let i = sigmoid(gate[j]);
                        let f = sigmoid(gate[HIDDEN + j]);
                        let g = tanh(gate[2 * HIDDEN + j]);
                        let o = sigmoid(gate[3 * HIDDEN + j]);
                        c[j] = f * c[j] + i * g;
                        h[j] = o * tanh(c[j]);
                    }
                }
                outputs.slice_mut(s![t * batch..(t + 1) * batch, ..]).assign(&h);
            }
            below = Some(outputs);
        }
        let mut raw = h.dot(&self.linear_w) + &self.linear_b;
        for mut row in raw.rows_mut() {
            row.mapv_inplace(|x| x.max(0.0));
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                row /= norm;
            }
        }
        raw
    }
}

/// The utterance padded to hold its last window, and where its windows start (in frames): 1.6 s
/// every 0.77 s, the last one kept if it is at least three-quarters speech.
fn windows_of(wav: &[f32]) -> (Vec<f32>, Vec<usize>) {
    let n_samples = wav.len();
    let n_frames = (n_samples + 1).div_ceil(HOP);
    let steps = (n_frames + FRAME_STEP + 1).saturating_sub(PARTIAL_FRAMES).max(1);
    let mut starts: Vec<usize> = (0..steps).step_by(FRAME_STEP).collect();
    if starts.len() > 1 {
        let last = *starts.last().expect("one at least");
        let (from, to) = (last * HOP, (last + PARTIAL_FRAMES) * HOP);
        let coverage = (n_samples.saturating_sub(from)) as f32 / (to - from) as f32;
        if coverage < MIN_COVERAGE {
            starts.pop();
        }
    }
    let longest = (starts.last().expect("one at least") + PARTIAL_FRAMES) * HOP;
    let mut padded = wav.to_vec();
    if longest >= padded.len() {
        padded.resize(longest, 0.0);
    }
    (padded, starts)
}

/// How many windows go through the LSTM together: the weights are packed once per step for the whole
/// batch (at 32 windows packing took an eighth of the time), and a batch's outputs (windows × 160 steps
/// × 256) stay near 20 MB.
const BATCH: usize = 128;

/// `tanh` as a rational function (Eigen's `ptanh_float`, within a few units in the last place of
/// `f32`): the LSTM takes five per unit and step, and the standard library's took most of the time.
fn tanh(x: f32) -> f32 {
    let x = x.clamp(-7.905_311, 7.905_311);
    let x2 = x * x;
    let mut p = x2 * -2.760_768_4e-16 + 2.000_188e-13;
    p = x2 * p - 8.604_672e-11;
    p = x2 * p + 5.122_297e-8;
    p = x2 * p + 1.485_722_4e-5;
    p = x2 * p + 6.372_619_3e-4;
    p = x2 * p + 4.893_524_6e-3;
    p *= x;
    let mut q = x2 * 1.198_258_4e-6 + 1.185_347_1e-4;
    q = x2 * q + 2.268_434_6e-3;
    q = x2 * q + 4.893_525e-3;
    p / q
}

fn sigmoid(x: f32) -> f32 {
    0.5 * (1.0 + tanh(0.5 * x))
}

fn normalised(v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 { v.into_iter().map(|x| x / norm).collect() } else { v }
}

/// librosa's mel filter bank (Slaney's scale and area normalisation) for 16 kHz and 400-point frames:
/// 40 rows of 201 weights.
fn mel_filters() -> Vec<f32> {
    let hz_to_mel = |f: f64| {
        if f < 1000.0 { f / (200.0 / 3.0) } else { 15.0 + (f / 1000.0).ln() / (6.4f64.ln() / 27.0) }
    };
    let mel_to_hz = |m: f64| {
        if m < 15.0 { m * (200.0 / 3.0) } else { 1000.0 * ((m - 15.0) * (6.4f64.ln() / 27.0)).exp() }
    };
    let top = hz_to_mel(f64::from(SAMPLE_RATE) / 2.0);
    let points: Vec<f64> = (0..N_MELS + 2).map(|i| mel_to_hz(top * i as f64 / (N_MELS + 1) as f64)).collect();
    let bins = N_FFT / 2 + 1;
    let mut filters = vec![0f32; N_MELS * bins];
    for m in 0..N_MELS {
        let (lo, mid, hi) = (points[m], points[m + 1], points[m + 2]);
        let scale = 2.0 / (hi - lo);
        for k in 0..bins {
            let f = k as f64 * f64::from(SAMPLE_RATE) / N_FFT as f64;
            let weight = ((f - lo) / (mid - lo)).min((hi - f) / (hi - mid)).max(0.0);
            filters[m * bins + k] = (weight * scale) as f32;
        }
    }
    filters
}

/// Quiet speech raised to an RMS of −30 dBFS (never lowered), as Resemblyzer's `normalize_volume`.
fn normalize_volume(wav: &[f32]) -> Vec<f32> {
    let int16_max = 32767.0f64;
    let mean_square =
        wav.iter().map(|&x| (f64::from(x) * int16_max).powi(2)).sum::<f64>() / wav.len().max(1) as f64;
    let dbfs = 20.0 * (mean_square.sqrt() / int16_max).log10();
    let change = f64::from(TARGET_DBFS) - dbfs;
    if !change.is_finite() || change < 0.0 {
        return wav.to_vec();
    }
    let gain = 10f64.powf(change / 20.0) as f32;
    wav.iter().map(|x| x * gain).collect()
}

/// Silences longer than about a fifth of a second cut, as Resemblyzer's `trim_long_silences`: WebRTC's
/// voice activity detector (its most aggressive mode) on 30 ms windows, smoothed over 8 windows and
/// widened by 3 on each side.
fn trim_long_silences(wav: &[f32]) -> Vec<f32> {
    let wav = &wav[..wav.len() - wav.len() % VAD_WINDOW];
    let mut vad = webrtc_vad::Vad::new_with_rate_and_mode(
        webrtc_vad::SampleRate::Rate16kHz,
        webrtc_vad::VadMode::VeryAggressive,
    );
    let flags: Vec<bool> = wav
        .chunks_exact(VAD_WINDOW)
        .map(|window| {
            let pcm: Vec<i16> = window.iter().map(|x| (x * 32767.0).round() as i16).collect();
            vad.is_voice_segment(&pcm).unwrap_or(false)
        })
        .collect();
    let n = flags.len();
    // The mean of 8 flags (3 before, the window, 4 after) rounded half to even: 5 of 8 or more.
    let voiced: Vec<bool> =
        (0..n).map(|j| (j.saturating_sub(3)..(j + 5).min(n)).filter(|&k| flags[k]).count() >= 5).collect();
    let kept: Vec<bool> = (0..n).map(|j| (j.saturating_sub(3)..(j + 4).min(n)).any(|k| voiced[k])).collect();
    wav.chunks_exact(VAD_WINDOW)
        .zip(&kept)
        .filter(|(_, keep)| **keep)
        .flat_map(|(w, _)| w.iter().copied())
        .collect()
}

/// `builder embed-voice`: the embedding of the speech in `path` (between `from` and `to` seconds,
/// when given), printed as `{model, seconds, embedding}`; an error when the file holds no speech.
pub fn embed_file(
    path: &std::path::Path,
    from: Option<f64>,
    to: Option<f64>,
) -> Result<std::process::ExitCode> {
    let encoder = load()?;
    let samples = decode_16k(path)?;
    let at = |seconds: Option<f64>, default: usize| {
        seconds.map_or(default, |s| ((s.max(0.0) * f64::from(SAMPLE_RATE)) as usize).min(samples.len()))
    };
    let (start, end) = (at(from, 0), at(to, samples.len()));
    if start >= end {
        bail!("--from must come before --to, inside the audio's {:.1} s", samples.len() as f64 / 16_000.0);
    }
    let speech = &samples[start..end];
    let embedding =
        encoder.embed(speech).with_context(|| format!("{} holds no speech there", path.display()))?;
    let answer = serde_json::json!({
        "model": MODEL,
        "seconds": (speech.len() as f64 / f64::from(SAMPLE_RATE) * 1000.0).round() / 1000.0,
        "embedding": embedding,
    });
    println!("{answer}");
    Ok(std::process::ExitCode::SUCCESS)
}

/// An audio file's samples, its channels averaged, at 16 kHz (symphonia decodes MP3, AAC in MP4/M4A,
/// WAV, FLAC and Ogg Vorbis): what the encoder takes.
pub fn decode_16k(path: &std::path::Path) -> Result<Vec<f32>> {
    Ok(decode_spans_16k(path, &[(0.0, f64::INFINITY)])?.remove(0))
}

/// Decoded before and after a span, so that a decoder starting cold has settled by its first sample.
const SPAN_MARGIN_S: f64 = 0.25;

/// The samples of each span (`start..end` seconds) of an audio file, channels averaged, at 16 kHz.
pub fn decode_spans_16k(path: &std::path::Path, spans: &[(f64, f64)]) -> Result<Vec<Vec<f32>>> {
    let mut out = vec![Vec::new(); spans.len()];
    each_span_16k(path, spans, |idx, samples| {
        out[idx] = samples;
        Ok(())
    })?;
    Ok(out)
}

/// Hands `each` the samples of each span (`start..end` seconds) of an audio file, channels averaged,
/// at 16 kHz, as soon as the file has passed the span's end: an hour is never held in memory. Only
/// the packets near a span are decoded and reading stops after the last span, so the cost follows
/// the speech asked for rather than the file's length.
pub fn each_span_16k(
    path: &std::path::Path,
    spans: &[(f64, f64)],
    mut each: impl FnMut(usize, Vec<f32>) -> Result<()>,
) -> Result<()> {
    use symphonia::core::audio::SampleBuffer;
    use symphonia::core::codecs::DecoderOptions;
    use symphonia::core::errors::Error;
    use symphonia::core::formats::FormatOptions;
    use symphonia::core::io::MediaSourceStream;
    use symphonia::core::meta::MetadataOptions;
    use symphonia::core::probe::Hint;

    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let stream = MediaSourceStream::new(Box::new(file), Default::default());
    let mut hint = Hint::new();
    if let Some(extension) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(extension);
    }
    let probed = symphonia::default::get_probe()
        .format(&hint, stream, &FormatOptions::default(), &MetadataOptions::default())
        .with_context(|| format!("{} is not audio this builder decodes", path.display()))?;
    let mut format = probed.format;
    let track = format.default_track().context("the file holds no audio track")?;
    let (track_id, rate, time_base) = (
        track.id,
        track.codec_params.sample_rate.context("the audio names no sample rate")?,
        track.codec_params.time_base,
    );
    let mut decoder = symphonia::default::get_codecs()
        .make(&track.codec_params, &DecoderOptions::default())
        .context("the audio's codec is not one this builder decodes")?;
    // Per span not yet handed over: the samples at the file's rate, and the second the first is at.
    let mut taken: Vec<Option<(Vec<f32>, Option<f64>)>> = vec![Some((Vec::new(), None)); spans.len()];
    let mut finish = |idx: usize, taken: &mut Vec<Option<(Vec<f32>, Option<f64>)>>| -> Result<()> {
        let Some((samples, first)) = taken[idx].take() else { return Ok(()) };
        let samples = to_16k(&samples, rate)?;
        let offset = |seconds: f64| {
            let from_first = (seconds - first.unwrap_or(0.0)).max(0.0) * f64::from(SAMPLE_RATE);
            (from_first as usize).min(samples.len())
        };
        let (start, end) = spans[idx];
        each(idx, samples[offset(start)..offset(end)].to_vec())
    };
    let mut counted = 0u64;
    loop {
        let packet = match format.next_packet() {
            Ok(packet) => packet,
            Err(Error::IoError(err)) if err.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(err) => return Err(err).context("reading the audio"),
        };
        if packet.track_id() != track_id {
            continue;
        }
        // Where the packet lies: its timestamp when the format tells one, else the samples so far.
        let seconds = |ts: u64| time_base.map(|tb| tb.calc_time(ts)).map(|t| t.seconds as f64 + t.frac);
        let at = seconds(packet.ts()).unwrap_or(counted as f64 / f64::from(rate));
        for idx in 0..spans.len() {
            if taken[idx].is_some() && at > spans[idx].1 + SPAN_MARGIN_S {
                finish(idx, &mut taken)?;
            }
        }
        if taken.iter().all(Option::is_none) {
            break;
        }
        let until = seconds(packet.ts() + packet.dur()).unwrap_or(f64::INFINITY);
        let near = |(start, end): &(f64, f64)| at <= end + SPAN_MARGIN_S && until >= start - SPAN_MARGIN_S;
        if time_base.is_some() && !spans.iter().any(near) {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged frame is skipped, as players do.
            Err(Error::DecodeError(_)) => continue,
            Err(err) => return Err(err).context("decoding the audio"),
        };
        let channels = decoded.spec().channels.count().max(1);
        let mut buffer = SampleBuffer::<f32>::new(decoded.capacity() as u64, *decoded.spec());
        buffer.copy_interleaved_ref(decoded);
        let mono =
            buffer.samples().chunks_exact(channels).map(|frame| frame.iter().sum::<f32>() / channels as f32);
        let mono: Vec<f32> = mono.collect();
        counted += mono.len() as u64;
        for (span, open) in spans.iter().zip(taken.iter_mut()) {
            if let Some((samples, first)) = open.as_mut().filter(|_| near(span)) {
                first.get_or_insert(at);
                samples.extend_from_slice(&mono);
            }
        }
    }
    for idx in 0..spans.len() {
        finish(idx, &mut taken)?;
    }
    Ok(())
}

/// `samples` at `rate` resampled to 16 kHz (rubato's FFT resampler).
pub fn to_16k(samples: &[f32], rate: u32) -> Result<Vec<f32>> {
    use audioadapter_buffers::direct::InterleavedSlice;
    use rubato::{Fft, FixedSync, Resampler};
    if rate == SAMPLE_RATE {
        return Ok(samples.to_vec());
    }
    let mut resampler = Fft::<f32>::new(rate as usize, SAMPLE_RATE as usize, 1024, 1, FixedSync::Input)?;
    let cap = resampler.process_all_needed_output_len(samples.len());
    let mut out = vec![0f32; cap];
    let input = InterleavedSlice::new(samples, 1, samples.len())?;
    let mut output = InterleavedSlice::new_mut(&mut out, 1, cap)?;
    let (_, n) = resampler.process_all_into_buffer(&input, &mut output, samples.len(), None)?;
    out.truncate(n);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        let mut acc = [0f32; 8];
        let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
        let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
        for (x, y) in ca.zip(cb) {
            for k in 0..8 {
                acc[k] += x[k] * y[k];
            }
        }
        acc.iter().sum::<f32>() + tail
    }

    /// A 16-bit mono WAV's samples as librosa reads them (÷ 32768), and its rate.
    fn wav(path: &std::path::Path) -> (Vec<f32>, u32) {
        let bytes = std::fs::read(path).unwrap();
        let rate = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
        let samples =
            bytes[44..].chunks_exact(2).map(|c| f32::from(i16::from_le_bytes([c[0], c[1]])) / 32768.0);
        (samples.collect(), rate)
    }

    #[test]
    fn embeddings_match_the_python_package_on_the_same_audio() {
        let encoder = load().expect("the weights: bash scripts/setup.sh fetches them");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/voices");
        let reference: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("reference.json")).unwrap()).unwrap();
        let mut ours = Vec::new();
        for name in ["host", "guest"] {
            let (samples, rate) = wav(&dir.join(format!("{name}.wav")));
            assert_eq!(rate, SAMPLE_RATE);
            let embedding = encoder.embed(&samples).expect("speech");
            let expected: Vec<f32> = reference["embeddings"][name]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            let cosine = dot(&embedding, &expected);
            assert!(cosine >= 0.99, "{name}: cosine {cosine} with the Python package's embedding");
            ours.push(embedding);
        }
        // Two voices are two voices: far apart, as the package has them (0.58).
        assert!(dot(&ours[0], &ours[1]) < 0.8, "{}", dot(&ours[0], &ours[1]));
        assert!(encoder.embed(&vec![0.0; 16_000]).is_none(), "silence is no one's voice");
    }
}
