// The only file that includes MLIR's and LLVM's headers (about 30 s to compile).
#include "mlir/jit.h"

#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/ExecutionEngine/ExecutionEngine.h>
#include <mlir/ExecutionEngine/OptUtils.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/InitAllDialects.h>
#include <mlir/InitAllExtensions.h>
#include <mlir/InitAllPasses.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Pass/PassRegistry.h>
#include <mlir/Target/LLVMIR/Dialect/All.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>

#include "nncheck/error.h"

namespace nncheck::mlir {
namespace {

// A context keeps every constant and type it has seen: a fresh one after this many runs bounds a
// persistent worker's memory.
constexpr int kRunsPerContext = 64;

// MemRefToLLVM's `allocated` pointer of a memref.get_global: not to be freed.
constexpr uintptr_t kGlobalAllocated = 0xdeadbeef;

void initializeOnce() {
  static const bool done = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    ::mlir::registerAllPasses();
    return true;
  }();
  (void)done;
}

std::string lineOf(const std::string& text, unsigned line) {
  std::istringstream in(text);
  std::string l;
  for (unsigned i = 1; std::getline(in, l); ++i)
    if (i == line) return l;
  return "";
}

// The descriptor of a ranked memref as the C interface lays it out: allocated and aligned
// pointers, offset, sizes, strides; every field 8 bytes.
size_t descriptorWords(size_t rank) { return 3 + 2 * rank; }

std::vector<int64_t> descriptorOf(Tensor& t) {
  const size_t r = t.shape().size();
  std::vector<int64_t> d(descriptorWords(r));
  d[0] = d[1] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.bytes().data()));
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = r; i-- > 0;) {
    d[3 + i] = t.shape()[i];
    d[3 + r + i] = stride;
    stride *= t.shape()[i];
  }
  return d;
}

}  // namespace

struct Jit::State {
  ::mlir::DialectRegistry registry;
  std::unique_ptr<::mlir::MLIRContext> context;
  int runs = 0;

  ::mlir::MLIRContext& freshContext() {
    if (!context || runs >= kRunsPerContext) {
      context.reset();
      context =
          std::make_unique<::mlir::MLIRContext>(registry, ::mlir::MLIRContext::Threading::DISABLED);
      runs = 0;
    }
    ++runs;
    return *context;
  }
};

Jit::Jit() : state_(std::make_unique<State>()) {
  initializeOnce();
  ::mlir::registerAllDialects(state_->registry);
  ::mlir::registerAllExtensions(state_->registry);
  ::mlir::registerAllToLLVMIRTranslations(state_->registry);
}

Jit::~Jit() = default;

std::vector<Tensor> Jit::run(const Program& program, const std::string& pipeline, int llvmOpt,
                             const std::vector<const Tensor*>& inputs, JitTimes* times) {
  const auto start = std::chrono::steady_clock::now();
  ::mlir::MLIRContext& ctx = state_->freshContext();
  std::string diagnostics;
  ::mlir::ScopedDiagnosticHandler handler(&ctx, [&](::mlir::Diagnostic& d) {
    std::string where;
    if (auto loc = ::mlir::dyn_cast<::mlir::FileLineColLoc>(d.getLocation()))
      where = "line " + std::to_string(loc.getLine()) + " (" + lineOf(program.text, loc.getLine()) +
              "): ";
    diagnostics += (diagnostics.empty() ? "" : "; ") + where + d.str();
    return ::mlir::success();
  });

  ::mlir::OwningOpRef<::mlir::ModuleOp> module =
      ::mlir::parseSourceString<::mlir::ModuleOp>(program.text, ::mlir::ParserConfig(&ctx));
  if (!module) throw Error("mlir: the emitted TOSA does not parse or verify: " + diagnostics);

  ::mlir::PassManager pm(&ctx);
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineStream(pipelineErrors);
  if (::mlir::failed(::mlir::parsePassPipeline(pipeline, pm, pipelineStream)))
    throw Error("mlir: cannot read the pass pipeline '" + pipeline + "': " + pipelineErrors);
  if (::mlir::failed(pm.run(*module)))
    throw Error("mlir: the pass pipeline failed: " + diagnostics);

  ::mlir::ExecutionEngineOptions options;
  auto transformer = ::mlir::makeOptimizingTransformer(static_cast<unsigned>(llvmOpt), 0, nullptr);
  options.transformer = transformer;
  options.jitCodeGenOptLevel =
      llvmOpt == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive;
  // memref.copy of strided views lowers to a call of memrefCopy, which this library defines.
  const llvm::StringRef runtime[] = {NNCHECK_MLIR_RUNNER_UTILS};
  options.sharedLibPaths = runtime;
  options.enableGDBNotificationListener = false;
  options.enablePerfNotificationListener = false;
  auto engine = ::mlir::ExecutionEngine::create(*module, options);
  if (!engine)
    throw Error("mlir: the JIT failed: " + llvm::toString(engine.takeError()) + " " + diagnostics);
  // The JIT compiles on the first lookup of a symbol.
  auto forward = (*engine)->lookupPacked("_mlir_ciface_forward");
  if (!forward)
    throw Error("mlir: the JIT failed: " + llvm::toString(forward.takeError()) + " " + diagnostics);
  const auto compiled = std::chrono::steady_clock::now();

  // The compiled code may write into its arguments' buffers: give it copies.
  std::vector<Tensor> args;
  for (const Tensor* t : inputs) args.push_back(*t);
  std::vector<std::vector<int64_t>> argDescriptors;
  for (Tensor& t : args) argDescriptors.push_back(descriptorOf(t));
  std::vector<void*> argPointers;
  for (auto& d : argDescriptors) argPointers.push_back(d.data());

  size_t resultWords = 0;
  for (const Port& o : program.outputs) resultWords += descriptorWords(o.shape.size());
  std::vector<int64_t> results(resultWords, 0);
  void* resultPointer = results.data();
  std::vector<void*> packed{&resultPointer};
  for (void*& p : argPointers) packed.push_back(&p);
  (*forward)(packed.data());

  std::vector<Tensor> outs;
  std::set<uintptr_t> owned;  // buffers the call allocated, freed once each
  std::set<uintptr_t> ours;
  for (const Tensor& t : args) ours.insert(reinterpret_cast<uintptr_t>(t.bytes().data()));
  size_t at = 0;
  for (const Port& o : program.outputs) {
    const size_t r = o.shape.size();
    const int64_t* d = results.data() + at;
    at += descriptorWords(r);
    Tensor out(o.dtype, o.shape);
    for (size_t i = 0; i < r; ++i)
      if (d[3 + i] != o.shape[i])
        throw Error("mlir: @forward returned output '" + o.name + "' with dim " +
                    std::to_string(i) + " of size " + std::to_string(d[3 + i]) + ", not " +
                    std::to_string(o.shape[i]));
    const size_t width = out.size() ? out.bytes().size() / static_cast<size_t>(out.size()) : 0;
    const auto* base = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(d[1]));
    std::vector<int64_t> index(r, 0);
    for (int64_t k = 0; k < out.size(); ++k) {
      int64_t element = d[2];
      for (size_t i = 0; i < r; ++i) element += index[i] * d[3 + r + i];
      std::memcpy(out.bytes().data() + static_cast<size_t>(k) * width,
                  base + static_cast<size_t>(element) * width, width);
      for (size_t i = r; i-- > 0;) {
        if (++index[i] < o.shape[i]) break;
        index[i] = 0;
      }
    }
    const auto allocated = static_cast<uintptr_t>(d[0]);
    if (allocated && allocated != kGlobalAllocated && !ours.count(allocated))
      owned.insert(allocated);
    outs.push_back(std::move(out));
  }
  for (uintptr_t p : owned) std::free(reinterpret_cast<void*>(p));
  if (times) {
    const auto end = std::chrono::steady_clock::now();
    times->compileSeconds = std::chrono::duration<double>(compiled - start).count();
    times->callSeconds = std::chrono::duration<double>(end - compiled).count();
  }
  return outs;
}

}  // namespace nncheck::mlir
