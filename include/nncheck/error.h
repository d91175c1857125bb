// The exceptions nncheck throws. Every message names what it is about: the file, the
// argument, or the op, node and shapes involved.
//
//   try { nncheck::loadModel("m.onnx"); }
//   catch (const nncheck::Error& e) { std::cerr << e.what() << "\n"; }
#pragma once

#include <stdexcept>
#include <string>

namespace nncheck {

// Any error nncheck reports: bad input, an invalid model, a failing kernel.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The input is well-formed but asks for something nncheck declares unsupported: an op that is
// not registered, an op version, a dtype or an attribute value outside the op's spec.
// Conformance runs count these as skipped, with the message as the reason.
class Unsupported : public Error {
 public:
  Unsupported(std::string category, const std::string& message)
      : Error(message), category_(std::move(category)) {}
  // A short, stable reason class: "op not registered", "dtype", "attribute", "op version".
  const std::string& category() const { return category_; }

 private:
  std::string category_;
};

// An engine cannot run here at all: its runtime or worker program is missing or broken, so
// every case would fail the same way. Commands stop with it (exit status 2) and save nothing;
// it is never a finding (harness/probe.h, checkEngineSetUp).
class SetUpError : public Error {
 public:
  using Error::Error;
};

}  // namespace nncheck
