//! Network files: a network's weights and metadata, which are data and never code.
//!
//! A network file is a [safetensors](https://github.com/huggingface/safetensors) file: an
//! 8-byte little-endian header length, a JSON header that names every tensor with its type,
//! shape and place, then the tensors' bytes. Its header's `__metadata__` holds two strings and
//! nothing else:
//!
//! - `zertz`: the network's metadata as JSON ([`Metadata`]: format and version, the
//!   architecture ([`ARCHITECTURE`]) and its sizes, the encoding version, boards, marble sets,
//!   action spaces, training step, provenance);
//! - `sha256`: the SHA-256 of the tensors' bytes (everything after the header), in hex.
//!
//! The tensors are exactly those of the architecture at the sizes the metadata names
//! ([`Sizes::tensors`]), each in little-endian `F32`. Reading ([`read_network`],
//! [`decode_network`]) checks the header first: its length against [`MAX_HEADER_BYTES`], the
//! metadata against this engine, every tensor's name, type and shape against the architecture,
//! and the file's length against the header's, all before a byte of a tensor is read; then the
//! checksum and that every weight is finite. A file that is not exactly that is refused with a
//! [`ModelError`] that names it and says what is wrong. Nothing in the file is executed: the
//! engine runs its own architecture on the weights ([`crate::architecture`]).
//!
//! [`encode_network`] writes one (`zertz.export` asks it), with the same checks, so that what
//! the engine writes it reads.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::Path;

use safetensors::Dtype;
use safetensors::tensor::{Metadata as Header, TensorInfo};
use sha2::{Digest, Sha256};
use zertz_env::files::MAX_NETWORK_BYTES;

use crate::architecture::{ARCHITECTURE, Sizes};
use crate::metadata::{BUILTIN, BUILTIN_BYTES, Metadata, check_metadata};
use crate::{MODEL_FORMAT_VERSION, ModelError};

/// The key of the metadata JSON in the header's `__metadata__`.
pub const METADATA_KEY: &str = "zertz";
/// The key of the weights' SHA-256 (hex) in the header's `__metadata__`.
pub const CHECKSUM_KEY: &str = "sha256";
/// The most bytes of a network file's header (a network of the largest sizes has about 1,300
/// tensors, which take under 200 KiB; provenance adds a few KiB).
pub const MAX_HEADER_BYTES: u64 = 1 << 20;

/// The first bytes of a zip archive: what TorchScript files and AOTInductor packages are.
const ZIP_MAGIC: &[u8; 4] = b"PK\x03\x04";

/// A network file, read and checked.
#[derive(Clone, Debug)]
pub struct NetworkFile {
    /// Its metadata (checked against this engine).
    pub metadata: Metadata,
    /// Its metadata as the file has it (JSON).
    pub json: String,
    /// The architecture's sizes it names.
    pub sizes: Sizes,
    /// The SHA-256 of its weights, in hex.
    pub sha256: String,
    /// Every tensor, in [`Sizes::tensors`]' order: name, shape, values.
    pub tensors: Vec<(String, Vec<usize>, Vec<f32>)>,
}

/// Whether `bytes` (a file's first bytes) begin a zip archive: a TorchScript file or an
/// AOTInductor package, which are programs.
pub fn is_code(bytes: &[u8]) -> bool {
    bytes.starts_with(ZIP_MAGIC)
}

/// The error for a program where a network file was expected: what it is, and the two ways
/// on (converting it, or trusting its code).
pub(crate) fn code_refused(path: &Path) -> ModelError {
    ModelError::Code { path: path.to_path_buf(), package: crate::is_package(path) }
}

/// Reads and checks the network file at `path` (see the module docs): bounded by
/// [`MAX_NETWORK_BYTES`] and [`MAX_HEADER_BYTES`], the header checked before the weights are
/// read.
pub fn read_network(path: &Path) -> Result<NetworkFile, ModelError> {
    let io = |source: std::io::Error| ModelError::Read { path: path.to_path_buf(), source };
    let mut file =
        zertz_env::files::open_bounded(path, MAX_NETWORK_BYTES, "a network file").map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut prefix = [0u8; 8];
    let got = read_up_to(&mut file, &mut prefix).map_err(io)?;
    let mut header = Vec::new();
    let n = header_length(path, &prefix[..got], len)?;
    (&mut file).take(n).read_to_end(&mut header).map_err(io)?;
    let checked = check_header(path, &header)?;
    let data_len = checked.data_len();
    check_length(path, len, n, data_len)?;
    let mut data = Vec::with_capacity(data_len);
    (&mut file).take(data_len as u64 + 1).read_to_end(&mut data).map_err(io)?;
    if data.len() != data_len {
        // Changed while it was read.
        return Err(not_a_network(path, format!("it changed while it was read ({len} bytes)")));
    }
    weights(path, checked, &data)
}

/// [`read_network`] on a file's bytes in memory (`path` names it in errors).
pub fn decode_network(path: &Path, bytes: &[u8]) -> Result<NetworkFile, ModelError> {
    if bytes.len() as u64 > MAX_NETWORK_BYTES {
        return Err(ModelError::Read {
            path: path.to_path_buf(),
            source: zertz_env::files::too_large(
                Some(bytes.len() as u64),
                MAX_NETWORK_BYTES,
                "a network file",
            ),
        });
    }
    let n = header_length(path, &bytes[..bytes.len().min(8)], bytes.len() as u64)?;
    let header = &bytes[8..8 + n as usize];
    let checked = check_header(path, header)?;
    check_length(path, bytes.len() as u64, n, checked.data_len())?;
    weights(path, checked, &bytes[8 + n as usize..])
}

/// Writes a network file of `metadata` (JSON, as [`Metadata`] reads it, without the checksum)
/// and `tensors` (name, shape, values), checked as [`decode_network`] checks one: the tensors
/// must be exactly those of the architecture at the sizes the metadata names, and finite.
pub fn encode_network(
    metadata: &str,
    tensors: &[(String, Vec<usize>, Vec<f32>)],
) -> Result<Vec<u8>, ModelError> {
    let path = Path::new("the network to write");
    let fail = |reason: String| not_a_network(path, reason);
    let parsed = check_metadata(path, metadata, MODEL_FORMAT_VERSION)?;
    let sizes = data_sizes(path, &parsed)?;
    let expected = sizes.tensors();
    let mut given: Vec<&(String, Vec<usize>, Vec<f32>)> = tensors.iter().collect();
    given.sort_by(|a, b| a.0.cmp(&b.0));
    for ((name, shape), t) in expected.iter().zip(&given) {
        if *name != t.0 {
            return Err(fail(format!("it has {:?} where the architecture has {name:?}", t.0)));
        }
        if *shape != t.1 || t.2.len() != shape.iter().product::<usize>() {
            return Err(fail(format!(
                "{name} is {:?} ({} values), the architecture's is {shape:?}",
                t.1,
                t.2.len()
            )));
        }
        if let Some(v) = t.2.iter().find(|v| !v.is_finite()) {
            return Err(fail(format!("{name} holds {v}")));
        }
    }
    if expected.len() != given.len() {
        return Err(fail(format!(
            "it has {} tensors, the architecture {} ({} blocks)",
            given.len(),
            expected.len(),
            sizes.blocks
        )));
    }
    let views: Vec<(String, View<'_>)> =
        given.iter().map(|t| (t.0.clone(), View { shape: &t.1, values: &t.2 })).collect();
    let serialize = |extra: Option<(&str, String)>| {
        let mut info = HashMap::from([(METADATA_KEY.to_string(), metadata.to_string())]);
        if let Some((k, v)) = extra {
            info.insert(k.to_string(), v);
        }
        safetensors::serialize(views.iter().map(|(n, v)| (n.as_str(), v)), Some(info))
            .map_err(|e| fail(e.to_string()))
    };
    // The checksum is of the tensors' bytes, which do not depend on the header: written once
    // without it to find them.
    let unsummed = serialize(None)?;
    let n = u64::from_le_bytes(unsummed[..8].try_into().unwrap_or_default()) as usize;
    let sha256 = hex(&Sha256::digest(&unsummed[8 + n..]));
    serialize(Some((CHECKSUM_KEY, sha256)))
}

/// A tensor to write, as `safetensors` takes it.
struct View<'a> {
    shape: &'a [usize],
    values: &'a [f32],
}

impl safetensors::View for &View<'_> {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }

    fn shape(&self) -> &[usize] {
        self.shape
    }

    fn data(&self) -> std::borrow::Cow<'_, [u8]> {
        self.values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>().into()
    }

    fn data_len(&self) -> usize {
        4 * self.values.len()
    }
}

fn not_a_network(path: &Path, reason: String) -> ModelError {
    ModelError::NotAModel { path: path.to_path_buf(), reason }
}

/// Reads into `buf` until it is full or the reader ends; how many bytes were read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..])? {
            0 => break,
            k => got += k,
        }
    }
    Ok(got)
}

/// The header length that a file of `len` bytes whose first bytes are `prefix` states, checked
/// against [`MAX_HEADER_BYTES`] and the file's length; a program is refused here.
fn header_length(path: &Path, prefix: &[u8], len: u64) -> Result<u64, ModelError> {
    if is_code(prefix) {
        return Err(code_refused(path));
    }
    let Ok(bytes) = <[u8; 8]>::try_from(prefix) else {
        return Err(not_a_network(path, format!("it is {len} bytes long, too short for a header")));
    };
    let n = u64::from_le_bytes(bytes);
    if n > MAX_HEADER_BYTES {
        return Err(not_a_network(
            path,
            format!("its header would be {n} bytes, more than the {MAX_HEADER_BYTES} it may have"),
        ));
    }
    if 8 + n > len {
        return Err(not_a_network(
            path,
            format!("its header would be {n} bytes, and the file is {len} bytes long"),
        ));
    }
    Ok(n)
}

/// The file's length against what its header describes.
fn check_length(path: &Path, len: u64, n: u64, data_len: usize) -> Result<(), ModelError> {
    let expected = 8 + n + data_len as u64;
    match len == expected {
        true => Ok(()),
        false => Err(not_a_network(
            path,
            format!(
                "its header describes {data_len} bytes of weights, and the file holds {} after it",
                len as i128 - 8 - n as i128
            ),
        )),
    }
}

/// The tensors a header names, in the architecture's order, with their places.
type Infos = Vec<(String, TensorInfo)>;

/// What a checked header says: the metadata (parsed and as JSON), the sizes, the tensors and
/// the checksum.
struct Checked {
    metadata: Metadata,
    json: String,
    sizes: Sizes,
    infos: Infos,
    sha256: String,
}

impl Checked {
    fn data_len(&self) -> usize {
        self.infos.iter().map(|(_, i)| i.data_offsets.1 - i.data_offsets.0).sum()
    }
}

/// The header checked: its metadata against this engine, its tensors against the
/// architecture at the sizes the metadata names, and the checksum it states.
fn check_header(path: &Path, header: &[u8]) -> Result<Checked, ModelError> {
    let fail = |reason: String| not_a_network(path, reason);
    let text = std::str::from_utf8(header).map_err(|_| fail("its header is not UTF-8".into()))?;
    // (The crate's own reading: tensor places that do not tile the data are refused there.)
    let parsed: Header =
        serde_json::from_str(text).map_err(|e| fail(format!("unreadable header ({e})")))?;
    let info = parsed.metadata().clone().unwrap_or_default();
    if let Some(key) = info.keys().find(|k| *k != METADATA_KEY && *k != CHECKSUM_KEY) {
        return Err(fail(format!("its header's metadata has an unknown key {key:?}")));
    }
    let Some(json) = info.get(METADATA_KEY) else {
        return Err(fail(format!("its header has no {METADATA_KEY:?} metadata")));
    };
    let Some(sha256) = info.get(CHECKSUM_KEY) else {
        return Err(fail(format!("its header has no {CHECKSUM_KEY:?} checksum")));
    };
    let metadata = check_metadata(path, json, MODEL_FORMAT_VERSION)?;
    let sizes = data_sizes(path, &metadata)?;
    let tensors = parsed.tensors();
    let expected = sizes.tensors();
    let mut infos = Vec::with_capacity(expected.len());
    for (name, shape) in &expected {
        let Some(info) = tensors.get(name) else {
            return Err(fail(format!("it lacks {name}, which its architecture has")));
        };
        if info.dtype != Dtype::F32 {
            return Err(fail(format!("{name} is {:?}, not F32", info.dtype)));
        }
        if info.shape != *shape {
            return Err(fail(format!(
                "{name} is {:?}, its architecture's is {shape:?}",
                info.shape
            )));
        }
        infos.push((name.clone(), (*info).clone()));
    }
    if tensors.len() != expected.len() {
        let known: std::collections::BTreeSet<&str> =
            expected.iter().map(|(n, _)| n.as_str()).collect();
        let mut extra: Vec<&String> =
            tensors.keys().filter(|n| !known.contains(n.as_str())).collect();
        extra.sort();
        return Err(fail(format!(
            "it holds {}, which its architecture does not have",
            extra.first().map_or("more tensors", |n| n.as_str())
        )));
    }
    Ok(Checked { metadata, json: json.clone(), sizes, infos, sha256: sha256.clone() })
}

/// The sizes of the architecture a network file's metadata names, checked.
fn data_sizes(path: &Path, metadata: &Metadata) -> Result<Sizes, ModelError> {
    let fail = |reason: String| not_a_network(path, reason);
    match metadata.architecture.as_deref() {
        Some(ARCHITECTURE) => {}
        Some(other) => {
            return Err(fail(format!(
                "its architecture is {other:?}; this engine runs {ARCHITECTURE:?}"
            )));
        }
        None => return Err(fail("its metadata names no architecture".into())),
    }
    let sizes: Sizes = serde_json::from_value(metadata.network.clone())
        .map_err(|e| fail(format!("its network sizes are unreadable ({e})")))?;
    sizes.check().map_err(fail)?;
    Ok(sizes)
}

/// The tensors of `data` (the bytes after the header), once their checksum is `sha256` and
/// every weight is finite.
fn weights(path: &Path, checked: Checked, data: &[u8]) -> Result<NetworkFile, ModelError> {
    let Checked { mut metadata, json, sizes, infos, sha256 } = checked;
    let fail = |reason: String| not_a_network(path, reason);
    let actual = hex(&Sha256::digest(data));
    if actual != sha256.to_ascii_lowercase() {
        return Err(fail(format!(
            "its weights' SHA-256 is {actual}, its header says {sha256}: the file is corrupt"
        )));
    }
    let mut tensors = Vec::with_capacity(infos.len());
    for (name, info) in infos {
        let (start, end) = info.data_offsets;
        let values: Vec<f32> = data[start..end]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(fail(format!("{name} holds {v}")));
        }
        tensors.push((name, info.shape, values));
    }
    metadata.sha256 = Some(sha256.to_ascii_lowercase());
    Ok(NetworkFile { metadata, json, sizes, sha256: actual, tensors })
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The tensors of a network file by name (the native pass and the libtorch pass take theirs).
pub(crate) fn by_name(file: &NetworkFile) -> BTreeMap<&str, (&[usize], &[f32])> {
    file.tensors.iter().map(|(n, s, v)| (n.as_str(), (s.as_slice(), v.as_slice()))).collect()
}

/// The metadata of the built-in network (read once; `None` if this engine could not read it,
/// which its tests rule out).
pub fn builtin_metadata() -> Option<&'static Metadata> {
    static META: std::sync::OnceLock<Option<Metadata>> = std::sync::OnceLock::new();
    META.get_or_init(|| Some(decode_network(Path::new(BUILTIN), BUILTIN_BYTES).ok()?.metadata))
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MODEL_FORMAT;

    type Tensors = Vec<(String, Vec<usize>, Vec<f32>)>;

    /// A network file's metadata and tensors at `sizes` (weights `0.001 · i`).
    fn network(sizes: Sizes) -> (String, Tensors) {
        let meta = serde_json::json!({
            "format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION,
            "architecture": ARCHITECTURE, "name": "t", "encoding_version":
            zertz_env::encode::ENCODING_VERSION, "boards": [37], "marbles": ["standard"],
            "action_space": {"37": 4441}, "network": sizes,
        });
        let tensors = sizes.tensors().into_iter().map(|(name, shape)| {
            let n = shape.iter().product::<usize>();
            (name, shape, (0..n).map(|i| 0.001 * i as f32).collect())
        });
        (meta.to_string(), tensors.collect())
    }

    const SMALL: Sizes =
        Sizes { channels: 2, blocks: 1, policy_rank: 1, value_channels: 1, value_hidden: 3 };

    #[test]
    fn a_network_file_is_written_and_read_back_exactly() {
        let (meta, tensors) = network(SMALL);
        let bytes = encode_network(&meta, &tensors).unwrap();
        let file = decode_network(Path::new("n"), &bytes).unwrap();
        assert_eq!(file.tensors, tensors);
        assert_eq!(file.json, meta);
        assert_eq!(file.sizes, SMALL);
        assert_eq!(file.metadata.sha256.as_deref(), Some(file.sha256.as_str()));
        // The reference reader agrees.
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        assert_eq!(st.len(), tensors.len());
        // The built-in network is one.
        let builtin = decode_network(Path::new("builtin"), crate::builtin_bytes()).unwrap();
        assert_eq!(builtin.sizes.preset(), Some("tiny"));
    }

    #[test]
    fn what_is_not_exactly_a_network_file_is_refused_in_a_line() {
        let (meta, tensors) = network(SMALL);
        let bytes = encode_network(&meta, &tensors).unwrap();
        let refused = |b: &[u8]| decode_network(Path::new("x.safetensors"), b).unwrap_err();
        // A byte of the weights changed.
        let mut corrupt = bytes.clone();
        let last = corrupt.len() - 5;
        corrupt[last] ^= 0x40;
        let e = refused(&corrupt).to_string();
        assert!(
            e.contains("x.safetensors") && e.contains("SHA-256") && e.contains("corrupt"),
            "{e}"
        );
        // Cut short, or longer than the header says.
        let e = refused(&bytes[..bytes.len() - 4]).to_string();
        assert!(e.contains("header describes"), "{e}");
        let e = refused(&[bytes.as_slice(), &[0; 4]].concat()).to_string();
        assert!(e.contains("header describes"), "{e}");
        // A header longer than the bound, or than the file.
        let mut long = bytes.clone();
        long[..8].copy_from_slice(&(MAX_HEADER_BYTES + 1).to_le_bytes());
        assert!(refused(&long).to_string().contains("more than the 1048576"));
        long[..8].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        assert!(refused(&long).to_string().contains("the file is"));
        // A program.
        let e = refused(b"PK\x03\x04rest of a zip");
        assert!(matches!(e, ModelError::Code { package: false, .. }), "{e}");
        assert!(
            e.to_string().contains("convert-network") && e.to_string().contains("--trust-code")
        );
        // Tensors that do not fit the architecture, and weights that are not finite.
        let mut wrong = tensors.clone();
        wrong[0].1 = vec![1];
        let e = encode_network(&meta, &wrong).unwrap_err().to_string();
        assert!(e.contains("the architecture's is"), "{e}");
        let mut nan = tensors.clone();
        nan[3].2[0] = f32::NAN;
        assert!(encode_network(&meta, &nan).unwrap_err().to_string().contains("holds NaN"));
        let e = encode_network(&meta, &tensors[1..]).unwrap_err().to_string();
        assert!(e.contains("where the architecture has"), "{e}");
        let big = Sizes { channels: 5000, ..SMALL };
        let e = encode_network(&network(big).0, &tensors).unwrap_err().to_string();
        assert!(e.contains("network.channels must be from 1 to 1024, not 5000"), "{e}");
    }
}
