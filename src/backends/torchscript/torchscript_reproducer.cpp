// TorchScript's part of a standalone reproducer (nncheck repro): C++, as PyTorch 1.13 is
// installed here as libtorch only. The model is the TorchScript source the adapter runs, so the
// script shows PyTorch's maintainers a program of theirs, not an ONNX file.
#include "torchscript/torchscript_reproducer.h"

#include <torch/version.h>

#include "core/script_literal.h"
#include "nncheck/torchscript.h"
#include "pytorch_source/translate.h"
#include "torchscript/levels.h"

namespace nncheck::torchscript {

std::optional<ReproducerRecipe> reproducer(const std::string& configuration, const Model& model) {
  const Level level = Config::parse(configuration).level;
  const pytorch::Script script = pytorch::translate(model, "torchscript");
  const bool nnc = fusesWithNnc(level);
  const bool optimize = optimizesGraph(level);
  std::string code = R"(#include <ATen/Parallel.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/script.h>

// Declared in torch/csrc/jit/codegen/fuser/interface.h, which Debian does not package.
namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);
}

// The model (model.onnx) as TorchScript, op by op with ONNX's semantics; its initializers are
// the module's buffers.
static const char* SOURCE =
)";
  code += cppTextLiteral(script.source, "    ") +
          ";\nstatic const std::vector<std::pair<std::string, Tensor>> BUFFERS = {\n";
  for (const pytorch::Buffer& b : script.buffers)
    code +=
        "    {" + cppStringLiteral(b.name) + ", " + cppTensorLiteral(b.value, "        ") + "},\n";
  code += R"(};

static at::Tensor toTorch(const Tensor& t) {
  const c10::ScalarType type = t.type == "float32"   ? at::kFloat
                               : t.type == "float64" ? at::kDouble
                               : t.type == "int64"   ? at::kLong
                               : t.type == "int32"   ? at::kInt
                                                     : at::kBool;
  std::vector<int64_t> dims(t.dims.begin(), t.dims.end());
  return torch::tensor(t.values, at::kDouble).reshape(dims).to(type);
}

static Tensor fromTorch(const at::Tensor& v) {
  const c10::ScalarType s = v.scalar_type();
  Tensor t{s == at::kFloat    ? "float32"
           : s == at::kDouble ? "float64"
           : s == at::kLong   ? "int64"
           : s == at::kInt    ? "int32"
           : s == at::kBool   ? "bool"
                              : c10::toString(s),
           {v.sizes().begin(), v.sizes().end()},
           {}};
  const at::Tensor d = v.to(at::kDouble).contiguous();
  t.values.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  return t;
}

std::vector<Tensor> run(const std::string& /*model.onnx: translated above*/,
                        const std::vector<std::pair<std::string, Tensor>>& feeds) {
  torch::NoGradGuard noGrad;
  at::set_num_threads(1);
)";
  code += "  // level=" + Config{level}.describe() + ": the graph executor's optimizations " +
          (optimize ? "on" : "off") + ", the NNC fuser " + (nnc ? "on" : "off") + ".\n";
  if (level == Level::Eager)
    code +=
        "  // (nncheck calls the graph's ATen ops one by one here; the interpreter runs them "
        "unoptimized.)\n";
  code +=
      std::string("  torch::jit::setGraphExecutorOptimize(") + (optimize ? "true" : "false") +
      ");\n  torch::jit::setTensorExprFuserEnabled(" + (nnc ? "true" : "false") +
      ");\n  torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;  // Debian's libtorch has "
      "no LLVM\n  torch::jit::overrideCanFuseOnCPU(" +
      (nnc ? "true" : "false") + ");\n";
  code += R"(  torch::jit::Module m("repro");
  for (const auto& [name, t] : BUFFERS) m.register_buffer(name, toTorch(t));
  m.define(SOURCE);
  m.eval();
  std::vector<c10::IValue> args;
  for (const auto& [name, t] : feeds) args.emplace_back(toTorch(t));
)";
  if (optimize) {
    code += std::string("  torch::jit::Module frozen = torch::jit::") +
            (level == Level::Optimize ? "optimize_for_inference" : "freeze") + "(m);\n";
    code +=
        "  // The profiling executor optimizes a graph after it has seen it run: the last run uses "
        "the\n"
        "  // optimized plan.\n";
    code += "  for (int i = 0; i < " + std::to_string(kRunsBeforeOptimizedPlan) +
            "; ++i) frozen.forward(args);\n";
    code += "  const c10::IValue result = frozen.forward(args);\n";
  } else {
    code += "  const c10::IValue result = m.forward(args);\n";
  }
  code += R"(  std::vector<Tensor> outputs;
  for (const c10::IValue& v : result.toTupleRef().elements()) outputs.push_back(fromTorch(v.toTensor()));
  return outputs;
}
)";
  return ReproducerRecipe{
      .language = "c++",
      .code = std::move(code),
      .requirements = "apt-get install g++ libtorch-dev   # PyTorch " + std::string(TORCH_VERSION),
      .versions = "PyTorch (libtorch) " + std::string(TORCH_VERSION),
      .run =
          "g++ -std=c++17 reproduce.cpp -I/usr/include/torch/csrc/api/include -ltorch "
          "-ltorch_cpu -lc10 -o reproduce && ./reproduce"};
}

}  // namespace nncheck::torchscript
