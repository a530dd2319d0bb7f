//! Sets the run path of this crate's tests and examples to torch's lib folder, and hands that folder
//! on to dependents (`DEP_ZERTZ_MODEL_LIBTORCH_LIB`), so that programs linked to libtorch find it
//! without LD_LIBRARY_PATH. The tests keep libtorch_cuda linked when torch has it (the linker
//! would drop it, as no symbol of it is named), so that they see CUDA devices; `cli/build.rs` does
//! the same for the program (link arguments do not pass to dependents).
//!
//! Also compiles the crate's C++ shim (`shim/shim.cpp`: what tch does not wrap: AOTInductor
//! packages, CUDA graphs and streams) against the same libtorch's headers. Its CUDA part is built
//! when torch has CUDA and the CUDA runtime's headers are found (the `nvidia` wheels beside
//! torch, or the copy triton ships; `$CUDA_HOME`, `/usr/local/cuda`); then the crate links libtorch_cuda and libc10_cuda.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    println!("cargo:rerun-if-env-changed=CUDA_HOME");
    let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") else {
        panic!("torch-sys did not say where libtorch is (DEP_TCH_LIBTORCH_LIB)");
    };
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    if Path::new(&lib).join("libtorch_cuda.so").exists() {
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
    println!("cargo:libtorch_lib={lib}");

    // libtorch's headers sit beside its lib folder (torch/lib, torch/include).
    let torch = Path::new(&lib).parent().unwrap_or(Path::new("/"));
    let include = torch.join("include");
    let mut build = cc::Build::new();
    if let Some(cuda) =
        cuda_headers(torch).filter(|_| Path::new(&lib).join("libtorch_cuda.so").exists())
    {
        build.include(cuda).define("ZERTZ_CUDA", None);
        println!("cargo:rustc-link-lib=dylib=torch_cuda");
        println!("cargo:rustc-link-lib=dylib=c10_cuda");
    }
    build
        .cpp(true)
        .pic(true)
        .std("c++17")
        .include(&include)
        .include(include.join("torch/csrc/api/include"))
        // The C++ ABI torch's wheels are built with (std::__cxx11 strings in its symbols).
        .define("_GLIBCXX_USE_CXX11_ABI", "1")
        .define("GLOG_USE_GLOG_EXPORT", None)
        .flag_if_supported("-Wno-unused-parameter")
        .file("shim/shim.cpp")
        .compile("zertz_model_shim");
}

/// The folder of the CUDA runtime's headers (`cuda_runtime_api.h`), if any.
fn cuda_headers(torch: &Path) -> Option<std::path::PathBuf> {
    let site = torch.parent()?;
    let mut candidates = vec![
        site.join("nvidia/cu13/include"),
        site.join("nvidia/cuda_runtime/include"),
        site.join("triton/backends/nvidia/include"),
    ];
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(Path::new(&home).join("include"));
    }
    candidates.push("/usr/local/cuda/include".into());
    // (The runtime wheel alone lacks crt/, which cuda_runtime.h includes.)
    candidates
        .into_iter()
        .find(|d| d.join("cuda_runtime_api.h").exists() && d.join("crt/host_config.h").exists())
}
