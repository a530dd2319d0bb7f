//! The native module links libtorch (through the model crate). `zertz/__init__.py` imports torch
//! first, so that the libtorch of the installed torch is the one in the process; run paths to
//! torch's lib folder let the module load on its own as well: beside an installed package
//! (`$ORIGIN/../torch/lib`, site-packages) and where the module was built (the folder handed on
//! by the model crate). libtorch_cuda stays a dependency when torch has it (the linker would drop
//! it, as no symbol of it is named), so that CUDA devices are usable.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ZERTZ_MODEL_LIBTORCH_LIB");
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../torch/lib");
    if let Ok(lib) = std::env::var("DEP_ZERTZ_MODEL_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
        if std::path::Path::new(&lib).join("libtorch_cuda.so").exists() {
            println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
        }
    }
}
