// libFuzzer: import -> export -> import is lossless, and export is deterministic.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nncheck::Model m;
  try {
    m = nncheck::parseModel(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const nncheck::Error&) {
    return 0;
  }
  const std::string bytes = nncheck::serializeModel(m);
  const nncheck::Model back = nncheck::parseModel(bytes, "fuzz (written back)");
  if (!(back == m) || nncheck::serializeModel(back) != bytes) __builtin_trap();
  return 0;
}
