//! Sets the run path of this crate's tests and examples to torch's lib folder, and hands that folder
//! on to dependents (`DEP_ZERTZ_MODEL_LIBTORCH_LIB`), so that programs linked to libtorch find it
//! without LD_LIBRARY_PATH.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
        println!("cargo:libtorch_lib={lib}");
    }
}
