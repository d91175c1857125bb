#include <algorithm>
#include <atomic>

#include "core/rng.h"
#include "interp/run_node.h"
#include "nncheck/error.h"
#include "nncheck/reference.h"
#include "nncheck/validity.h"
#include "ops/infer.h"
#include "ops/kernels.h"

namespace nncheck {
namespace {

// `what` names the value's role in messages: "input", "subgraph 'body' output".
void checkFeed(const ValueInfo& declared, const Tensor& given, const std::string& what = "input") {
  if (declared.isTensor() && declared.dtype != DType::Undefined && declared.dtype != given.dtype())
    throw Error(what + " '" + declared.name + "' is declared " +
                std::string(dtypeName(declared.dtype)) + " but given " +
                std::string(dtypeName(given.dtype())));
  if (!declared.dims) return;
  bool ok = declared.dims->size() == given.shape().size();
  for (size_t a = 0; ok && a < given.shape().size(); ++a) {
    const Dim& d = (*declared.dims)[a];
    ok = !d.value || *d.value == given.shape()[a];
  }
  if (!ok)
    throw Error(what + " '" + declared.name + "' has shape " + shapeToString(given.shape()) +
                ", not its declared shape");
}

double epsilonOf(DType t) {
  switch (t) {
    case DType::Float16:
      return 0x1.0p-10;
    case DType::Float32:
      return 0x1.0p-23;
    case DType::Float64:
      return 0x1.0p-52;
    default:
      return 0;
  }
}

// How a perturbed run moves values: relative errors of up to `ulps` epsilons either way, and the
// ops' absolute output errors (OpSpec::outputError) `ulps` times over in one direction, `side`:
// odd seeds up, even seeds down, so that a few runs see both sides of an error a one-sided op
// downstream (Relu) would clip.
struct Perturbation {
  Rng rng;
  double ulps;
  double side;
};

// Every float element x of `t` times (1 + d eps), d uniform in [-ulps, ulps] and eps its dtype's
// machine epsilon (2^-23 for float32), rounded back to the dtype. With `absolute` (per element),
// moved by d eps absolute[i] instead, d uniform in [0, ulps] on the perturbation's side.
Tensor perturbed(const Tensor& t, Perturbation& p, const std::vector<double>* absolute = nullptr) {
  const double unit = epsilonOf(t.dtype());
  if (unit == 0) return t;
  Tensor out = t;
  visitCompute(t.dtype(), [&]<class T>() {
    if constexpr (ops::isFloatLike<T>) {
      auto xs = out.span<T>();
      for (size_t i = 0; i < xs.size(); ++i) {
        const double v = ops::toDouble(xs[i]);
        xs[i] = ops::fromDouble<T>(absolute
                                       ? v + p.side * p.rng.real(0, p.ulps) * unit * absolute->at(i)
                                       : v * (1 + p.rng.real(-p.ulps, p.ulps) * unit));
      }
    }
  });
  return out;
}

}  // namespace

namespace {

// Collects the node's inputs from `values`; with `facts`, also what shape inference needs.
std::vector<const Tensor*> nodeInputs(const Node& node, size_t index, const TensorMap& values,
                                      std::vector<ops::InputFacts>* facts) {
  std::vector<const Tensor*> ins;
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      if (facts) facts->push_back({});
      ins.push_back(nullptr);
      continue;
    }
    auto it = values.find(name);
    if (it == values.end())
      throw Error(node.label(index) + ": input '" + name + "' is not computed before this node");
    if (facts) facts->push_back({true, it->second.dtype(), it->second.shape(), &it->second});
    ins.push_back(&it->second);
  }
  return ins;
}

std::atomic<int64_t> memoryLimitBytes{kDefaultMemoryLimit};
std::atomic<int64_t> timeLimitMs{kDefaultReferenceTimeLimit.count()};

std::string mib(int64_t bytes) {
  return bytes < (int64_t{1} << 20) ? std::to_string(bytes) + " bytes"
                                    : std::to_string(bytes >> 20) + " MiB";
}

// Outputs past the reference's budgets make a case it does not compute, not a crash: checked
// from the inferred types, before the node allocates anything. `held`: what the run holds.
void checkMemory(const Node& node, size_t index, int64_t held,
                 const std::vector<ops::TensorType>& types) {
  int64_t needed = 0;
  for (const auto& t : types) {
    if (t.dtype == DType::Undefined) continue;
    const int64_t bytes = tensorBytes(t.dtype, t.shape);
    if (bytes > kMaxTensorBytes)
      throw Unsupported("memory", node.label(index) + ": output " + shapeToString(t.shape) +
                                      " is larger than the reference's limit of " +
                                      mib(kMaxTensorBytes) + " per tensor");
    needed += bytes;
  }
  const int64_t limit = memoryLimitBytes.load();
  if (held + needed > limit)
    throw Unsupported("memory", node.label(index) + ": its outputs need " + mib(needed) +
                                    " on top of the " + mib(held) +
                                    " this run holds, past the reference's limit of " + mib(limit) +
                                    " per run");
}

std::vector<Tensor> runSubgraph(const Graph& g, int64_t opset, const TensorMap& scope,
                                const std::vector<Tensor>& inputs);

// Runs the node's kernel on `ins` (read from `values`, which hold `held` bytes).
std::vector<Tensor> runKernel(const ops::OpSpec& spec, const Node& node, size_t index,
                              const TensorMap& values, int64_t held, std::vector<const Tensor*> ins,
                              const std::vector<ops::TensorType>& types, int64_t opset) {
  std::vector<Tensor> outs;
  try {
    checkMemory(node, index, held, types);
    int64_t work = 1;  // a node's own cost, and one per element it reads and writes
    for (const Tensor* in : ins)
      if (in) work += in->size();
    for (const auto& t : types) {
      outs.push_back(t.dtype == DType::Undefined ? Tensor() : Tensor(t.dtype, t.shape));
      work += outs.back().size();
    }
    pollDeadline(work);
    ops::SubgraphRunner runner;
    if (!node.subgraphs().empty())
      runner = [&values, opset](const Graph& g, const std::vector<Tensor>& in) {
        return runSubgraph(g, opset, values, in);
      };
    ops::KernelCall call(spec, node, std::move(ins), std::move(outs), std::move(runner));
    spec.kernelFn(call);
    return std::move(call.outputs());
  } catch (DeadlineExceeded& e) {
    e.where = node.label(index);  // overwritten on the way out: the outermost node is named
    throw;
  } catch (const Unsupported&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(node.label(index) + ": kernel failed: " + e.what());
  }
}

}  // namespace

namespace {

std::vector<Tensor> runNode(const Node& node, size_t index, int64_t opset, const TensorMap& values,
                            int64_t held) {
  const ops::OpSpec& spec = ops::specFor(node, opset);
  std::vector<ops::InputFacts> facts;
  std::vector<const Tensor*> ins = nodeInputs(node, index, values, &facts);
  return runKernel(spec, node, index, values, held, std::move(ins),
                   ops::inferNode(spec, node, facts), opset);
}

}  // namespace

const Tensor* HeldValues::find(const std::string& name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

void HeldValues::set(const std::string& name, Tensor t) {
  Tensor& slot = map_[name];
  bytes_ += tensorBytes(t.dtype(), t.shape()) - tensorBytes(slot.dtype(), slot.shape());
  slot = std::move(t);
}

TensorMap HeldValues::release() {
  bytes_ = 0;
  return std::move(map_);
}

std::vector<Tensor> runNode(const Node& node, size_t index, int64_t opset,
                            const HeldValues& values) {
  return runNode(node, index, opset, values.map(), values.bytes());
}

std::vector<Tensor> runNode(const Node& node, size_t index, int64_t opset,
                            const TensorMap& values) {
  int64_t held = 0;
  for (const auto& [name, t] : values) held += tensorBytes(t.dtype(), t.shape());
  return runNode(node, index, opset, values, held);
}

Unsupported referenceTimeout(const DeadlineExceeded& e) {
  const auto ms = referenceTimeLimit().count();
  const std::string limit =
      ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
  return Unsupported("time", (e.where.empty() ? std::string("the run") : e.where) +
                                 ": the reference ran past its time limit of " + limit +
                                 " per run (setReferenceTimeLimit, --reference-timeout)");
}

namespace {

// A subgraph's run: the values it captures from `scope` (the enclosing graph's), its
// initializers and its inputs, then its nodes; every input and output is checked against its
// declared type, which is what the node's shape rule relied on.
std::vector<Tensor> runSubgraph(const Graph& g, int64_t opset, const TensorMap& scope,
                                const std::vector<Tensor>& inputs) {
  const std::string where = "subgraph '" + g.name + "'";
  HeldValues values;
  for (const std::string& name : capturedValues(g)) {
    auto it = scope.find(name);
    if (it == scope.end())
      throw Error(where + " reads '" + name + "', which its enclosing graphs do not compute");
    pollDeadline(it->second.size());  // copied on every trip of a loop
    values.set(name, it->second);
  }
  for (const Initializer& init : g.initializers) values.set(init.name, init.value);
  if (inputs.size() != g.inputs.size())
    throw Error(where + " takes " + std::to_string(g.inputs.size()) + " inputs, given " +
                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkFeed(g.inputs[i], inputs[i], where + " input");
    values.set(g.inputs[i].name, inputs[i]);
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    std::vector<Tensor> outs = runNode(node, n, opset, values);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) values.set(node.outputs[i], std::move(outs[i]));
  }
  std::vector<Tensor> out;
  for (const ValueInfo& o : g.outputs) {
    const Tensor* t = values.find(o.name);
    if (!t) throw Error(where + ": output '" + o.name + "' is never computed");
    checkFeed(o, *t, where + " output");
    out.push_back(*t);
  }
  return out;
}

}  // namespace

void checkInputs(const Model& model, const TensorMap& inputs) {
  const std::vector<const ValueInfo*> feeds = model.graph.feedInputs();
  for (const ValueInfo* in : feeds) {
    auto it = inputs.find(in->name);
    if (it == inputs.end()) throw Error("input '" + in->name + "' was not given");
    checkFeed(*in, it->second);
  }
  // Each given name must be fed: as many feeds as inputs, each found above, leaves none over.
  if (inputs.size() != feeds.size())
    for (const auto& given : inputs)
      if (std::none_of(feeds.begin(), feeds.end(),
                       [&](const ValueInfo* v) { return v->name == given.first; }))
        throw Error("'" + given.first + "' is given but is not a graph input");
}

namespace {

TensorMap run(const Model& model, const TensorMap& inputs, bool keepAll,
              Perturbation* perturb = nullptr) {
  checkStructure(model);
  const Graph& g = model.graph;
  const int64_t opset = model.defaultOpset();
  checkInputs(model, inputs);
  HeldValues values;
  for (const Initializer& init : g.initializers) values.set(init.name, init.value);
  for (const ValueInfo* in : g.feedInputs()) values.set(in->name, inputs.at(in->name));

  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    std::vector<Tensor> outs;
    if (perturb) {
      // The node reads perturbed copies of its data inputs (not shape operands: Resize's
      // scales are read exactly); later nodes read the values unperturbed, then perturbed afresh.
      const ops::OpSpec& spec = ops::specFor(node, opset);
      TensorMap exact;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const std::string& in = node.inputs[i];
        const Tensor* t = in.empty() ? nullptr : values.find(in);
        if (!t || exact.count(in) || spec.inputSpec(i).role != ops::InputRole::Data) continue;
        exact[in] = *t;
        values.set(in, perturbed(*t, *perturb));
      }
      outs = runNode(node, n, opset, values);
      for (auto& [name, t] : exact) values.set(name, std::move(t));
      if (spec.outputErrorFn && !outs.empty()) {
        // The error's scale at the exact inputs: perturbed ones may hide it (a constant
        // instance's variance, 0 exactly, becomes the perturbation's).
        ops::KernelCall call(spec, node, nodeInputs(node, n, values.map(), nullptr),
                             std::move(outs));
        const std::vector<double> absolute = spec.outputErrorFn(call);
        outs = std::move(call.outputs());
        outs[0] = perturbed(outs[0], *perturb, &absolute);
      }
    } else {
      outs = runNode(node, n, opset, values);
    }
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) values.set(node.outputs[i], std::move(outs[i]));
  }

  if (keepAll) return values.release();
  TensorMap out;
  for (const ValueInfo& o : g.outputs) {
    const Tensor* t = values.find(o.name);
    if (!t) throw Error("graph output '" + o.name + "' is never computed");
    out[o.name] = *t;
  }
  return out;
}

}  // namespace

TensorMap RepeatedRun::allValues(const TensorMap& inputs) {
  return underReferenceTimeLimit([&] { return runOnce(inputs); });
}

TensorMap RepeatedRun::runOnce(const TensorMap& inputs) {
  const Graph& g = model_.graph;
  const bool first = specs_.size() < g.nodes.size();
  if (first) {  // (again, after a first run that stopped partway: past the time limit)
    specs_.clear();
    types_.clear();
  }
  const int64_t opset = model_.defaultOpset();
  HeldValues values;
  for (const auto& [name, t] : inputs) values.set(name, t);
  for (const Initializer& init : g.initializers) values.set(init.name, init.value);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    std::vector<ops::InputFacts> facts;
    std::vector<const Tensor*> ins = nodeInputs(node, n, values.map(), first ? &facts : nullptr);
    if (first) {
      specs_.push_back(&ops::specFor(node, opset));
      types_.push_back(ops::inferNode(*specs_.back(), node, facts));
    }
    std::vector<Tensor> outs = runKernel(*specs_[n], node, n, values.map(), values.bytes(),
                                         std::move(ins), types_[n], opset);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (!node.outputs[i].empty()) values.set(node.outputs[i], std::move(outs[i]));
  }
  return values.release();
}

TensorMap runReference(const Model& model, const TensorMap& inputs) {
  return underReferenceTimeLimit([&] { return run(model, inputs, false); });
}

TensorMap runReferenceAllValues(const Model& model, const TensorMap& inputs) {
  return underReferenceTimeLimit([&] { return run(model, inputs, true); });
}

TensorMap runReferencePerturbed(const Model& model, const TensorMap& inputs, uint64_t seed,
                                double ulps) {
  Perturbation p{Rng(seed), ulps, seed % 2 == 1 ? 1.0 : -1.0};
  return underReferenceTimeLimit([&] { return run(model, inputs, false, &p); });
}

std::vector<Tensor> runReferenceNode(const Node& node, const std::vector<Tensor>& inputs,
                                     int64_t opset) {
  if (inputs.size() > node.inputs.size())
    throw Error("node '" + node.name + "' (" + node.opType + "): given " +
                std::to_string(inputs.size()) + " inputs but it names " +
                std::to_string(node.inputs.size()));
  HeldValues values;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!node.inputs[i].empty()) values.set(node.inputs[i], inputs[i]);
  return underReferenceTimeLimit([&] { return runNode(node, 0, opset, values); });
}

int64_t memoryLimit() { return memoryLimitBytes.load(); }

int64_t setMemoryLimit(int64_t bytes) {
  if (bytes <= 0) throw Error("the memory limit must be positive, not " + std::to_string(bytes));
  return memoryLimitBytes.exchange(bytes);
}

std::chrono::milliseconds referenceTimeLimit() {
  return std::chrono::milliseconds(timeLimitMs.load());
}

std::chrono::milliseconds setReferenceTimeLimit(std::chrono::milliseconds limit) {
  constexpr std::chrono::milliseconds kWeek = std::chrono::hours(24 * 7);
  if (limit.count() <= 0 || limit > kWeek)
    throw Error("the reference's time limit must be from 1 ms to one week, not " +
                std::to_string(limit.count()) + " ms");
  return std::chrono::milliseconds(timeLimitMs.exchange(limit.count()));
}

Backend& reference() {
  static ReferenceBackend backend;
  return backend;
}

}  // namespace nncheck
