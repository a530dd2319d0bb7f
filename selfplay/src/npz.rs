//! A minimal writer of numpy `.npz` files (a zip archive of `.npy` arrays, stored uncompressed),
//! so that Python reads self-play data with `numpy.load` alone.
//!
//! Files are written to a temporary name in the same folder and renamed when complete, so an
//! interrupted run never leaves a half-written file under the final name.

use std::io::{self, Write};
use std::path::Path;

/// The element types the writer knows, with their numpy dtype strings.
pub trait NpyElement: Copy {
    /// numpy's dtype descriptor, such as `<f4`.
    const DESCR: &'static str;
    /// Appends the little-endian bytes of `values`.
    fn put(values: &[Self], out: &mut Vec<u8>);
}

macro_rules! npy_element {
    ($t:ty, $descr:expr) => {
        impl NpyElement for $t {
            const DESCR: &'static str = $descr;
            fn put(values: &[Self], out: &mut Vec<u8>) {
                for v in values {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
    };
}

npy_element!(f32, "<f4");
npy_element!(i32, "<i4");
npy_element!(i64, "<i8");
npy_element!(u8, "|u1");

impl NpyElement for bool {
    const DESCR: &'static str = "|b1";
    fn put(values: &[Self], out: &mut Vec<u8>) {
        out.extend(values.iter().map(|&b| b as u8));
    }
}

/// Encodes one array as a `.npy` file (format version 1.0).
pub fn npy<T: NpyElement>(shape: &[usize], values: &[T]) -> Vec<u8> {
    assert_eq!(shape.iter().product::<usize>(), values.len(), "shape must match the values");
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header =
        format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape_text}, }}", T::DESCR);
    // Magic (6) + version (2) + header length (2) + header + newline, padded to 64 bytes.
    let total = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + values.len() * 8);
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    T::put(values, &mut out);
    out
}

fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, entry) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
            *entry = c;
        }
        t
    });
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// An `.npz` archive being assembled in memory.
#[derive(Debug, Default)]
pub struct Npz {
    files: Vec<(String, Vec<u8>)>,
    /// `(name, dtype descriptor)` of every array, in order.
    arrays: Vec<(String, &'static str)>,
}

impl Npz {
    /// An empty archive.
    pub fn new() -> Npz {
        Npz::default()
    }

    /// Adds array `name` (read back as `data[name]`).
    pub fn add<T: NpyElement>(&mut self, name: &str, shape: &[usize], values: &[T]) {
        self.files.push((format!("{name}.npy"), npy(shape, values)));
        self.arrays.push((name.to_string(), T::DESCR));
    }

    /// `(name, dtype descriptor)` of every array added, in order.
    pub fn arrays(&self) -> &[(String, &'static str)] {
        &self.arrays
    }

    /// The archive's bytes (zip, stored). Archives over 4 GiB are not supported.
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut central = Vec::new();
        let too_big = || io::Error::new(io::ErrorKind::InvalidInput, "npz larger than 4 GiB");
        for (name, data) in &self.files {
            let offset = u32::try_from(out.len()).map_err(|_| too_big())?;
            let size = u32::try_from(data.len()).map_err(|_| too_big())?;
            let crc = crc32(data);
            let common = |buf: &mut Vec<u8>| {
                buf.extend_from_slice(&20u16.to_le_bytes()); // version needed
                buf.extend_from_slice(&0u16.to_le_bytes()); // flags
                buf.extend_from_slice(&0u16.to_le_bytes()); // stored
                buf.extend_from_slice(&0u16.to_le_bytes()); // time
                buf.extend_from_slice(&0x21u16.to_le_bytes()); // date: 1980-01-01
                buf.extend_from_slice(&crc.to_le_bytes());
                buf.extend_from_slice(&size.to_le_bytes());
                buf.extend_from_slice(&size.to_le_bytes());
                buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
                buf.extend_from_slice(&0u16.to_le_bytes()); // extra length
            };
            out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
            common(&mut out);
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(data);
            central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            central.extend_from_slice(&20u16.to_le_bytes()); // version made by
            common(&mut central);
            central.extend_from_slice(&0u16.to_le_bytes()); // comment length
            central.extend_from_slice(&0u16.to_le_bytes()); // disk
            central.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
            central.extend_from_slice(&0u32.to_le_bytes()); // external attributes
            central.extend_from_slice(&offset.to_le_bytes());
            central.extend_from_slice(name.as_bytes());
        }
        let central_offset = u32::try_from(out.len()).map_err(|_| too_big())?;
        let central_size = central.len() as u32;
        out.extend_from_slice(&central);
        out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u16).to_le_bytes());
        out.extend_from_slice(&(self.files.len() as u16).to_le_bytes());
        out.extend_from_slice(&central_size.to_le_bytes());
        out.extend_from_slice(&central_offset.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        Ok(out)
    }

    /// Writes the archive to `path` atomically: a temporary file in the same folder, synced, then
    /// renamed over `path`.
    pub fn write_atomic(&self, path: &Path) -> io::Result<()> {
        write_atomic(path, &self.to_bytes()?)
    }
}

/// Writes `bytes` to `path` through a temporary file (`.NAME.partial-PID`:
/// [`zertz_env::files::partial_path`]) and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = zertz_env::files::partial_path(path);
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_goes_through_a_partial_file_beside_the_target() {
        let dir = std::env::temp_dir().join(format!("zertz-npz-partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("shard.npz");
        write_atomic(&target, b"first").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"first");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "nothing but the target");
        // A rename that fails (the target is a folder) leaves the partial file, under its name.
        let folder = dir.join("taken.npz");
        std::fs::create_dir(&folder).unwrap();
        assert!(write_atomic(&folder, b"second").is_err());
        let left = zertz_env::files::partial_path(&folder);
        assert_eq!(std::fs::read(&left).unwrap(), b"second");
        let name = left.file_name().unwrap().to_str().unwrap();
        assert_eq!(zertz_env::files::partial_owner(name), Some(("taken.npz", std::process::id())));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn crc_of_known_text() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn npy_header_is_aligned() {
        let bytes = npy(&[2, 3], &[1.0f32; 6]);
        assert_eq!(&bytes[..6], b"\x93NUMPY");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes.len(), 10 + header_len + 24);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    }
}
