// MLIR's TOSA path as an engine (nncheck::mlir, built when CMake finds MLIR 19): each ONNX model
// is emitted once as a TOSA function (with arith and math ops on tensors where TOSA has no exact
// op), parsed and verified by MLIR, lowered by a pass pipeline through linalg, loops and LLVM,
// JIT-compiled and run in process. The configurations are pass pipelines: a difference between
// two of them on the same emitted TOSA is a compiler bug by definition.
//
//   nncheck::mlir::Backend tosa(nncheck::mlir::Config::parse("fusion=off,llvm=O0"));
//   nncheck::TensorMap out = tosa.run(model, inputs);   // throws nncheck::Unsupported
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "nncheck/backend.h"

namespace nncheck::mlir {

// How linalg's ops become loops.
enum class Loops {
  Scf,         // convert-linalg-to-loops
  Affine,      // affine loops, fused by affine-loop-fusion, then scalar replacement
  Tiled,       // affine loops tiled by affine-loop-tile (tile size 4)
  Vectorized,  // affine loops vectorized by affine-super-vectorize (width 4)
};

struct Config {
  bool fusion = true;        // linalg-fuse-elementwise-ops
  bool canonicalize = true;  // canonicalize after the TOSA lowering and after fusion
  Loops loops = Loops::Scf;
  int llvmOpt = 3;  // LLVM's optimization level of the JIT, 0 or 3
  // Loop passes of `loops` left out, sorted (affine-loop-fusion, affine-scalrep,
  // affine-loop-tile, affine-super-vectorize): what a culprit search switches off.
  std::vector<std::string> disabled{};

  // "fusion=on,canonicalize=on,loops=scf,llvm=O3" (",disable=affine-loop-fusion" when some are
  // left out), what parse() reads back.
  std::string key() const;
  // Items separated by ',' (any subset, in any order): fusion=on|off, canonicalize=on|off,
  // loops=scf|affine|tiled|vectorized, llvm=O0|O3; throws nncheck::Error naming what is wrong.
  static Config parse(const std::string& text);
  // The pass pipeline this configuration runs on the module, as mlir-opt's --pass-pipeline
  // takes it inside builtin.module(...).
  std::string pipeline() const;
  bool operator==(const Config&) const = default;
};

// GoogleTest prints a TEST_P parameter with this: the key.
inline void PrintTo(const Config& c, std::ostream* os) { *os << c.key(); }

class Jit;  // MLIR's context and JIT, kept out of this header

// The pipelines campaigns and the example suite run, the least optimizing first (the reference
// point of triage): everything off at LLVM -O0; everything on at -O3; then each optimization
// alone switched away from the full pipeline. loops=vectorized is left out: MLIR 19's
// affine-super-vectorize fails on common inputs (IR its own verifier rejects, bool vectors read
// as bits), which would drown every other finding; name it with --config to test it.
std::vector<Config> configurations();

class Backend final : public nncheck::Backend {
 public:
  explicit Backend(Config config = {});
  ~Backend() override;
  std::string name() const override;
  // Measured: the ops of mlir_capabilities.inc (rebuilt by `nncheck probe --backend mlir
  // --write-table`), weighted by the share of single-op models the engine ran.
  Capabilities capabilities() const override;
  // float32, float64, int64, int32 and bool; opset 14; weights may be computed values.
  static Capabilities baseCapabilities();
  // Unsupported when the emission cannot express a node exactly in TOSA; MLIR's diagnostics
  // (a verifier, a pass or the JIT failing) become an nncheck::Error naming the stage.
  TensorMap run(const Model& model, const TensorMap& inputs) override;
  // The optional passes of the pipeline: canonicalize, linalg-fuse-elementwise-ops, the loop
  // passes, and llvm-O3 (the JIT's optimizer); the lowering passes every pipeline needs are not.
  // A pass does not say whether it changed the module: searched for a culprit, not counted as
  // reach.
  std::vector<std::string> unreportedOptimizations() const override;
  const Config& config() const { return config_; }

 private:
  Config config_;
  std::unique_ptr<Jit> jit_;  // made by the first run(), in the process that runs the engine
};

}  // namespace nncheck::mlir
