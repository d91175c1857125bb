// The TorchScript adapter: its own target (nncheck::torchscript), built when CMake finds
// libtorch. The only file that includes torch's headers (about 30 s to compile).
#include <ATen/Parallel.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/script.h>

#include <cstring>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/torchscript.h"
#include "pytorch_source/translate.h"
#include "torchscript/levels.h"
#include "torchscript/torchscript_reproducer.h"

// Declared in torch/csrc/jit/codegen/fuser/interface.h, which Debian does not package.
namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);
}

namespace nncheck::torchscript {
namespace {

constexpr std::pair<Level, const char*> kLevels[] = {{Level::Eager, "eager"},
                                                     {Level::Script, "script"},
                                                     {Level::Freeze, "freeze"},
                                                     {Level::Optimize, "optimize"},
                                                     {Level::Nnc, "nnc"}};

// The dtypes the engine exchanges with ATen, both ways.
constexpr std::pair<DType, c10::ScalarType> kScalarTypes[] = {{DType::Float32, c10::kFloat},
                                                              {DType::Float64, c10::kDouble},
                                                              {DType::Int64, c10::kLong},
                                                              {DType::Int32, c10::kInt},
                                                              {DType::Bool, c10::kBool}};

c10::ScalarType scalarType(DType t, const std::string& name) {
  for (auto [ours, aten] : kScalarTypes)
    if (ours == t) return aten;
  throw Unsupported("dtype", "torchscript: '" + name + "' is " + std::string(dtypeName(t)));
}

DType dtypeOf(c10::ScalarType t, const std::string& name) {
  for (auto [ours, aten] : kScalarTypes)
    if (aten == t) return ours;
  throw Error("torchscript: output '" + name + "' has ATen type " + std::string(c10::toString(t)));
}

at::Tensor toTorch(const Tensor& t, const std::string& name) {
  std::vector<int64_t> sizes(t.shape().begin(), t.shape().end());
  at::Tensor out = at::empty(sizes, at::TensorOptions().dtype(scalarType(t.dtype(), name)));
  if (!t.bytes().empty()) std::memcpy(out.data_ptr(), t.bytes().data(), t.bytes().size());
  return out;
}

Tensor fromTorch(const at::Tensor& value, const std::string& name) {
  const at::Tensor t = value.contiguous();
  Tensor out(dtypeOf(t.scalar_type(), name), Shape(t.sizes().begin(), t.sizes().end()));
  if (static_cast<size_t>(t.numel()) * t.element_size() != out.bytes().size())
    throw Error("torchscript: output '" + name + "' has an unexpected size");
  if (!out.bytes().empty()) std::memcpy(out.bytes().data(), t.data_ptr(), out.bytes().size());
  return out;
}

// Eager: the inlined graph of forward, each node's operation called on its own, as PyTorch's
// eager mode calls ATen ops one by one.
c10::IValue runEager(torch::jit::Module& m, const std::vector<c10::IValue>& inputs) {
  std::shared_ptr<torch::jit::Graph> g = m.get_method("forward").graph()->copy();
  torch::jit::Inline(*g);
  std::unordered_map<const torch::jit::Value*, c10::IValue> env;
  env[g->inputs()[0]] = m._ivalue();
  for (size_t i = 0; i < inputs.size(); ++i) env[g->inputs()[i + 1]] = inputs[i];
  for (torch::jit::Node* n : g->nodes()) {
    if (n->kind() == c10::prim::Constant) {
      env[n->output()] = *torch::jit::toIValue(n->output());
      continue;
    }
    torch::jit::Stack stack;
    for (const torch::jit::Value* in : n->inputs()) stack.push_back(env.at(in));
    if (n->kind() == c10::prim::GetAttr) {
      env[n->output()] = stack[0].toObject()->getAttr(n->s(c10::attr::name));
      continue;
    }
    // Container ops have no schema to look an operation up by.
    if (n->kind() == c10::prim::TupleConstruct) {
      env[n->output()] = c10::ivalue::Tuple::create(std::move(stack));
      continue;
    }
    if (n->kind() == c10::prim::ListConstruct) {
      c10::impl::GenericList list(n->output()->type()->expectRef<c10::ListType>().getElementType());
      for (c10::IValue& v : stack) list.push_back(std::move(v));
      env[n->output()] = std::move(list);
      continue;
    }
    if (n->kind() == c10::prim::ListUnpack) {
      const auto items = stack.at(0).toListRef();
      for (size_t i = 0; i < n->outputs().size(); ++i) env[n->outputs()[i]] = items[i];
      continue;
    }
    n->getOperation()(stack);
    for (size_t i = 0; i < n->outputs().size(); ++i) env[n->outputs()[i]] = stack.at(i);
  }
  return env.at(g->outputs()[0]);
}

// The global switches of PyTorch's JIT, set for this level before each run: configurations may
// share a process.
void switchTo(Level level) {
  torch::jit::setGraphExecutorOptimize(optimizesGraph(level));
  torch::jit::setTensorExprFuserEnabled(fusesWithNnc(level));
  torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;  // Debian's libtorch has no LLVM
  torch::jit::overrideCanFuseOnCPU(fusesWithNnc(level));
}

}  // namespace

std::string Config::describe() const {
  for (auto [l, name] : kLevels)
    if (l == level) return name;
  return "?";
}

std::string Config::key() const { return "level=" + describe(); }

Config Config::parse(const std::string& text) {
  Config c;
  const ConfigText t("torchscript", text, "level=eager|script|freeze|optimize|nnc");
  std::vector<std::string> names;
  for (auto [l, name] : kLevels) names.push_back(name);
  for (const ConfigText::Item& item : t.items()) {
    if (item.key != "level") t.reject(item);
    c.level = kLevels[t.choice(item, names)].first;
  }
  return c;
}

std::vector<Config> configurations() {
  std::vector<Config> out;
  for (auto [l, name] : kLevels) out.push_back({l});
  return out;
}

Backend::Backend(Config config) : config_(config) {
  at::set_num_threads(1);  // one core per engine process; results do not depend on threads
}

Backend::~Backend() = default;

std::string Backend::name() const { return "torchscript (" + config_.describe() + ")"; }

Capabilities Backend::baseCapabilities() {
  Capabilities caps;
  caps.dtypes = {DType::Float32, DType::Float64, DType::Int64, DType::Bool};
  caps.opset = 14;
  caps.weightsMustBeInitializers = false;
  return caps;
}

// Measured: the ops of torchscript_capabilities.inc (rebuilt by `nncheck probe --backend torch
// --write-table`), weighted by the share of single-op models the translation expressed.
Capabilities Backend::capabilities() const {
  static const std::vector<std::pair<std::string, double>> kProbed = {
#include "torchscript/torchscript_capabilities.inc"
  };
  return baseCapabilities().withProbedOps(kProbed);
}

TensorMap Backend::run(const Model& model, const TensorMap& inputs) {
  const pytorch::Script script =
      pytorch::translate(model, "torchscript");  // Unsupported passes through
  try {
    torch::NoGradGuard noGrad;
    switchTo(config_.level);
    torch::jit::Module m("nncheck");
    for (const pytorch::Buffer& b : script.buffers)
      m.register_buffer(b.name, toTorch(b.value, b.name));
    m.define(script.source);
    m.eval();
    std::vector<c10::IValue> args;
    for (const std::string& name : script.inputs) args.emplace_back(toTorch(inputs.at(name), name));
    c10::IValue result;
    switch (config_.level) {
      case Level::Eager:
        result = runEager(m, args);
        break;
      case Level::Script:
        result = m.forward(args);
        break;
      case Level::Freeze:
      case Level::Optimize:
      case Level::Nnc: {
        torch::jit::Module frozen = config_.level == Level::Optimize
                                        ? torch::jit::optimize_for_inference(m)
                                        : torch::jit::freeze(m);
        for (int i = 0; i < kRunsBeforeOptimizedPlan; ++i) frozen.forward(args);
        result = frozen.forward(args);
        break;
      }
    }
    const auto& outs = result.toTupleRef().elements();
    TensorMap out;
    for (size_t i = 0; i < script.outputs.size(); ++i)
      out[script.outputs[i]] = fromTorch(outs.at(i).toTensor(), script.outputs[i]);
    return out;
  } catch (const Error&) {
    throw;  // ours (an input of a dtype ATen is not given), already named
  } catch (const c10::Error& e) {
    throw Error("torchscript (" + config_.describe() + "): " + e.what_without_backtrace());
  } catch (const std::exception& e) {  // torch::jit::ErrorReport and the like
    throw Error("torchscript (" + config_.describe() + "): " + e.what());
  }
}

NNCHECK_REGISTER_ENGINE(torchscript) {
  return configuredEngine<Backend, Config>(
      {.name = "torch",
       .description = "PyTorch 1.13 TorchScript (libtorch); configurations "
                      "level=eager|script|freeze|optimize|nnc",
       .baseline = "level=eager",
       .install = "scripts/install-deps.sh of nncheck's source tree (Debian's libtorch-dev)",
       .reproducer = &reproducer},
      &configurations);
}

}  // namespace nncheck::torchscript
