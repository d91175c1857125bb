// libFuzzer: the nncheck.json reader. Any input fills the case or gives an nncheck::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "harness/corpus_store.h"
#include "nncheck/corpus.h"
#include "nncheck/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nncheck::CorpusCase c;
  try {
    nncheck::readCaseMetadata(std::string(reinterpret_cast<const char*>(data), size),
                              "fuzz/nncheck.json", c);
  } catch (const nncheck::Error&) {
  }
  return 0;
}
