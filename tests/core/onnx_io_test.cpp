#include "nncheck/onnx_io.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "core/files.h"
#include "core/onnx_proto.h"
#include "nncheck/error.h"
#include "test_util.h"

namespace nncheck {
namespace {

namespace fs = std::filesystem;

// Import, export and import again gives the same IR, and export is a fixed point: lossless.
TEST(OnnxIo, EveryNodeTestModelRoundTrips) {
  int n = 0;
  for (const auto& dir : testing::allNodeCases()) {
    std::string bytes = readFile(dir / "model.onnx");
    Model m = parseModel(bytes, dir.string());
    std::string out = serializeModel(m);
    Model back = parseModel(out, "re-export of " + dir.string());
    ASSERT_TRUE(back == m) << dir;
    ASSERT_EQ(serializeModel(back), out) << dir;
    // Semantically the same protobuf: identical when the original used raw_data throughout.
    onnx::ModelProto original;
    original.ParseFromString(bytes);
    EXPECT_EQ(original.graph().node_size(), modelToProto(m).graph().node_size());
    ++n;
  }
  EXPECT_GE(n, 900);
}

TEST(OnnxIo, EveryNodeTestTensorRoundTrips) {
  int roundTripped = 0;
  const auto cases = testing::allNodeCases();
  ASSERT_FALSE(cases.empty()) << "no node test found";
  for (const auto& dir : cases) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.path().extension() != ".pb") continue;
      std::string name;
      Tensor t;
      try {
        t = loadTensor(e.path(), &name);
      } catch (const Error&) {
        continue;  // sequences and optionals are other message types
      }
      Tensor back = parseTensor(serializeTensor(t, name), "memory");
      ASSERT_TRUE(back == t) << e.path();
      ++roundTripped;
    }
  }
  // Most node-test files are tensors: a loader that rejects them all must not pass this test.
  EXPECT_GT(roundTripped, static_cast<int>(cases.size())) << "tensors loaded: " << roundTripped;
}

class MalformedFiles : public ::testing::Test {
 protected:
  testing::TempDir tmp_{"io"};
  fs::path dir_ = tmp_.path();
  fs::path write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return dir_ / name;
  }
};

void expectErrorMentioning(const std::function<void()>& f, const std::string& needle) {
  try {
    f();
    FAIL() << "no exception; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST_F(MalformedFiles, TruncatedModelIsRejectedNamingTheFile) {
  std::string bytes =
      readFile(testing::nodeTestDir() / "test_conv_with_strides_padding" / "model.onnx");
  fs::path p = write("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  expectErrorMentioning([&] { loadModel(p); }, "truncated.onnx");
}

TEST_F(MalformedFiles, TensorFileGivenAsModelIsRejected) {
  std::string tensor =
      readFile(testing::nodeTestDir() / "test_abs" / "test_data_set_0" / "input_0.pb");
  fs::path p = write("model.onnx", tensor);
  expectErrorMentioning([&] { loadModel(p); }, "not an ONNX model");
}

TEST_F(MalformedFiles, ModelGivenAsTensorIsRejected) {
  fs::path p = write("input_0.pb", readFile(testing::nodeTestDir() / "test_abs" / "model.onnx"));
  expectErrorMentioning([&] { loadTensor(p); }, "not an ONNX TensorProto");
}

TEST_F(MalformedFiles, MissingFileAndRawDataOfTheWrongSizeAreRejected) {
  expectErrorMentioning([&] { loadModel(dir_ / "absent.onnx"); }, "absent.onnx: no such file");
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(3);
  p.set_raw_data(std::string(8, '\0'));
  expectErrorMentioning([&] { parseTensor(p.SerializeAsString(), "t.pb"); }, "needs 12");
}

TEST_F(MalformedFiles, SavesAreAtomicAndLeaveNoTemporaryFile) {
  Tensor t = Tensor::fromVector<float>({2}, {1.5f, -2.0f});
  saveTensor(t, "x", dir_ / "x.pb");
  std::string name;
  EXPECT_TRUE(loadTensor(dir_ / "x.pb", &name) == t);
  EXPECT_EQ(name, "x");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
  expectErrorMentioning([&] { saveTensor(t, "x", dir_ / "no_such_dir" / "x.pb"); }, "no_such_dir");
}

// --- Issue 46, item 1: no model refers to a file ---

// A tensor whose data lives in `location`, as ONNX's external data format writes it.
void refersTo(onnx::TensorProto* t, const std::string& name, const std::string& location) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  auto* length = t->add_external_data();
  length->set_key("length");
  length->set_value("16");
}

// Relu(x) with an initializer: a model nncheck takes, before each place gets a file reference.
onnx::ModelProto plainModel() {
  Model m;
  m.opsets = {{"", 17}};
  m.graph.name = "g";
  m.graph.inputs = {ValueInfo::tensor("x", DType::Float32, {4})};
  m.graph.initializers = {{"w", Tensor::fromVector<float>({4}, {1, 2, 3, 4}), ""}};
  m.graph.nodes = {Node::make("Add", {"x", "w"}, {"y"}, "add")};
  m.graph.outputs = {ValueInfo::tensor("y", DType::Float32, {4})};
  return modelToProto(m);
}

// Before, external data was refused in dense initializers only: a sparse initializer's went to
// the engine untouched, and ORT read ./secret.txt for it, one byte per case.
TEST(OnnxIo, AFileReferenceAnywhereInAModelIsRefusedNamingTheTensor) {
  struct Place {
    std::string what, tensor;
    std::function<void(onnx::ModelProto&)> plant;
  };
  const std::vector<Place> places = {
      {"a dense initializer", "w",
       [](onnx::ModelProto& p) {
         refersTo(p.mutable_graph()->mutable_initializer(0), "w", "secret.txt");
       }},
      {"a sparse initializer's values", "sparse_w",
       [](onnx::ModelProto& p) {
         auto* s = p.mutable_graph()->add_sparse_initializer();
         refersTo(s->mutable_values(), "sparse_w", "secret.txt");
         s->add_dims(4);
       }},
      {"a sparse initializer's indices", "sparse_w_indices",
       [](onnx::ModelProto& p) {
         auto* s = p.mutable_graph()->add_sparse_initializer();
         s->mutable_values()->set_name("sparse_w");
         s->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
         refersTo(s->mutable_indices(), "sparse_w_indices", "secret.txt");
       }},
      {"a Constant's tensor attribute", "c",
       [](onnx::ModelProto& p) {
         auto* n = p.mutable_graph()->add_node();
         n->set_op_type("Constant");
         n->add_output("c");
         auto* a = n->add_attribute();
         a->set_name("value");
         a->set_type(onnx::AttributeProto::TENSOR);
         refersTo(a->mutable_t(), "c", "secret.txt");
       }},
      {"a Constant's sparse tensor attribute", "sv",
       [](onnx::ModelProto& p) {
         auto* n = p.mutable_graph()->add_node();
         n->set_op_type("Constant");
         n->add_output("c");
         auto* a = n->add_attribute();
         a->set_name("sparse_value");
         a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
         refersTo(a->mutable_sparse_tensor()->mutable_values(), "sv", "secret.txt");
       }},
      {"a list of tensors attribute", "listed",
       [](onnx::ModelProto& p) {
         auto* a = p.mutable_graph()->mutable_node(0)->add_attribute();
         a->set_name("custom");
         a->set_type(onnx::AttributeProto::TENSORS);
         refersTo(a->add_tensors(), "listed", "secret.txt");
       }},
      {"a nested graph's initializer", "inner",
       [](onnx::ModelProto& p) {
         auto* n = p.mutable_graph()->add_node();
         n->set_op_type("If");
         auto* a = n->add_attribute();
         a->set_name("then_branch");
         a->set_type(onnx::AttributeProto::GRAPH);
         refersTo(a->mutable_g()->add_initializer(), "inner", "../secret.txt");
       }},
      {"a list of graphs attribute", "deep",
       [](onnx::ModelProto& p) {
         auto* a = p.mutable_graph()->mutable_node(0)->add_attribute();
         a->set_name("bodies");
         a->set_type(onnx::AttributeProto::GRAPHS);
         refersTo(a->add_graphs()->add_initializer(), "deep", "/etc/secret.txt");
       }},
      {"a function's node", "in_function",
       [](onnx::ModelProto& p) {
         auto* f = p.add_functions();
         f->set_name("F");
         f->set_domain("custom");
         auto* a = f->add_node()->add_attribute();
         a->set_name("value");
         a->set_type(onnx::AttributeProto::TENSOR);
         refersTo(a->mutable_t(), "in_function", "secret.txt");
       }},
      {"training information", "trained",
       [](onnx::ModelProto& p) {
         refersTo(p.add_training_info()->mutable_initialization()->add_initializer(), "trained",
                  "secret.txt");
       }},
  };
  for (const Place& place : places) {
    onnx::ModelProto p = plainModel();
    place.plant(p);
    try {
      parseModel(p.SerializeAsString(), "hostile.onnx");
      ADD_FAILURE() << place.what << ": the file reference was taken";
    } catch (const Error& e) {
      const std::string said = e.what();
      EXPECT_NE(said.find("hostile.onnx: tensor '" + place.tensor + "'"), std::string::npos)
          << place.what << ": " << said;
      EXPECT_NE(said.find("secret.txt"), std::string::npos) << place.what << ": " << said;
      EXPECT_NE(said.find("takes no model that refers to files"), std::string::npos) << said;
    }
  }
  EXPECT_NO_THROW(parseModel(plainModel().SerializeAsString(), "plain.onnx"));
}

// A model made in memory holds what the IR keeps as protobuf bytes (sparse initializers, opaque
// attributes, functions): checked before any engine gets it.
// Before, a name that was no UTF-8 reached the reproducers (reproduce.py did not parse) and
// every printer. ONNX's text is UTF-8, so such a model or tensor is refused as it is read.
TEST(OnnxIo, TextThatIsNoUtf8IsRefusedNamingWhere) {
  onnx::ModelProto p = plainModel();
  p.mutable_graph()->mutable_node(0)->set_name("add\xff\xfe");
  const std::string model = testing::errorOf([&] { parseModel(p.SerializeAsString(), "m.onnx"); });
  EXPECT_NE(model.find("m.onnx: model.graph.node[0].name 'add\\xff\\xfe' is not UTF-8 (byte 3)"),
            std::string::npos)
      << model;
  onnx::TensorProto t = tensorToProto(Tensor::fromVector<float>({1}, {1}), "x\xc0\x80");
  const std::string tensor =
      testing::errorOf([&] { parseTensor(t.SerializeAsString(), "input_0.pb"); });
  EXPECT_NE(tensor.find("input_0.pb: tensor.name"), std::string::npos) << tensor;
  EXPECT_NE(tensor.find("is not UTF-8 (byte 1)"), std::string::npos) << tensor;
  // What is UTF-8 reads, whatever its characters.
  p.mutable_graph()->mutable_node(0)->set_name("add \xe2\x80\xa8 \xf0\x9f\x98\x80");
  EXPECT_NO_THROW(parseModel(p.SerializeAsString(), "m.onnx"));
}

TEST(OnnxIo, AModelMadeInMemoryThatRefersToAFileIsRefused) {
  Model m = parseModel(plainModel().SerializeAsString(), "plain.onnx");
  EXPECT_NO_THROW(refuseFileReferences(m, "isolated run"));
  onnx::GraphProto rest;
  refersTo(rest.add_sparse_initializer()->mutable_values(), "sparse_w", "secret.txt");
  Model sparse = m;
  sparse.graph.opaque = rest.SerializeAsString();
  try {
    refuseFileReferences(sparse, "isolated run");
    ADD_FAILURE() << "a sparse initializer's file reference was taken";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("isolated run: tensor 'sparse_w' (graph.sparse_initializer"),
        std::string::npos)
        << e.what();
  }
  // In a body: an If whose branch keeps such a sparse initializer.
  Model nested = m;
  Graph branch;
  branch.name = "then";
  branch.opaque = rest.SerializeAsString();
  Attribute a;
  a.name = "then_branch";
  a.kind = Attribute::Kind::Graph;
  a.graphs = {branch};
  Node n = Node::make("If", {"x"}, {"z"}, "if");
  n.attributes = {a};
  nested.graph.nodes.push_back(n);
  EXPECT_THROW(refuseFileReferences(nested, "isolated run"), Error);
}

}  // namespace
}  // namespace nncheck
