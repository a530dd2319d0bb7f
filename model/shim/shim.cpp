// The model crate's C++ shim: what tch does not wrap, against the same libtorch.
//
// AOTInductor packages (`zertz.exported.export_aoti`): libtorch's AOTIModelPackageLoader, one model of
// a package per handle. Every function catches C++ exceptions and hands their message back in
// `*err` (a string to free with zertz_string_free), so that nothing throws into Rust.
//
// CUDA graphs and streams (built when torch has its CUDA headers, ZERTZ_CUDA): a forward pass
// captured once per batch size and replayed, on streams of the calling threads' own. Without
// them every function of that part reports that this build has no CUDA.
//
// Tensors cross as `at::Tensor*`, the pointers tch's `Tensor::as_ptr` and `Tensor::from_ptr`
// use.

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/csrc/jit/serialization/import.h>

#ifdef ZERTZ_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <sstream>
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

// Runs `body`, turning a C++ exception into `*err` and `failed`: nothing throws into Rust.
template <typename T, typename F>
T guarded(char** err, T failed, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    fail(err, e.what());
  } catch (...) {
    fail(err, "unknown C++ exception");
  }
  return failed;
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
  return guarded(err, static_cast<zertz_aoti*>(nullptr), [&]() -> zertz_aoti* {
    load_libtorch();
    // The loader parses the package's JSON files into one static object of libtorch's
    // (`load_json_file`): two loads at once read each other's metadata ("No device information
    // found"). One load at a time.
    static std::mutex loading;
    std::lock_guard<std::mutex> lock(loading);
    auto loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        path, name, false, static_cast<size_t>(runners < 1 ? 1 : runners),
        static_cast<c10::DeviceIndex>(device_index));
    auto meta = loader->get_metadata();
    auto key = meta.find("AOTI_DEVICE_KEY");
    bool cpu = key == meta.end() || key->second == "cpu";
    return new zertz_aoti{std::move(loader), cpu};
  });
}

void zertz_aoti_free(zertz_aoti* model) { delete model; }

// The value of `key` in the model's metadata, or null (and `*err` unset) when it has none.
char* zertz_aoti_metadata(zertz_aoti* model, const char* key, char** err) {
  return guarded(err, static_cast<char*>(nullptr), [&]() -> char* {
    auto meta = model->loader->get_metadata();
    auto found = meta.find(key);
    if (found != meta.end()) {
      return copy_string(found->second);
    }
    return nullptr;
  });
}

// Runs the model on `planes` and `globals`; its first two outputs come back as new tensors in
// `*logits` and `*values` (for tch's Tensor::from_ptr). Returns 0, or -1 with `*err` set.
int zertz_aoti_run(zertz_aoti* model, const at::Tensor* planes, const at::Tensor* globals,
                   at::Tensor** logits, at::Tensor** values, char** err) {
  return guarded(err, -1, [&]() -> int {
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
  });
}

// An asynchronous copy of `src` into `dst` (same shapes) on the calling thread's current stream.
int zertz_copy_async(at::Tensor* dst, const at::Tensor* src, char** err) {
  return guarded(err, -1, [&]() -> int {
    dst->copy_(*src, /*non_blocking=*/true);
    return 0;
  });
}

// The names of the methods of the TorchScript module serialized in `data` (loaded on the CPU),
// one a line, in `*names`.
int zertz_module_methods(const char* data, size_t len, char** names, char** err) {
  return guarded(err, -1, [&]() -> int {
    std::istringstream in(std::string(data, len));
    auto module = torch::jit::load(in, c10::Device(c10::kCPU));
    std::string text;
    for (const auto& method : module.get_methods()) {
      text += method.name();
      text += '\n';
    }
    *names = copy_string(text);
    return 0;
  });
}

// A pinned (page-locked) copy of `src` in `*out`, a new tensor: `Tensor::pin_memory()` without
// the device argument, which tch always passes and libtorch reports as deprecated on every call.
int zertz_pin_memory(const at::Tensor* src, at::Tensor** out, char** err) {
  return guarded(err, -1, [&]() -> int {
    *out = new at::Tensor(src->pin_memory());
    return 0;
  });
}

#ifdef ZERTZ_CUDA

// A stream of libtorch's pool for one device, and while entered the stream it replaced and the
// device made current (work that names no device, a capture among it, goes to the stream's).
// It also owns the memory pool its graphs share: a lane replays its graphs one at a time and
// reads each one's outputs before the next, so they may reuse each other's memory.
struct zertz_stream {
  c10::cuda::CUDAStream stream;
  c10::optional<c10::cuda::CUDAStream> previous;
  c10::DeviceIndex device = -1;
  at::cuda::MempoolId_t pool;

  zertz_stream(c10::cuda::CUDAStream s, at::cuda::MempoolId_t p) : stream(s), pool(p) {}
};

struct zertz_graph {
  at::cuda::CUDAGraph graph;
};

zertz_stream* zertz_stream_new(int device_index, char** err) {
  return guarded(err, static_cast<zertz_stream*>(nullptr), [&]() -> zertz_stream* {
    auto stream = c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(device_index));
    return new zertz_stream(stream, at::cuda::graph_pool_handle());
  });
}

void zertz_stream_free(zertz_stream* stream) { delete stream; }

// Makes the stream the calling thread's current one on its device (until zertz_stream_exit).
int zertz_stream_enter(zertz_stream* s, char** err) {
  return guarded(err, -1, [&]() -> int {
    s->device = c10::cuda::ExchangeDevice(s->stream.device_index());
    s->previous = c10::cuda::getCurrentCUDAStream(s->stream.device_index());
    c10::cuda::setCurrentCUDAStream(s->stream);
    return 0;
  });
}

// Puts back what zertz_stream_enter changed (as far as it got; nothing to report).
void zertz_stream_exit(zertz_stream* s) {
  try {
    if (s->previous) {
      c10::cuda::setCurrentCUDAStream(*s->previous);
      s->previous = c10::nullopt;
    }
    if (s->device >= 0) {
      c10::cuda::ExchangeDevice(s->device);
      s->device = -1;
    }
  } catch (...) {
  }
}

int zertz_stream_synchronize(zertz_stream* s, char** err) {
  return guarded(err, -1, [&]() -> int {
    s->stream.synchronize();
    return 0;
  });
}

// Waits for the work queued on the calling thread's current stream of `device_index` (not the
// whole device: another thread may be capturing a graph on its own stream meanwhile).
int zertz_current_stream_synchronize(int device_index, char** err) {
  return guarded(err, -1, [&]() -> int {
    c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_index)).synchronize();
    return 0;
  });
}

zertz_graph* zertz_graph_new(char** err) {
  return guarded(err, static_cast<zertz_graph*>(nullptr), [&]() -> zertz_graph* {
    return new zertz_graph{};
  });
}

void zertz_graph_free(zertz_graph* g) { delete g; }

// Starts capturing the calling thread's work on its current stream, the lane's `s` (entered
// before), into the lane's memory pool. Thread-local mode: other threads may go on running
// their own passes.
int zertz_graph_begin(zertz_graph* g, zertz_stream* s, char** err) {
  return guarded(err, -1, [&]() -> int {
    g->graph.capture_begin(s->pool, cudaStreamCaptureModeThreadLocal);
    return 0;
  });
}

int zertz_graph_end(zertz_graph* g, char** err) {
  return guarded(err, -1, [&]() -> int {
    g->graph.capture_end();
    return 0;
  });
}

// Replays the captured work on the calling thread's current stream.
int zertz_graph_replay(zertz_graph* g, char** err) {
  return guarded(err, -1, [&]() -> int {
    g->graph.replay();
    return 0;
  });
}

#else

struct zertz_stream {};
struct zertz_graph {};

static const char* const NO_CUDA =
    "this build of the engine has no CUDA (torch without its CUDA headers)";

zertz_stream* zertz_stream_new(int, char** err) {
  fail(err, NO_CUDA);
  return nullptr;
}
void zertz_stream_free(zertz_stream* stream) { delete stream; }
int zertz_stream_enter(zertz_stream*, char** err) {
  fail(err, NO_CUDA);
  return -1;
}
void zertz_stream_exit(zertz_stream*) {}
int zertz_stream_synchronize(zertz_stream*, char** err) {
  fail(err, NO_CUDA);
  return -1;
}
int zertz_current_stream_synchronize(int, char** err) {
  fail(err, NO_CUDA);
  return -1;
}
zertz_graph* zertz_graph_new(char** err) {
  fail(err, NO_CUDA);
  return nullptr;
}
void zertz_graph_free(zertz_graph* g) { delete g; }
int zertz_graph_begin(zertz_graph*, zertz_stream*, char** err) {
  fail(err, NO_CUDA);
  return -1;
}
int zertz_graph_end(zertz_graph*, char** err) {
  fail(err, NO_CUDA);
  return -1;
}
int zertz_graph_replay(zertz_graph*, char** err) {
  fail(err, NO_CUDA);
  return -1;
}

#endif

}  // extern "C"
