//! AOTInductor packages (`.pt2` files written by `zertz.exported.export_aoti`): the network compiled
//! ahead of time into native code, one model per board, run through libtorch's
//! `AOTIModelPackageLoader` by the crate's C++ shim (`shim/shim.cpp`).
//!
//! A package is compiled for one device type and one number format; [`AotiPackage::open`] loads
//! the model of each board it holds and reads the metadata the exporter wrote (the same JSON as
//! a TorchScript file's, with `backend`, `device` and `precision` added).

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{CString, c_int};
use std::path::Path;
use std::ptr;

use tch::Tensor;
use zertz_env::Board;

use crate::shim::{
    Handle, check, first, take, zertz_aoti_free, zertz_aoti_load, zertz_aoti_metadata,
    zertz_aoti_run,
};

/// The name of a board's model inside a package: this prefix and the ring count (`board37`).
pub const AOTI_MODEL_PREFIX: &str = "board";

/// The folder of the packages compiled on this machine from network files
/// (`python -m zertz compile-network`): `$ZERTZ_CACHE/compiled`, else
/// `$XDG_CACHE_HOME/zertz/compiled`, else `~/.cache/zertz/compiled`; `None` without a home.
pub fn compiled_dir() -> Option<std::path::PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let root = match (var("ZERTZ_CACHE"), var("XDG_CACHE_HOME"), var("HOME")) {
        (Some(cache), _, _) => cache.into(),
        (None, Some(xdg), _) => std::path::PathBuf::from(xdg).join("zertz"),
        (None, None, Some(home)) => std::path::PathBuf::from(home).join(".cache/zertz"),
        (None, None, None) => return None,
    };
    Some(root.join("compiled"))
}

/// The file name, in [`compiled_dir`], of the package compiled from the network file whose
/// weights' SHA-256 is `sha256`, for `device` (`cpu` or `cuda`) in `precision` (`fp32`, `bf16`,
/// `fp16`): the checksum is the key, so that a package is found only for the weights it was
/// compiled from.
pub fn compiled_name(sha256: &str, device: &str, precision: &str) -> String {
    format!("{sha256}-{device}-{precision}.pt2")
}

/// One board's compiled model.
struct BoardModel {
    handle: *mut Handle,
}

// SAFETY: the loader behind a handle serves concurrent `run` calls (each takes one of its
// runners, waiting when all are busy); the handle is freed once, on drop.
unsafe impl Send for BoardModel {}
// SAFETY: as above.
unsafe impl Sync for BoardModel {}

impl Drop for BoardModel {
    fn drop(&mut self) {
        // SAFETY: a handle from zertz_aoti_load, freed once.
        unsafe { zertz_aoti_free(self.handle) }
    }
}

/// The models of a package, by board, and its metadata.
pub(crate) struct AotiPackage {
    models: BTreeMap<usize, BoardModel>,
    /// The exporter's metadata (the JSON of the `zertz` key).
    pub metadata: String,
    /// The device type it was compiled for (`AOTI_DEVICE_KEY`: `cpu` or `cuda`).
    pub device: String,
}

impl std::fmt::Debug for AotiPackage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AotiPackage")
            .field("boards", &self.models.keys().collect::<Vec<_>>())
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

/// The boards whose models a package holds (from the names of its entries:
/// `*/data/aotinductor/board37/...`).
fn boards_of(path: &Path) -> Result<Vec<usize>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let zip = zip::ZipArchive::new(file).map_err(|e| format!("not a .pt2 package ({e})"))?;
    let marker = format!("/data/aotinductor/{AOTI_MODEL_PREFIX}");
    let mut boards: Vec<usize> = zip
        .file_names()
        .filter_map(|name| {
            let rest = name.split_once(marker.as_str())?.1;
            rest.split('/').next()?.parse().ok()
        })
        .filter(|&b| Board::from_rings(b).is_some())
        .collect();
    boards.sort_unstable();
    boards.dedup();
    if boards.is_empty() {
        return Err("it holds no zertz models (board37, board48, ...)".into());
    }
    Ok(boards)
}

impl AotiPackage {
    /// Loads the model of every board of the package at `path`, with `runners` instances each
    /// for concurrent calls, on CUDA device `device_index` (for a CUDA package; `-1` for a CPU
    /// one). The error says what is wrong.
    pub fn open(path: &Path, runners: usize, device_index: i32) -> Result<AotiPackage, String> {
        let boards = boards_of(path)?;
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| "its path holds a NUL byte".to_string())?;
        let mut models = BTreeMap::new();
        for b in boards {
            let name = CString::new(format!("{AOTI_MODEL_PREFIX}{b}")).expect("no NUL");
            let mut err = ptr::null_mut();
            // SAFETY: valid C strings; the shim catches every exception.
            let handle = unsafe {
                zertz_aoti_load(
                    c_path.as_ptr(),
                    name.as_ptr(),
                    runners.clamp(1, 256) as c_int,
                    device_index,
                    &mut err,
                )
            };
            if handle.is_null() {
                let why = take(err).unwrap_or_default();
                return Err(format!("its model for {b} rings does not load ({})", first(&why)));
            }
            models.insert(b, BoardModel { handle });
        }
        let any = models.values().next().expect("at least one board");
        let get = |key: &str| -> Result<Option<String>, String> {
            let key = CString::new(key).expect("no NUL");
            let mut err = ptr::null_mut();
            // SAFETY: a live handle and a valid C string.
            let value = take(unsafe { zertz_aoti_metadata(any.handle, key.as_ptr(), &mut err) });
            match take(err) {
                Some(e) => Err(first(&e).to_string()),
                None => Ok(value),
            }
        };
        let metadata = get("zertz")?.ok_or("it has no zertz metadata")?;
        let device = get("AOTI_DEVICE_KEY")?.unwrap_or_else(|| "cpu".into());
        Ok(AotiPackage { models, metadata, device })
    }

    /// Runs the model of `rings` on `planes` and `globals` (on the package's device, in its
    /// number format): `(logits, values)`.
    pub fn run(
        &self,
        rings: usize,
        planes: &Tensor,
        globals: &Tensor,
    ) -> Result<(Tensor, Tensor), String> {
        let model = self
            .models
            .get(&rings)
            .ok_or_else(|| format!("the package has no model for {rings} rings"))?;
        let (mut logits, mut values, mut err) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        // SAFETY: a live handle and two live tensors; on success the shim hands over two new
        // tensors, owned from here on by tch.
        let status = unsafe {
            zertz_aoti_run(
                model.handle,
                planes.as_ptr(),
                globals.as_ptr(),
                &mut logits,
                &mut values,
                &mut err,
            )
        };
        check(status, err)?;
        // SAFETY: tensors the shim allocated for us, each taken once.
        Ok(unsafe { (Tensor::from_ptr(logits), Tensor::from_ptr(values)) })
    }
}
