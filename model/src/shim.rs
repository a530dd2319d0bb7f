//! The declarations of the crate's C++ shim (`shim/shim.cpp`), and the handling of the strings
//! it hands back. Every function of the shim catches C++ exceptions: a failure is a return value
//! and a message in `err`, never an unwinding through Rust.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int};

use torch_sys::C_tensor;

/// A package's model (`zertz_aoti`).
#[repr(C)]
pub(crate) struct Handle {
    _private: [u8; 0],
}

unsafe extern "C" {
    pub(crate) fn zertz_copy_async(
        dst: *mut C_tensor,
        src: *const C_tensor,
        err: *mut *mut c_char,
    ) -> c_int;
    pub(crate) fn zertz_pin_memory(
        src: *const C_tensor,
        out: *mut *mut C_tensor,
        err: *mut *mut c_char,
    ) -> c_int;
    pub(crate) fn zertz_stream_new(device_index: c_int, err: *mut *mut c_char) -> *mut Stream;
    pub(crate) fn zertz_stream_free(stream: *mut Stream);
    pub(crate) fn zertz_stream_enter(stream: *mut Stream, err: *mut *mut c_char) -> c_int;
    pub(crate) fn zertz_stream_exit(stream: *mut Stream);
    pub(crate) fn zertz_stream_synchronize(stream: *mut Stream, err: *mut *mut c_char) -> c_int;
    pub(crate) fn zertz_current_stream_synchronize(
        device_index: c_int,
        err: *mut *mut c_char,
    ) -> c_int;
    pub(crate) fn zertz_graph_new(err: *mut *mut c_char) -> *mut Graph;
    pub(crate) fn zertz_graph_free(graph: *mut Graph);
    pub(crate) fn zertz_graph_begin(
        graph: *mut Graph,
        stream: *mut Stream,
        err: *mut *mut c_char,
    ) -> c_int;
    pub(crate) fn zertz_graph_end(graph: *mut Graph, err: *mut *mut c_char) -> c_int;
    pub(crate) fn zertz_graph_replay(graph: *mut Graph, err: *mut *mut c_char) -> c_int;
    pub(crate) fn zertz_string_free(s: *mut c_char);
    pub(crate) fn zertz_module_methods(
        data: *const c_char,
        len: usize,
        names: *mut *mut c_char,
        err: *mut *mut c_char,
    ) -> c_int;
    pub(crate) fn zertz_aoti_load(
        path: *const c_char,
        name: *const c_char,
        runners: c_int,
        device_index: c_int,
        err: *mut *mut c_char,
    ) -> *mut Handle;
    pub(crate) fn zertz_aoti_free(model: *mut Handle);
    pub(crate) fn zertz_aoti_metadata(
        model: *mut Handle,
        key: *const c_char,
        err: *mut *mut c_char,
    ) -> *mut c_char;
    pub(crate) fn zertz_aoti_run(
        model: *mut Handle,
        planes: *const C_tensor,
        globals: *const C_tensor,
        logits: *mut *mut C_tensor,
        values: *mut *mut C_tensor,
        err: *mut *mut c_char,
    ) -> c_int;
}

/// A CUDA stream (`zertz_stream`).
#[repr(C)]
pub(crate) struct Stream {
    _private: [u8; 0],
}

/// A captured CUDA graph (`zertz_graph`).
#[repr(C)]
pub(crate) struct Graph {
    _private: [u8; 0],
}

/// Takes a string the shim allocated.
pub(crate) fn take(s: *mut c_char) -> Option<String> {
    if s.is_null() {
        return None;
    }
    // SAFETY: the shim hands out NUL-terminated strings of its own (malloc), each taken once.
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    // SAFETY: as above; freed by the allocator that made it.
    unsafe { zertz_string_free(s) };
    Some(text)
}

/// The first line of a libtorch message (they carry long backtraces).
pub(crate) fn first(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
}

/// `Err` with the shim's message when `status` is not 0.
pub(crate) fn check(status: c_int, err: *mut c_char) -> Result<(), String> {
    if status == 0 { Ok(()) } else { Err(first(&take(err).unwrap_or_default()).to_string()) }
}

/// The names of the methods of the TorchScript module serialized in `data` (loaded on the CPU):
/// tch has no way to ask whether a method is there but to call it.
pub(crate) fn module_methods(data: &[u8]) -> Result<Vec<String>, String> {
    let mut names = std::ptr::null_mut();
    let mut err = std::ptr::null_mut();
    // SAFETY: `data` is valid for `len` bytes; the out-pointers are valid for writes.
    let status =
        unsafe { zertz_module_methods(data.as_ptr().cast(), data.len(), &mut names, &mut err) };
    check(status, err)?;
    Ok(take(names).unwrap_or_default().lines().map(str::to_string).collect())
}
