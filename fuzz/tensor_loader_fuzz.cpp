// libFuzzer: the tensor loader. Any input gives a tensor or an nncheck::Error, and a tensor
// written back reads back the same.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nncheck/error.h"
#include "nncheck/onnx_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nncheck::Tensor t;
  std::string name;
  try {
    t = nncheck::parseTensor(std::string(reinterpret_cast<const char*>(data), size), "fuzz", &name);
  } catch (const nncheck::Error&) {
    return 0;
  }
  const nncheck::Tensor back =
      nncheck::parseTensor(nncheck::serializeTensor(t, name), "fuzz (written back)");
  if (!(back == t)) __builtin_trap();
  return 0;
}
