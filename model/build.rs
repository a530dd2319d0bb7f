//! Sets the run path of this crate's tests and examples to torch's lib folder, and hands that folder
//! on to dependents (`DEP_ZERTZ_MODEL_LIBTORCH_LIB`), so that programs linked to libtorch find it
//! without LD_LIBRARY_PATH. The tests keep libtorch_cuda linked when torch has it (the linker
//! would drop it, as no symbol of it is named), so that they see CUDA devices; `cli/build.rs` does
//! the same for the program (link arguments do not pass to dependents).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
        if std::path::Path::new(&lib).join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
        }
        println!("cargo:libtorch_lib={lib}");
    }
}
