//! Fuzz targets of network files, the files of networks that the engine reads from anybody
//! (`nn:` players, `--model`, `zertz model info`): seeded mutations of small valid files fed to
//! [`decode_network`] and [`read_network`], for a bounded time in the test suite.
//!
//! - `network-bytes` mutates a file's bytes anywhere (its header length, its header, its
//!   weights);
//! - `network-header` mutates a file taken apart as text: its header as pretty JSON (tensor
//!   names, types, shapes and places, `__metadata__` and its keys), its metadata as pretty JSON
//!   (every field, the architecture and its sizes), its weights in hex, and edits (`hlen D`:
//!   the stated header length off by D; `float I V`: weight I set to V; `grow N`, `cut N`:
//!   weights' bytes added or taken off; `sha HEX`: the checksum stated instead of the true one).
//!   The file is put together again with the length of its header and the checksum of its
//!   weights (unless an edit says otherwise), so that mutations get past those checks to the
//!   ones behind them.
//!
//! Every input is refused with an error that names the file on one line, or decodes to a file
//! whose tensors are exactly those of the architecture at the sizes its metadata names, finite,
//! read from the places its header states and together every byte after the header, whose
//! checksum is theirs, and which `encode_network` writes back as the same network. Reading it
//! from a file ([`read_network`]) answers the same. Neither allocates more than a small multiple
//! of the file's length at once (a counting allocator measures it): nothing that a header
//! states is allocated before the file is seen to hold it.
//!
//! Here, not beside the format in the model crate, as the program's own input: `fuzzkit`
//! depends on no crate of the project (its tests would link libtorch).
//!
//! Budget: `ZERTZ_FUZZ_SECS` seconds (default 8) for both targets together,
//! `ZERTZ_FUZZ_CASES` inputs, `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-cli --test fuzz -- --nocapture
//! ```

// The counting allocator: `GlobalAlloc` is an unsafe trait.
#![allow(unsafe_code)]

mod common;

use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use zertz_env::encode::ENCODING_VERSION;
use zertz_env::{ActionSpace, Board, SplitMix64};
use zertz_fuzzkit::{Budget, fuzz_within};
use zertz_model::architecture::{ARCHITECTURE, Sizes};
use zertz_model::format::{CHECKSUM_KEY, MAX_HEADER_BYTES, METADATA_KEY};
use zertz_model::{
    MODEL_FORMAT, MODEL_FORMAT_VERSION, ModelError, NetworkFile, decode_network, encode_network,
    read_network,
};

/// Counts the bytes each thread holds allocated, and the most it held at once.
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    /// The system allocator, counting.
    pub struct Counting;

    thread_local! {
        /// Bytes allocated less bytes freed by this thread (may go below zero: memory freed
        /// here that another thread allocated).
        static LIVE: Cell<i64> = const { Cell::new(0) };
        /// The most `LIVE` reached since [`peak`] started.
        static PEAK: Cell<i64> = const { Cell::new(0) };
    }

    fn add(bytes: i64) {
        // `try_with`: never a panic in the allocator, at a thread's end either.
        let _ = LIVE.try_with(|live| {
            let now = live.get() + bytes;
            live.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
        });
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(layout) };
            if !p.is_null() {
                add(layout.size() as i64);
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = unsafe { System.alloc_zeroed(layout) };
            if !p.is_null() {
                add(layout.size() as i64);
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { System.dealloc(ptr, layout) };
            add(-(layout.size() as i64));
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if !p.is_null() {
                // Both blocks are held while the old one is copied into the new.
                add(new_size as i64);
                add(-(layout.size() as i64));
            }
            p
        }
    }

    /// What `f` returns, and the most bytes this thread held allocated at once while it ran,
    /// above what it held before.
    pub fn peak<T>(f: impl FnOnce() -> T) -> (T, usize) {
        let base = LIVE.with(Cell::get);
        PEAK.with(|p| p.set(base));
        let out = f();
        let most = PEAK.with(Cell::get);
        (out, usize::try_from(most - base).unwrap_or(0))
    }
}

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

/// The most bytes reading a file of `len` bytes may hold at once: the file's weights as floats,
/// its header parsed (serde buffers the JSON as it reads it: about 31 bytes per byte of a shape
/// of one-digit numbers, the worst text there is) and the architecture's list of tensors; never
/// what a header merely states.
fn allowance(len: usize) -> usize {
    64 * len + (4 << 20)
}

/// The networks of the corpus: sizes, boards, marble sets, with provenance or not.
const NETWORKS: [(Sizes, &[usize], &[&str], bool); 3] = [
    (sizes(2, 1, 1, 1, 1), &[37], &["standard"], false),
    (sizes(3, 2, 2, 2, 3), &[37, 48, 61], &["standard", "blitz"], true),
    (sizes(1, 1, 1, 1, 1), &[61], &["blitz"], false),
];

const fn sizes(channels: usize, blocks: usize, rank: usize, vc: usize, vh: usize) -> Sizes {
    Sizes { channels, blocks, policy_rank: rank, value_channels: vc, value_hidden: vh }
}

/// The metadata of a network file, as `zertz.export` writes it.
fn metadata(sizes: Sizes, boards: &[usize], marbles: &[&str], provenance: bool) -> Value {
    let action_space: serde_json::Map<String, Value> = boards
        .iter()
        .map(|&b| (b.to_string(), ActionSpace::new(Board::from_rings(b).unwrap()).len().into()))
        .collect();
    let mut meta = json!({
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "architecture": ARCHITECTURE,
        "name": "fuzz",
        "encoding_version": ENCODING_VERSION,
        "boards": boards,
        "marbles": marbles,
        "action_space": action_space,
        "network": sizes,
        "step": 7,
        "exported": "2026-12-07T00:00:00Z",
    });
    if provenance {
        meta["provenance"] = json!({"commit": "56bd8d3", "figures": {"elo": 1.5, "games": [1, 2]}});
    }
    meta
}

/// Every tensor of a network of `sizes`, its values drawn from `seed` (finite, some zero).
fn tensors(sizes: Sizes, seed: u64) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let mut rng = SplitMix64(seed);
    sizes
        .tensors()
        .into_iter()
        .map(|(name, shape)| {
            let n = shape.iter().product();
            let values = (0..n).map(|_| rng.below(2001) as f32 / 1000.0 - 1.0).collect();
            (name, shape, values)
        })
        .collect()
}

/// The valid files the targets start from.
fn files() -> Vec<Vec<u8>> {
    NETWORKS
        .iter()
        .enumerate()
        .map(|(i, &(sizes, boards, marbles, provenance))| {
            let meta = metadata(sizes, boards, marbles, provenance).to_string();
            encode_network(&meta, &tensors(sizes, i as u64)).unwrap()
        })
        .collect()
}

/// The length a file's first 8 bytes state, and the header after them.
fn header_of(file: &[u8]) -> (usize, &[u8]) {
    let n = u64::from_le_bytes(file[..8].try_into().unwrap()) as usize;
    (n, &file[8..8 + n])
}

/// The header of a valid file (JSON) and the metadata in it.
fn parts(file: &[u8]) -> (Value, Value) {
    let header: Value = serde_json::from_slice(header_of(file).1).unwrap();
    let meta = serde_json::from_str(header["__metadata__"][METADATA_KEY].as_str().unwrap());
    (header, meta.unwrap())
}

/// `file` with the header `text` instead of its own (its length stated anew) and `extra` bytes
/// after its weights.
fn rebuilt(file: &[u8], text: &str, extra: &[u8]) -> Vec<u8> {
    let mut out = (text.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(&file[8 + header_of(file).0..]);
    out.extend_from_slice(extra);
    out
}

/// `file` with `header` instead of its own and `extra` bytes after its weights.
fn with_header(file: &[u8], header: &Value, extra: &[u8]) -> Vec<u8> {
    rebuilt(file, &header.to_string(), extra)
}

/// `file` with its header written out again as pretty JSON (one line per field and shape
/// element, which the mutator's line edits drop, repeat and swap).
fn pretty(file: &[u8]) -> Vec<u8> {
    rebuilt(file, &serde_json::to_string_pretty(&parts(file).0).unwrap(), &[])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The sections of a structured input.
const SEPARATOR: &[u8] = b"\n%%\n";
/// Where the metadata (a JSON string of it) and the checksum go in a structured input's header.
const META_SLOT: &[u8] = b"\"$META\"";
const SHA_SLOT: &[u8] = b"\"$SHA\"";

/// A valid file taken apart as a structured input (see the module docs).
fn structured(file: &[u8]) -> Vec<u8> {
    let n = header_of(file).0;
    let (mut header, meta) = parts(file);
    header["__metadata__"] = json!({ METADATA_KEY: "$META", CHECKSUM_KEY: "$SHA" });
    let mut out = serde_json::to_string_pretty(&header).unwrap().into_bytes();
    out.extend_from_slice(SEPARATOR);
    out.extend(serde_json::to_string_pretty(&meta).unwrap().into_bytes());
    out.extend_from_slice(SEPARATOR);
    // The weights in hex, 64 bytes a line.
    for line in file[8 + n..].chunks(64) {
        out.extend(hex(line).into_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(&SEPARATOR[1..]);
    out.extend_from_slice(b"hlen 0\n");
    out
}

fn split<'a>(mut s: &'a [u8], separator: &[u8]) -> Vec<&'a [u8]> {
    let mut parts = Vec::new();
    while let Some(i) = s.windows(separator.len()).position(|w| w == separator) {
        parts.push(&s[..i]);
        s = &s[i + separator.len()..];
    }
    parts.push(s);
    parts
}

fn replace(s: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let parts = split(s, from);
    parts.join(to)
}

/// The file a structured input describes (see the module docs): its sections are the header, the
/// metadata, the weights in hex and the edits; those missing are empty.
fn assemble(input: &[u8]) -> Vec<u8> {
    let sections = split(input, SEPARATOR);
    let section = |i: usize| sections.get(i).copied().unwrap_or_default();
    let meta = String::from_utf8_lossy(section(1));
    let digits: Vec<u8> =
        section(2).iter().filter_map(|&c| char::from(c).to_digit(16).map(|d| d as u8)).collect();
    let mut data: Vec<u8> = digits.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect();
    let (mut delta, mut sha) = (0i64, None);
    for line in String::from_utf8_lossy(section(3)).lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let number = |i: usize| words.get(i).and_then(|w| w.parse::<i64>().ok());
        match (words.first().copied(), number(1)) {
            (Some("hlen"), Some(d)) => delta = delta.wrapping_add(d),
            (Some("float"), Some(i)) if data.len() >= 4 => {
                let Some(v) = words.get(2).and_then(|w| w.parse::<f32>().ok()) else { continue };
                let at = 4 * (i.unsigned_abs() as usize % (data.len() / 4));
                data[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
            (Some("grow"), Some(n)) => data.resize(data.len() + n.clamp(0, 1 << 16) as usize, 0),
            (Some("cut"), Some(n)) => data.truncate(data.len().saturating_sub(n.max(0) as usize)),
            (Some("sha"), _) => sha = words.get(1).map(|s| s.to_string()),
            _ => {}
        }
    }
    let sha = sha.unwrap_or_else(|| sha256(&data));
    let header = replace(section(0), META_SLOT, Value::from(meta).to_string().as_bytes());
    let header = replace(&header, SHA_SLOT, Value::from(sha).to_string().as_bytes());
    let mut file = (header.len() as u64).wrapping_add_signed(delta).to_le_bytes().to_vec();
    file.extend(header);
    file.extend(data);
    file
}

/// Reads `bytes` as a network file both ways (the file at `at` is overwritten with them) and
/// checks what they answer (see the module docs); whether it was accepted.
fn check_file(at: &Path, bytes: &[u8]) -> bool {
    let (decoded, most) = counting::peak(|| decode_network(at, bytes));
    let len = bytes.len();
    assert!(most <= allowance(len), "decoding {len} bytes held {most} bytes at once");
    std::fs::write(at, bytes).unwrap();
    let (read, most) = counting::peak(|| read_network(at));
    assert!(most <= allowance(len), "reading {len} bytes held {most} bytes at once");
    match (&decoded, &read) {
        (Ok(a), Ok(b)) => {
            assert_eq!((&a.json, &a.sha256, &a.tensors), (&b.json, &b.sha256, &b.tensors));
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        _ => panic!("decode_network answered {decoded:?}, read_network {read:?}"),
    }
    match decoded {
        Ok(file) => {
            check_accepted(bytes, &file);
            true
        }
        Err(e) => {
            check_error(at, &e);
            false
        }
    }
}

/// One line that names the file, and no control character that a file put there (a newline,
/// a terminal's escape sequence).
fn check_error(at: &Path, e: &ModelError) {
    let text = e.to_string();
    assert!(text.contains(&at.display().to_string()), "{text}");
    assert!(!text.contains(char::is_control), "a control character: {text:?}");
}

/// What an accepted file holds (see the module docs).
fn check_accepted(bytes: &[u8], file: &NetworkFile) {
    let sizes = file.sizes;
    assert_eq!(sizes.check(), Ok(()));
    assert_eq!(serde_json::from_value::<Sizes>(file.metadata.network.clone()).unwrap(), sizes);
    assert_eq!(file.metadata.architecture.as_deref(), Some(ARCHITECTURE));
    assert_eq!(file.metadata.format_version, MODEL_FORMAT_VERSION);
    let (n, header) = header_of(bytes);
    let header: Value = serde_json::from_slice(header).unwrap();
    let data = &bytes[8 + n..];
    let expected = sizes.tensors();
    assert_eq!(file.tensors.len(), expected.len());
    let mut total = 0;
    for ((name, shape, values), (want, want_shape)) in file.tensors.iter().zip(&expected) {
        assert_eq!((name, shape), (want, want_shape));
        assert_eq!(values.len(), shape.iter().product::<usize>(), "{name}");
        assert!(values.iter().all(|v| v.is_finite()), "{name}");
        let places = &header[name.as_str()]["data_offsets"];
        let (start, end) = (places[0].as_u64().unwrap(), places[1].as_u64().unwrap());
        let read: Vec<f32> = data[start as usize..end as usize]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(&read, values, "{name}");
        total += 4 * values.len();
    }
    assert_eq!(data.len(), total, "bytes after the header that no tensor holds");
    assert_eq!(file.sha256, sha256(data));
    assert_eq!(file.metadata.sha256.as_deref(), Some(file.sha256.as_str()));
    // Written back by the engine: the same network.
    let again = encode_network(&file.json, &file.tensors).unwrap();
    let back = decode_network(Path::new("again"), &again).unwrap();
    assert_eq!((&back.json, back.sizes, &back.tensors), (&file.json, sizes, &file.tensors));
}

/// Pieces of the format that mutations insert.
const TOKENS: &[&str] = &[
    "\"F32\"",
    "\"F16\"",
    "\"BF16\"",
    "\"F64\"",
    "\"I64\"",
    "\"U8\"",
    "\"BOOL\"",
    "\"F8_E4M3\"",
    "\"dtype\"",
    "\"shape\"",
    "\"data_offsets\"",
    "\"__metadata__\"",
    "\"zertz\"",
    "\"sha256\"",
    "\"stem.weight\"",
    "\"blocks.0.conv1.weight\"",
    "\"blocks.1.bn2.running_var\"",
    "\"blocks.2.pool.bias\"",
    "\"captures.weight\"",
    "\"stem_bn.num_batches_tracked\"",
    "\"format\"",
    "\"zertz-model\"",
    "\"format_version\"",
    "\"architecture\"",
    "\"ZertzNet\"",
    "\"network\"",
    "\"channels\"",
    "\"blocks\"",
    "\"policy_rank\"",
    "\"value_channels\"",
    "\"value_hidden\"",
    "\"encoding_version\"",
    "\"boards\"",
    "\"marbles\"",
    "\"standard\"",
    "\"blitz\"",
    "\"action_space\"",
    "\"37\"",
    "\"step\"",
    "\"provenance\"",
    "\"backend\"",
    "\"aoti\"",
    "\"$META\"",
    "\"$SHA\"",
    "\\n",
    "\\u001b",
    "\\\"",
    "\"",
    "{",
    "}",
    "[",
    "]",
    "[]",
    "{}",
    ",",
    ":",
    "\n",
    " ",
    "null",
    "true",
    "0",
    "1",
    "2",
    "3",
    "4",
    "8",
    "16",
    "37",
    "48",
    "61",
    "100",
    "101",
    "1024",
    "1025",
    "4096",
    "4441",
    "-1",
    "1.5",
    "1e2",
    "65536",
    "1048576",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
    "nan",
    "inf",
    "-inf",
    "1e39",
    "3.4e38",
    "-0",
    "hlen ",
    "float ",
    "grow ",
    "cut ",
    "sha ",
    "\n%%\n",
    "PK\u{3}\u{4}",
    "\u{0}",
    "\u{ff}",
    "é",
];

/// Each target's share of the budget: half the usual time; at least 256 inputs, after which
/// each target has accepted some (with the default seed), however busy the machine.
fn budget() -> Budget {
    let b = Budget::from_env();
    Budget { secs: b.secs / 2.0, min_cases: b.min_cases.max(256), ..b }
}

#[test]
fn fuzz_network_bytes() {
    let dir = common::temp_dir("bytes");
    let at = dir.join("network.safetensors");
    let mut corpus = files();
    corpus.extend(files().iter().map(|f| pretty(f)));
    for f in &corpus {
        assert!(check_file(&at, f), "a valid file is refused");
    }
    let report = fuzz_within(budget(), "network-bytes", corpus, TOKENS, |b| check_file(&at, b));
    assert!(report.accepted > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fuzz_network_header() {
    let dir = common::temp_dir("header");
    let at = dir.join("network.safetensors");
    let corpus: Vec<Vec<u8>> = files().iter().map(|f| structured(f)).collect();
    for (input, file) in corpus.iter().zip(files()) {
        // Taken apart and put together again: the same file, but for the header's layout.
        let again = assemble(input);
        assert!(check_file(&at, &again), "a valid file is refused");
        let (a, b) = (decode_network(&at, &again).unwrap(), decode_network(&at, &file).unwrap());
        let json = |text: &str| serde_json::from_str::<Value>(text).unwrap();
        assert_eq!((json(&a.json), a.sha256), (json(&b.json), b.sha256));
        assert!(a.tensors == b.tensors);
    }
    let report =
        fuzz_within(budget(), "network-header", corpus, TOKENS, |b| check_file(&at, &assemble(b)));
    assert!(report.accepted > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file whose header states more than the file holds, or more than a network may be, is
/// refused without allocating what it states.
#[test]
fn what_a_header_states_is_not_allocated_before_the_file_holds_it() {
    let dir = common::temp_dir("claims");
    let at = dir.join("network.safetensors");
    let file = &files()[0];
    let (header, meta) = parts(file);
    let with = |header: &Value| with_header(file, header, &[]);
    let mut cases: Vec<(Vec<u8>, &str)> = Vec::new();
    // Header lengths past the bound and past the file.
    for len in [u64::MAX, MAX_HEADER_BYTES + 1, 1 << 30] {
        let mut f = file.clone();
        f[..8].copy_from_slice(&len.to_le_bytes());
        cases.push((f, "its header would be"));
    }
    // A tensor 4 TB long, its shape as the architecture's or not.
    for shape in [json!([1u64 << 40]), header["stem.weight"]["shape"].clone()] {
        let mut h = header.clone();
        h["stem.weight"] = json!({"dtype": "F32", "shape": shape, "data_offsets": [0, 1u64 << 42]});
        cases.push((with(&h), "stem.weight"));
    }
    // The largest sizes there are (100 blocks of 1024 channels), and sizes within the bounds
    // that make 7.6e7 parameters (which a file of this size cannot hold): refused from the metadata alone.
    for sizes in [sizes(1024, 100, 1024, 1024, 4096), sizes(1024, 4, 8, 16, 64)] {
        let mut m = meta.clone();
        m["network"] = serde_json::to_value(sizes).unwrap();
        let mut h = header.clone();
        h["__metadata__"][METADATA_KEY] = m.to_string().into();
        let refused = if sizes.blocks == 100 { "more than the" } else { "its architecture's is" };
        cases.push((with(&h), refused));
    }
    for (bytes, words) in &cases {
        let (e, most) = counting::peak(|| decode_network(&at, bytes).unwrap_err());
        check_error(&at, &e);
        assert!(e.to_string().contains(words), "{e}");
        assert!(most < 2 << 20, "{e}: {most} bytes held at once");
        std::fs::write(&at, bytes).unwrap();
        let (e, most) = counting::peak(|| read_network(&at).unwrap_err());
        assert!(e.to_string().contains(words), "{e}");
        assert!(most < 2 << 20, "{e}: {most} bytes held at once");
    }
    // A header of many small numbers (a shape of 100,000 ones, 200 KB): parsing it takes about
    // 31 times its length, within the allowance.
    let mut h = header.clone();
    h["stem.weight"]["shape"] = json!(vec![1; 100_000]);
    let bytes = with(&h);
    let (e, most) = counting::peak(|| decode_network(&at, &bytes).unwrap_err());
    assert!(e.to_string().contains("unreadable header"), "{e}");
    assert!(most <= allowance(bytes.len()), "{most} bytes held at once for {}", bytes.len());
    // A program (a zip, as TorchScript files are) is refused from its first bytes, with the way
    // to convert it.
    let e = decode_network(&at, b"PK\x03\x04 the rest of an archive").unwrap_err();
    assert!(matches!(e, ModelError::Code { .. }), "{e}");
    assert!(e.to_string().contains("python -m zertz convert-network"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What a file says is quoted in errors (an unknown type, a tensor of another name, an unknown
/// size): escaped, so that an error stays one line of text, whatever the file holds.
#[test]
fn errors_quote_a_file_without_its_control_characters() {
    let at = Path::new("hostile.safetensors");
    let file = &files()[0];
    let (header, meta) = parts(file);
    // 4 bytes more than the weights: the room of a tensor more (below).
    let with = |header: &Value| with_header(file, header, &[0; 4]);
    let hostile = "\u{1b}[31mred\nsecond line\r";
    let mut cases = Vec::new();
    let mut h = header.clone();
    h["stem.weight"]["dtype"] = hostile.into();
    cases.push(h);
    // A tensor more, after the others.
    let mut h = header.clone();
    let end = (file.len() - 8 - header_of(file).0) as u64;
    h[hostile] = json!({"dtype": "F32", "shape": [1], "data_offsets": [end, end + 4]});
    cases.push(h);
    let mut h = header.clone();
    h["__metadata__"][hostile] = "x".into();
    cases.push(h);
    for (key, value) in [("format", json!(hostile)), ("marbles", json!([hostile]))] {
        let mut m = meta.clone();
        m[key] = value;
        let mut h = header.clone();
        h["__metadata__"][METADATA_KEY] = m.to_string().into();
        cases.push(h);
    }
    let mut m = meta.clone();
    m["network"][hostile] = 1.into();
    let mut h = header.clone();
    h["__metadata__"][METADATA_KEY] = m.to_string().into();
    cases.push(h);
    for h in &cases {
        let e = decode_network(at, &with(h)).unwrap_err();
        check_error(at, &e);
        assert!(e.to_string().contains("red"), "{e}");
    }
}

#[test]
fn the_counting_allocator_sees_what_a_thread_holds_at_once() {
    let (_, most) = counting::peak(|| {
        let a = vec![1u8; 3 << 20];
        let b = vec![2u8; 5 << 20];
        (a.len(), b.len())
    });
    assert!((8 << 20..9 << 20).contains(&most), "{most}");
    let (_, most) = counting::peak(|| (0..4).map(|_| vec![0u8; 1 << 20].len()).sum::<usize>());
    assert!((1 << 20..2 << 20).contains(&most), "{most}");
}
