// The model crate's C++ shim: what tch does not wrap, against the same libtorch.
//
// AOTInductor packages (`zertz.nn.export_aoti`): libtorch's AOTIModelPackageLoader, one model of
// a package per handle. Every function catches C++ exceptions and hands their message back in
// `*err` (a string to free with zertz_string_free), so that nothing throws into Rust.
//
// Tensors cross as `at::Tensor*`, the pointers tch's `Tensor::as_ptr` and `Tensor::from_ptr`
// use.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace {

char* copy_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out != nullptr) {
    std::memcpy(out, s.c_str(), s.size() + 1);
  }
  return out;
}

void fail(char** err, const char* what) {
  if (err != nullptr) {
    *err = copy_string(what);
  }
}

// A package's compiled code names libtorch.so, which a program linked only to the libraries it
// uses (libtorch_cpu, libc10) has not loaded: load it from beside libtorch_cpu, once, before the
// first package, so that the package's dependency resolves to the libtorch already in use.
void load_libtorch() {
  static const bool loaded = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&at::init_num_threads), &info) == 0 ||
        info.dli_fname == nullptr) {
      return false;
    }
    std::string lib(info.dli_fname);
    auto slash = lib.rfind('/');
    if (slash == std::string::npos) {
      return false;
    }
    lib = lib.substr(0, slash + 1) + "libtorch.so";
    return dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr;
  }();
  (void)loaded;
}

}  // namespace

struct zertz_aoti {
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  bool cpu;
};

extern "C" {

void zertz_string_free(char* s) { std::free(s); }

// The model `name` of the package at `path`, with `runners` instances for concurrent calls,
// on CUDA device `device_index` (-1: the package's device type, device 0).
zertz_aoti* zertz_aoti_load(const char* path, const char* name, int runners, int device_index,
                            char** err) {
  try {
    load_libtorch();
    auto loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        path, name, false, static_cast<size_t>(runners < 1 ? 1 : runners),
        static_cast<c10::DeviceIndex>(device_index));
    auto meta = loader->get_metadata();
    auto key = meta.find("AOTI_DEVICE_KEY");
    bool cpu = key == meta.end() || key->second == "cpu";
    return new zertz_aoti{std::move(loader), cpu};
  } catch (const std::exception& e) {
    fail(err, e.what());
  } catch (...) {
    fail(err, "unknown C++ exception");
  }
  return nullptr;
}

void zertz_aoti_free(zertz_aoti* model) { delete model; }

// The value of `key` in the model's metadata, or null (and `*err` unset) when it has none.
char* zertz_aoti_metadata(zertz_aoti* model, const char* key, char** err) {
  try {
    auto meta = model->loader->get_metadata();
    auto found = meta.find(key);
    if (found != meta.end()) {
      return copy_string(found->second);
    }
  } catch (const std::exception& e) {
    fail(err, e.what());
  } catch (...) {
    fail(err, "unknown C++ exception");
  }
  return nullptr;
}

// Runs the model on `planes` and `globals`; its first two outputs come back as new tensors in
// `*logits` and `*values` (for tch's Tensor::from_ptr). Returns 0, or -1 with `*err` set.
int zertz_aoti_run(zertz_aoti* model, const at::Tensor* planes, const at::Tensor* globals,
                   at::Tensor** logits, at::Tensor** values, char** err) {
  try {
    if (model->cpu) {
      // The compiled kernels use OpenMP with the calling thread's setting: make it libtorch's
      // (one thread for each search thread that runs its own network).
      at::init_num_threads();
    }
    std::vector<at::Tensor> inputs{*planes, *globals};
    std::vector<at::Tensor> outputs = model->loader->run(inputs);
    if (outputs.size() != 2) {
      fail(err, ("the package's model has " + std::to_string(outputs.size()) +
                 " outputs, not (logits, value)").c_str());
      return -1;
    }
    *logits = new at::Tensor(std::move(outputs[0]));
    *values = new at::Tensor(std::move(outputs[1]));
    return 0;
  } catch (const std::exception& e) {
    fail(err, e.what());
  } catch (...) {
    fail(err, "unknown C++ exception");
  }
  return -1;
}

}  // extern "C"
