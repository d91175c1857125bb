// The worker protocol's C++ reader and writer against its test vectors
// (docs/worker-protocol/*.bin): each message these values make is exactly the vector's bytes, and
// each vector reads back to these values. NNCHECK_WRITE_VECTORS=1 writes the vectors anew (after
// a deliberate change of the protocol, with its version).
#include "backends/worker_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/files.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

const fs::path kVectors = fs::path(NNCHECK_SOURCE_DIR) / "docs" / "worker-protocol";

worker::Facts vectorFacts() {
  worker::Facts f;
  f.name = "vectors";
  f.version = "1.0";
  f.description = "the worker protocol's test vectors";
  f.configurations = {"O0", "O1"};
  f.baseline = "O0";
  f.optimizations = {{"O0", {}}, {"O1", {"FoldConstant", "FuseOps"}}};
  f.install = "pip install vectors";
  f.capabilities.dtypes = {DType::Float32, DType::Int64};
  f.capabilities = f.capabilities.withProbedOps({{"Add", 1.0}, {"Cast", 0.5}});
  f.capabilities.weightsMustBeInitializers = false;
  f.unreported = {{"O1", {"Vectorize"}}};
  f.fixed = {{"O1", {"SimplifyShapes"}}};
  f.restartEvery = 500;
  f.startSeconds = 30;
  f.sharedStage = "the import";
  f.freshForks = true;
  f.reproducer = {.language = "python",
                  .runtime = "Python 3.11",
                  .requirements = "pip install vectors",
                  .code = {{"O0", "def run(model_path, feeds):\n    return []\n"}}};
  return f;
}

Model vectorModel() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "vectors";
  m.graph.inputs = {
      ValueInfo::tensor("x", DType::Float32, {2, 3}), ValueInfo::tensor("n", DType::Int64, {}),
      ValueInfo::tensor("b", DType::Bool, {2}), ValueInfo::tensor("s", DType::String, {2})};
  Node cast = Node::make("Cast", {"n"}, {"nf"}, "cast");
  cast.attributes = {Attribute::ofInt("to", 1)};
  m.graph.nodes = {cast, Node::make("Add", {"x", "nf"}, {"y"}, "add")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {2, 3})};
  return m;
}

// A tensor of these raw little-endian bytes.
Tensor raw(DType dtype, Shape shape, std::vector<uint8_t> bytes) {
  Tensor t(dtype, std::move(shape));
  t.bytes() = std::move(bytes);
  return t;
}

Tensor strings(Shape shape, std::vector<std::string> values) {
  Tensor t(DType::String, std::move(shape));
  t.strings() = std::move(values);
  return t;
}

struct Inputs {
  Tensor x = Tensor::fromVector<float>({2, 3}, {0, 0.5f, 1, 1.5f, 2, 2.5f});
  Tensor n = Tensor::scalar<int64_t>(7);
  Tensor b = raw(DType::Bool, {2}, {1, 0});
  Tensor s = strings({2}, {"a", "\xc3\xbcn\xc3\xaf"});
  std::vector<std::pair<std::string, const Tensor*>> list() const {
    return {{"x", &x}, {"n", &n}, {"b", &b}, {"s", &s}};
  }
};

worker::Reply vectorOutputs() {
  worker::Reply r;
  r.kind = worker::kOutputs;
  r.applied = {"FoldConstant"};
  const Tensor half = raw(DType::Float16, {2}, {0x00, 0x3c, 0x00, 0xc0});  // 1, -2
  r.outputs = {{"y", Tensor::fromVector<float>({2, 3}, {7, 7.5f, 8, 8.5f, 9, 9.5f})},
               {"e", Tensor(DType::Int64, {0})},
               {"h", half},
               {"t", strings({1}, {"ok"})}};
  r.attachments = {{"note", std::string("bytes\0\x01", 7)}};
  return r;
}

worker::Reply vectorUnsupported() {
  worker::Reply r;
  r.kind = worker::kUnsupported;
  r.category = "op";
  r.message = "no Loop in the frontend";
  return r;
}

worker::Reply vectorError() {
  worker::Reply r;
  r.kind = worker::kError;
  r.message =
      "compile failed: \xc3\xbcn\xc3\xaf"
      "code";
  r.trace = "Traceback (most recent call last):\n  File \"engine.py\", line 1";
  return r;
}

std::string bodyOf(const wire::Message& m) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  EXPECT_TRUE(m.send(fds[1]));
  ::close(fds[1]);
  const wire::Frame f = wire::readFrame(fds[0], wire::Clock::time_point::max(), UINT64_MAX);
  ::close(fds[0]);
  EXPECT_EQ(f.ending, wire::Ending::Whole);
  return f.body;
}

std::string frameOf(const std::string& body) {
  std::string frame;
  wire::putBytes(frame, body);
  return frame;
}

// Every vector, as this writer makes it.
std::map<std::string, std::string> vectors() {
  const Inputs in;
  const std::string model = serializeModel(vectorModel());
  wire::Message run;
  worker::putRun(run,
                 {.configuration = "O1", .disabled = {"FuseOps"}, .options = R"({"log":true})"},
                 model, in.list());
  std::map<std::string, std::string> out = {{"hello", worker::helloBody()},
                                            {"facts", worker::factsBody(vectorFacts())},
                                            {"run", bodyOf(run)}};
  for (const auto& [name, reply] :
       {std::pair{"outputs", vectorOutputs()}, std::pair{"unsupported", vectorUnsupported()},
        std::pair{"error", vectorError()}}) {
    wire::Message m;
    worker::putReply(m, reply);
    out[name] = bodyOf(m);
  }
  return out;
}

TEST(WorkerProtocol, WritesEveryVectorByteForByte) {
  const auto all = vectors();
  if (std::getenv("NNCHECK_WRITE_VECTORS")) {
    fs::create_directories(kVectors);
    for (const auto& [name, body] : all) writeFileAtomic(kVectors / (name + ".bin"), frameOf(body));
  }
  for (const auto& [name, body] : all)
    EXPECT_EQ(readFile(kVectors / (name + ".bin")), frameOf(body)) << name << ".bin";
}

// A vector's body: its frame less the length, which must say its size.
std::string bodyOfVector(const std::string& name) {
  const std::string frame = readFile(kVectors / (name + ".bin"));
  uint64_t n = 0;
  EXPECT_GE(frame.size(), 8u) << name;
  std::memcpy(&n, frame.data(), 8);
  EXPECT_EQ(n, frame.size() - 8) << name;
  return frame.substr(8);
}

TEST(WorkerProtocol, ReadsEveryVectorBackToItsValues) {
  const worker::Facts facts = worker::readFacts(bodyOfVector("facts"), "facts.bin");
  const worker::Facts want = vectorFacts();
  EXPECT_EQ(facts.name, want.name);
  EXPECT_EQ(facts.version, want.version);
  EXPECT_EQ(facts.configurations, want.configurations);
  EXPECT_EQ(facts.baseline, want.baseline);
  EXPECT_EQ(facts.optimizations, want.optimizations);
  EXPECT_EQ(facts.install, want.install);
  EXPECT_EQ(facts.capabilities.dtypes, want.capabilities.dtypes);
  EXPECT_EQ(facts.capabilities.ops, want.capabilities.ops);
  EXPECT_EQ(facts.capabilities.opWeights, want.capabilities.opWeights);
  EXPECT_EQ(facts.capabilities.opset, want.capabilities.opset);
  EXPECT_FALSE(facts.capabilities.weightsMustBeInitializers);
  EXPECT_EQ(facts.unreported, want.unreported);
  EXPECT_EQ(facts.fixed, want.fixed);
  EXPECT_EQ(facts.restartEvery, 500);
  EXPECT_EQ(facts.startSeconds, 30);
  EXPECT_EQ(facts.sharedStage, want.sharedStage);
  EXPECT_TRUE(facts.freshForks);
  EXPECT_EQ(facts.reproducer.language, want.reproducer.language);
  EXPECT_EQ(facts.reproducer.runtime, want.reproducer.runtime);
  EXPECT_EQ(facts.reproducer.requirements, want.reproducer.requirements);
  EXPECT_EQ(facts.reproducer.code, want.reproducer.code);
  EXPECT_TRUE(facts.capabilities.shapeOperandsMustBeInitializers);

  const std::string runBody = bodyOfVector("run");
  wire::Reader runReader(runBody, "run.bin");
  const worker::Run run = worker::takeRun(runReader);
  EXPECT_EQ(run.request.configuration, "O1");
  EXPECT_EQ(run.request.disabled, std::vector<std::string>{"FuseOps"});
  EXPECT_EQ(run.request.options, R"({"log":true})");
  EXPECT_TRUE(parseModel(run.model, "run.bin") == vectorModel());
  const Inputs in;
  ASSERT_EQ(run.inputs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(run.inputs[i].first, in.list()[i].first);
    EXPECT_TRUE(run.inputs[i].second == *in.list()[i].second) << run.inputs[i].first;
  }

  for (const auto& [name, want] :
       {std::pair{"outputs", vectorOutputs()}, std::pair{"unsupported", vectorUnsupported()},
        std::pair{"error", vectorError()}}) {
    const std::string body = bodyOfVector(name);
    wire::Reader r(body, name);
    const worker::Reply got = worker::takeReply(r);
    EXPECT_EQ(got.kind, want.kind) << name;
    EXPECT_EQ(got.applied, want.applied) << name;
    EXPECT_EQ(got.attachments, want.attachments) << name;
    EXPECT_EQ(got.category, want.category) << name;
    EXPECT_EQ(got.message, want.message) << name;
    EXPECT_EQ(got.trace, want.trace) << name;
    ASSERT_EQ(got.outputs.size(), want.outputs.size()) << name;
    for (const auto& [output, t] : want.outputs) EXPECT_TRUE(got.outputs.at(output) == t) << output;
  }
}

// What a worker may say wrongly is an error naming it, never a crash or an allocation of what a
// claim says: another protocol version, a kind the protocol has not, a tensor claiming more
// than its message holds, a message cut short, JSON that is no object.
TEST(WorkerProtocol, WhatIsNoMessageOfTheProtocolIsAnErrorNamingTheWorker) {
  auto fails = [](const std::function<void()>& read, const std::string& said) {
    try {
      read();
      ADD_FAILURE() << "taken: " << said;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  };
  std::string other = worker::factsBody(vectorFacts());
  other.replace(other.find("\"protocol\":1"), 12, "\"protocol\":2");
  fails([&] { worker::readFacts(other, "worker 'w'"); },
        "worker 'w': speaks the worker protocol version 2; this nncheck speaks version 1");
  fails([&] { worker::readFacts("garbage", "worker 'w'"); },
        "worker 'w': answered hello with what is not the facts of an engine");
  std::string unknownKind = "X";
  fails(
      [&] {
        wire::Reader r(unknownKind, "worker 'w'");
        worker::takeReply(r);
      },
      "worker 'w': replied with a message of kind 88");
  // An output of [1 << 40] floats claimed in a reply of a few bytes.
  std::string huge(1, worker::kOutputs);
  wire::putBytes(huge, R"({"applied":[]})");
  wire::putU64(huge, 1);
  wire::putBytes(huge, "y");
  wire::putI32(huge, 1);
  wire::putU32(huge, 1);
  wire::putI64(huge, int64_t{1} << 40);
  fails(
      [&] {
        wire::Reader r(huge, "worker 'w'");
        worker::takeReply(r);
      },
      "worker 'w': tensor 'y' claims 1099511627776 elements, more than its message holds");
  const std::string outputs = vectors().at("outputs");
  fails(
      [&] {
        wire::Reader r(std::string_view(outputs).substr(0, outputs.size() - 3), "worker 'w'");
        worker::takeReply(r);
      },
      "worker 'w': a message is cut short");
  std::string notObject(1, worker::kUnsupported);
  wire::putBytes(notObject, "[1,2]");
  fails(
      [&] {
        wire::Reader r(notObject, "worker 'w'");
        worker::takeReply(r);
      },
      "worker 'w': the unsupported reply is not a JSON object");
}

}  // namespace
}  // namespace nncheck
