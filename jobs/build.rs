//! The tests of this crate run networks: a run path to torch's lib folder (handed on by the model
//! crate), as the model crate's own tests have.

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_ZERTZ_MODEL_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_ZERTZ_MODEL_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
}
