//! Sets the run path of this crate's tests and examples to torch's lib folder, and hands that folder
//! on to dependents (`DEP_ZERTZ_MODEL_LIBTORCH_LIB`), so that programs linked to libtorch find it
//! without LD_LIBRARY_PATH. The tests keep libtorch_cuda linked when torch has it (the linker
//! would drop it, as no symbol of it is named), so that they see CUDA devices; `cli/build.rs` does
//! the same for the program (link arguments do not pass to dependents).
//!
//! Also compiles the crate's C++ shim (`shim/`: what tch does not wrap, such as AOTInductor
//! packages) against the same libtorch's headers.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-changed=shim/aoti.cpp");
    let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") else {
        panic!("torch-sys did not say where libtorch is (DEP_TCH_LIBTORCH_LIB)");
    };
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    if Path::new(&lib).join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
    println!("cargo:libtorch_lib={lib}");

    // libtorch's headers sit beside its lib folder (torch/lib, torch/include).
    let include = Path::new(&lib).parent().map(|t| t.join("include")).unwrap_or_default();
    cc::Build::new()
        .cpp(true)
        .pic(true)
        .std("c++17")
        .include(&include)
        .include(include.join("torch/csrc/api/include"))
        // The C++ ABI torch's wheels are built with (std::__cxx11 strings in its symbols).
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .define("GLOG_USE_GLOG_EXPORT", None)
        .flag_if_supported("-Wno-unused-parameter")
        .file("shim/aoti.cpp")
        .compile("zertz_model_shim");
}
