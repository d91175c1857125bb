// libFuzzer: the model loader and the validity check. Any input gives a model or an
// nncheck::Error, never a crash, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/validity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const nncheck::Model m =
        nncheck::parseModel(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)nncheck::whyInvalid(m);
  } catch (const nncheck::Error&) {
  }
  return 0;
}
