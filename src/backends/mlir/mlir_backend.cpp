// The MLIR engine: configurations as pass pipelines, and the engine's registration. Emission is
// in translate.cpp and emit_*.cpp; parsing, lowering and the JIT in jit.cpp.
#include <algorithm>
#include <cstdlib>

#include "core/files.h"
#include "mlir/jit.h"
#include "mlir/mlir_reproducer.h"
#include "mlir/translate.h"
#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/mlir.h"
#include "nncheck/onnx_io.h"

namespace nncheck::mlir {
namespace {

constexpr std::pair<Loops, const char*> kLoops[] = {{Loops::Scf, "scf"},
                                                    {Loops::Affine, "affine"},
                                                    {Loops::Tiled, "tiled"},
                                                    {Loops::Vectorized, "vectorized"}};

const char* onOff(bool b) { return b ? "on" : "off"; }

const char* loopsName(Loops l) {
  for (auto [loops, name] : kLoops)
    if (loops == l) return name;
  return "?";
}

}  // namespace

std::string Config::key() const {
  std::string k = std::string("fusion=") + onOff(fusion) + ",canonicalize=" + onOff(canonicalize) +
                  ",loops=" + loopsName(loops) + ",llvm=O" + std::to_string(llvmOpt);
  if (!disabled.empty()) k += ",disable=" + joinNames(disabled);
  return k;
}

namespace {
// The optional passes of each loop lowering, in pipeline order.
std::vector<std::string> loopPasses(Loops loops) {
  switch (loops) {
    case Loops::Affine:
      return {"affine-loop-fusion", "affine-scalrep"};
    case Loops::Tiled:
      return {"affine-loop-tile"};
    case Loops::Vectorized:
      return {"affine-super-vectorize"};
    case Loops::Scf:
      break;
  }
  return {};
}
}  // namespace

Config Config::parse(const std::string& text) {
  Config c;
  const ConfigText t("mlir", text,
                     "fusion=on|off, canonicalize=on|off, loops=scf|affine|tiled|vectorized, "
                     "llvm=O0|O3, disable=pass+pass");
  std::vector<std::string> loops;
  for (auto [l, name] : kLoops) loops.push_back(name);
  for (const ConfigText::Item& item : t.items()) {
    if (item.key == "fusion")
      c.fusion = t.onOff(item);
    else if (item.key == "canonicalize")
      c.canonicalize = t.onOff(item);
    else if (item.key == "llvm")
      c.llvmOpt = t.choice(item, {"O0", "O3"}) == 0 ? 0 : 3;
    else if (item.key == "disable")
      c.disabled = t.names(item);
    else if (item.key == "loops")
      c.loops = kLoops[t.choice(item, loops)].first;
    else
      t.reject(item);
  }
  const std::vector<std::string> optional = loopPasses(c.loops);
  for (const std::string& name : c.disabled)
    if (std::find(optional.begin(), optional.end(), name) == optional.end())
      throw Error("mlir configuration '" + text + "': disable=" + name +
                  ": not a loop pass of loops=" + loopsName(c.loops));
  return c;
}

std::string Config::pipeline() const {
  std::string p =
      "func.func(tosa-optional-decompositions,tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,"
      "tosa-to-tensor,convert-elementwise-to-linalg)";
  if (canonicalize) p += ",canonicalize";
  if (fusion) p += ",func.func(linalg-fuse-elementwise-ops)";
  if (canonicalize && fusion) p += ",canonicalize";
  p += ",convert-tensor-to-linalg,eliminate-empty-tensors,empty-tensor-to-alloc-tensor,"
       "one-shot-bufferize{bufferize-function-boundaries "
       "function-boundary-type-conversion=identity-layout-map},"
       "buffer-deallocation-pipeline,convert-bufferization-to-memref";
  switch (loops) {
    case Loops::Scf:
      p += ",func.func(convert-linalg-to-loops)";
      break;
    case Loops::Affine:
    case Loops::Tiled:
    case Loops::Vectorized: {
      p += ",func.func(convert-linalg-to-affine-loops";
      for (const std::string& pass : loopPasses(loops))
        if (!std::binary_search(disabled.begin(), disabled.end(), pass))
          p += "," + pass +
               (pass == "affine-loop-tile"         ? "{tile-size=4}"
                : pass == "affine-super-vectorize" ? "{virtual-vector-size=4}"
                                                   : "");
      p += ")";
      break;
    }
  }
  const bool vectors = loops == Loops::Vectorized;
  p += ",lower-affine";
  if (vectors) p += ",convert-vector-to-scf";
  // Math ops without an LLVM intrinsic become libm calls (vector ones unrolled into
  // vector.extract and insert, lowered after); the rest goes through the one conversion pass of
  // every dialect (convert-to-llvm), half the time of the dialects' passes one after another.
  p += ",convert-math-to-llvm,convert-math-to-libm,convert-scf-to-cf";
  if (vectors) p += ",convert-vector-to-llvm";
  p += ",expand-strided-metadata,convert-to-llvm,reconcile-unrealized-casts";
  return p;
}

std::vector<std::string> Backend::unreportedOptimizations() const {
  std::vector<std::string> out;
  if (config_.canonicalize) out.push_back("canonicalize");
  if (config_.fusion) out.push_back("linalg-fuse-elementwise-ops");
  for (const std::string& pass : loopPasses(config_.loops))
    if (!std::binary_search(config_.disabled.begin(), config_.disabled.end(), pass))
      out.push_back(pass);
  if (config_.llvmOpt == 3) out.push_back("llvm-O3");
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Config> configurations() {
  const Config full;
  std::vector<Config> out{{.fusion = false, .canonicalize = false, .llvmOpt = 0}, full};
  Config c = full;
  c.fusion = false;
  out.push_back(c);
  c = full;
  c.canonicalize = false;
  out.push_back(c);
  for (Loops l : {Loops::Affine, Loops::Tiled}) {
    c = full;
    c.loops = l;
    out.push_back(c);
  }
  c = full;
  c.llvmOpt = 0;
  out.push_back(c);
  return out;
}

Backend::Backend(Config config) : config_(config) {}

Backend::~Backend() = default;

std::string Backend::name() const { return "mlir (" + config_.key() + ")"; }

Capabilities Backend::baseCapabilities() {
  Capabilities caps;
  caps.dtypes = {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Bool};
  caps.opset = 14;
  caps.weightsMustBeInitializers = false;
  return caps;
}

// Measured: the ops of mlir_capabilities.inc (rebuilt by `nncheck probe --backend mlir
// --write-table`), weighted by the share of single-op models the engine ran.
Capabilities Backend::capabilities() const {
  static const std::vector<std::pair<std::string, double>> kProbed = {
#include "mlir/mlir_capabilities.inc"
  };
  return baseCapabilities().withProbedOps(kProbed);
}

TensorMap Backend::run(const Model& model, const TensorMap& inputs) {
  const Program program = translate(model);  // Unsupported passes through
  std::vector<const Tensor*> args;
  for (const Port& in : program.inputs) {
    auto it = inputs.find(in.name);
    if (it == inputs.end()) throw Error("mlir: no value given for input '" + in.name + "'");
    if (it->second.dtype() != in.dtype || it->second.shape() != in.shape)
      throw Error("mlir: input '" + in.name + "' is " +
                  tensorType(it->second.dtype(), it->second.shape()) + ", the model declares " +
                  tensorType(in.dtype, in.shape));
    args.push_back(&it->second);
  }
  // For looking at what was emitted: the last program, in MLIR's text form.
  if (const char* dump = std::getenv("NNCHECK_MLIR_DUMP")) writeOutputFile(dump, program.text);
  if (!jit_) jit_ = std::make_unique<Jit>();
  std::vector<Tensor> outs = jit_->run(program, config_.pipeline(), config_.llvmOpt, args);
  TensorMap out;
  for (size_t i = 0; i < outs.size(); ++i) out[program.outputs[i].name] = std::move(outs[i]);
  return out;
}

NNCHECK_REGISTER_ENGINE(mlir) {
  return configuredEngine<Backend, Config>(
      {.name = "mlir",
       .description =
           "MLIR 19's TOSA path, JIT-compiled in process; configurations are pass pipelines "
           "(fusion=on|off,canonicalize=on|off,loops=scf|affine|tiled|vectorized,llvm=O0|O3, "
           "disable=pass+pass for the loop passes)",
       .baseline = Config{.fusion = false, .canonicalize = false, .llvmOpt = 0}.key(),
       .withDisabled =
           [](const std::string& config, const std::vector<std::string>& names) {
             Config c = Config::parse(config);
             std::vector<std::string> loopPasses;
             for (const std::string& name : names) {
               if (name == "canonicalize")
                 c.canonicalize = false;
               else if (name == "linalg-fuse-elementwise-ops")
                 c.fusion = false;
               else if (name == "llvm-O3")
                 c.llvmOpt = 0;
               else
                 loopPasses.push_back(name);
             }
             c.disabled = mergeNames(c.disabled, loopPasses);
             return Config::parse(c.key()).key();  // checked: each a pass of its loops
           },
       .install = "scripts/install-deps.sh of nncheck's source tree (Debian's libmlir-19-dev and "
                  "llvm-19-dev)",
       .reproducer = &reproducer},
      &configurations);
}

}  // namespace nncheck::mlir
