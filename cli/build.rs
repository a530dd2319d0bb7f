//! Links the zertz program so that it finds libtorch on its own: a run path to torch's lib folder
//! (handed on by the model crate), and libtorch_cuda kept as a dependency when torch has it, so
//! that CUDA devices are usable (the linker would drop it otherwise, as no symbol of it is named).

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ZERTZ_MODEL_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_ZERTZ_MODEL_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
        if std::path::Path::new(&lib).join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
        }
    }
}
