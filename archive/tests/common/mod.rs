//! Archives of every kind, written by the tests (`archive.rs`, `fuzz.rs`).

use std::io::Write;

/// The files of every archive: two records in a folder, one at the top, and a README.
pub fn files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("games/b.sgf", b"(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1])".to_vec()),
        ("games/a.SGF", b"(;GM[22]SU[Zertz+11])".to_vec()),
        ("README.md", b"not a record".to_vec()),
        ("c.sgf", b"(;GM[22]SU[Zertz+24])".to_vec()),
    ]
}

/// [`files`] as a tar archive.
pub fn tar_bytes() -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in files() {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, bytes.as_slice()).unwrap();
    }
    builder.into_inner().unwrap()
}

/// [`files`] as each kind of archive: `(file name, bytes)` for `.tar.xz`, `.tar.gz`, `.tar` and
/// `.zip`.
pub fn archives() -> Vec<(&'static str, Vec<u8>)> {
    let tar = tar_bytes();
    let xz = {
        let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
        e.write_all(&tar).unwrap();
        e.finish().unwrap()
    };
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&tar).unwrap();
        e.finish().unwrap()
    };
    let zip = {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in files() {
            w.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            w.write_all(&bytes).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    vec![("r.tar.xz", xz), ("r.tar.gz", gz), ("r.tar", tar), ("r.zip", zip)]
}
