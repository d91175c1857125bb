#include "nncheck/onnx_io.h"

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>

#include "core/files.h"
#include "core/onnx_proto.h"
#include "core/utf8.h"
#include "nncheck/error.h"

namespace nncheck {
namespace {

static_assert(std::endian::native == std::endian::little, "nncheck assumes a little-endian host");

template <class T>
void appendRaw(std::vector<uint8_t>& bytes, size_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

// Fills t's storage from the typed repeated fields of a TensorProto.
void fromTypedFields(const onnx::TensorProto& p, Tensor& t, std::string_view origin) {
  const size_t n = static_cast<size_t>(t.size());
  auto need = [&](size_t have, const char* field) {
    if (have != n)
      throw Error(std::string(origin) + ": TensorProto of shape " + shapeToString(t.shape()) +
                  " needs " + std::to_string(n) + " values in " + field + ", has " +
                  std::to_string(have));
  };
  // Complex values take two numbers each (real, imaginary): an odd count is malformed.
  auto needPairs = [&](size_t have, const char* field) {
    if (have != 2 * n)
      throw Error(std::string(origin) + ": complex TensorProto of shape " +
                  shapeToString(t.shape()) + " needs " + std::to_string(2 * n) +
                  " values (real and imaginary parts) in " + field + ", has " +
                  std::to_string(have));
  };
  auto& b = t.bytes();
  switch (t.dtype()) {
    case DType::Float32:
      need(p.float_data_size(), "float_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, p.float_data(i));
      break;
    case DType::Complex64:
      needPairs(p.float_data_size(), "float_data");
      for (size_t i = 0; i < 2 * n; ++i) appendRaw(b, i, p.float_data(i));
      break;
    case DType::Float64:
      need(p.double_data_size(), "double_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, p.double_data(i));
      break;
    case DType::Complex128:
      needPairs(p.double_data_size(), "double_data");
      for (size_t i = 0; i < 2 * n; ++i) appendRaw(b, i, p.double_data(i));
      break;
    case DType::Int64:
      need(p.int64_data_size(), "int64_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, p.int64_data(i));
      break;
    case DType::UInt32:
      need(p.uint64_data_size(), "uint64_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, static_cast<uint32_t>(p.uint64_data(i)));
      break;
    case DType::UInt64:
      need(p.uint64_data_size(), "uint64_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, p.uint64_data(i));
      break;
    case DType::Int32:
      need(p.int32_data_size(), "int32_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, p.int32_data(i));
      break;
    case DType::Int16:
    case DType::UInt16:
    case DType::Float16:
    case DType::BFloat16:
      need(p.int32_data_size(), "int32_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, static_cast<uint16_t>(p.int32_data(i)));
      break;
    case DType::Int8:
    case DType::UInt8:
      need(p.int32_data_size(), "int32_data");
      for (size_t i = 0; i < n; ++i) appendRaw(b, i, static_cast<uint8_t>(p.int32_data(i)));
      break;
    case DType::Bool:
      need(p.int32_data_size(), "int32_data");
      for (size_t i = 0; i < n; ++i) b[i] = p.int32_data(i) != 0;
      break;
    case DType::String:
      need(p.string_data_size(), "string_data");
      for (size_t i = 0; i < n; ++i) t.strings()[i] = p.string_data(i);
      break;
    case DType::Undefined:
      break;
  }
}

bool hasTypedFields(const onnx::TensorProto& p) {
  return p.float_data_size() || p.int32_data_size() || p.string_data_size() ||
         p.int64_data_size() || p.double_data_size() || p.uint64_data_size();
}

onnx::TypeProto typeToProto(const ValueInfo& v) {
  onnx::TypeProto tp;
  if (!v.opaqueType.empty()) {
    tp.ParseFromString(v.opaqueType);
    return tp;
  }
  auto* tt = tp.mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(v.dtype));
  if (v.dims) {
    auto* shape = tt->mutable_shape();
    for (const Dim& d : *v.dims) {
      auto* pd = shape->add_dim();
      if (d.value)
        pd->set_dim_value(*d.value);
      else if (!d.param.empty())
        pd->set_dim_param(d.param);
      if (!d.denotation.empty()) pd->set_denotation(d.denotation);
    }
  }
  return tp;
}

ValueInfo valueInfoFromProto(const onnx::ValueInfoProto& p) {
  ValueInfo v;
  v.name = p.name();
  v.docString = p.doc_string();
  if (!p.has_type()) return v;
  const auto& tp = p.type();
  // Anything but a plain tensor type is kept verbatim.
  if (!tp.has_tensor_type() || !tp.denotation().empty()) {
    v.opaqueType = tp.SerializeAsString();
    if (v.opaqueType.empty()) v.opaqueType = std::string(1, '\0');  // keep "typed but empty"
    return v;
  }
  v.dtype = static_cast<DType>(tp.tensor_type().elem_type());
  if (tp.tensor_type().has_shape()) {
    v.dims.emplace();
    for (const auto& d : tp.tensor_type().shape().dim()) {
      Dim dim;
      if (d.has_dim_value())
        dim.value = d.dim_value();
      else if (d.has_dim_param())
        dim.param = d.dim_param();
      dim.denotation = d.denotation();
      v.dims->push_back(std::move(dim));
    }
  }
  return v;
}

onnx::ValueInfoProto valueInfoToProto(const ValueInfo& v) {
  onnx::ValueInfoProto p;
  p.set_name(v.name);
  if (!v.docString.empty()) p.set_doc_string(v.docString);
  if (v.opaqueType == std::string(1, '\0')) {
    p.mutable_type();
  } else if (v.dtype != DType::Undefined || v.dims || !v.opaqueType.empty()) {
    *p.mutable_type() = typeToProto(v);
  }
  return p;
}

// Graphs and attributes nest (a Loop's body is an attribute holding a graph).
Graph graphFromProto(const onnx::GraphProto& g, std::string_view origin);
onnx::GraphProto graphToProto(const Graph& g);

Attribute attributeFromProto(const onnx::AttributeProto& p, std::string_view origin) {
  Attribute a;
  a.name = p.name();
  a.docString = p.doc_string();
  if (!p.ref_attr_name().empty()) {
    a.kind = Attribute::Kind::Opaque;
    a.opaque = p.SerializeAsString();
    return a;
  }
  switch (p.type()) {
    case onnx::AttributeProto::INT:
      a.kind = Attribute::Kind::Int;
      a.i = p.i();
      break;
    case onnx::AttributeProto::FLOAT:
      a.kind = Attribute::Kind::Float;
      a.f = p.f();
      break;
    case onnx::AttributeProto::STRING:
      a.kind = Attribute::Kind::String;
      a.s = p.s();
      break;
    case onnx::AttributeProto::TENSOR:
      a.kind = Attribute::Kind::Tensor;
      a.t = tensorFromProto(p.t(), std::string(origin) + " attribute " + p.name());
      break;
    case onnx::AttributeProto::INTS:
      a.kind = Attribute::Kind::Ints;
      a.ints.assign(p.ints().begin(), p.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      a.kind = Attribute::Kind::Floats;
      a.floats.assign(p.floats().begin(), p.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      a.kind = Attribute::Kind::Strings;
      a.strings.assign(p.strings().begin(), p.strings().end());
      break;
    case onnx::AttributeProto::GRAPH:
      a.kind = Attribute::Kind::Graph;
      a.graphs.push_back(graphFromProto(p.g(), std::string(origin) + " attribute " + p.name()));
      break;
    default:
      a.kind = Attribute::Kind::Opaque;
      a.opaque = p.SerializeAsString();
      break;
  }
  return a;
}

onnx::AttributeProto attributeToProto(const Attribute& a) {
  onnx::AttributeProto p;
  if (a.kind == Attribute::Kind::Opaque) {
    p.ParseFromString(a.opaque);
    return p;
  }
  p.set_name(a.name);
  if (!a.docString.empty()) p.set_doc_string(a.docString);
  switch (a.kind) {
    case Attribute::Kind::Int:
      p.set_type(onnx::AttributeProto::INT);
      p.set_i(a.i);
      break;
    case Attribute::Kind::Float:
      p.set_type(onnx::AttributeProto::FLOAT);
      p.set_f(a.f);
      break;
    case Attribute::Kind::String:
      p.set_type(onnx::AttributeProto::STRING);
      p.set_s(a.s);
      break;
    case Attribute::Kind::Tensor:
      p.set_type(onnx::AttributeProto::TENSOR);
      *p.mutable_t() = tensorToProto(a.t, "");
      break;
    case Attribute::Kind::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (int64_t v : a.ints) p.add_ints(v);
      break;
    case Attribute::Kind::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (float v : a.floats) p.add_floats(v);
      break;
    case Attribute::Kind::Strings:
      p.set_type(onnx::AttributeProto::STRINGS);
      for (const auto& v : a.strings) p.add_strings(v);
      break;
    case Attribute::Kind::Graph:
      p.set_type(onnx::AttributeProto::GRAPH);
      *p.mutable_g() = graphToProto(a.graph());
      break;
    case Attribute::Kind::Opaque:
      break;
  }
  return p;
}

Graph graphFromProto(const onnx::GraphProto& g, std::string_view origin) {
  Graph out;
  out.name = g.name();
  out.docString = g.doc_string();
  for (const auto& n : g.node()) {
    Node node;
    node.opType = n.op_type();
    node.name = n.name();
    node.domain = n.domain();
    node.docString = n.doc_string();
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) node.attributes.push_back(attributeFromProto(a, origin));
    out.nodes.push_back(std::move(node));
  }
  for (const auto& v : g.input()) out.inputs.push_back(valueInfoFromProto(v));
  for (const auto& v : g.output()) out.outputs.push_back(valueInfoFromProto(v));
  for (const auto& v : g.value_info()) out.valueInfos.push_back(valueInfoFromProto(v));
  for (const auto& t : g.initializer())
    out.initializers.push_back(
        {t.name(), tensorFromProto(t, std::string(origin) + " initializer " + t.name()),
         t.doc_string()});
  onnx::GraphProto rest;
  *rest.mutable_sparse_initializer() = g.sparse_initializer();
  *rest.mutable_quantization_annotation() = g.quantization_annotation();
  out.opaque = rest.SerializeAsString();
  return out;
}

onnx::GraphProto graphToProto(const Graph& g) {
  onnx::GraphProto p;
  if (!g.opaque.empty()) p.ParseFromString(g.opaque);
  p.set_name(g.name);
  if (!g.docString.empty()) p.set_doc_string(g.docString);
  for (const Node& n : g.nodes) {
    auto* pn = p.add_node();
    for (const auto& i : n.inputs) pn->add_input(i);
    for (const auto& o : n.outputs) pn->add_output(o);
    if (!n.name.empty()) pn->set_name(n.name);
    pn->set_op_type(n.opType);
    if (!n.domain.empty()) pn->set_domain(n.domain);
    for (const Attribute& a : n.attributes) *pn->add_attribute() = attributeToProto(a);
    if (!n.docString.empty()) pn->set_doc_string(n.docString);
  }
  for (const Initializer& i : g.initializers) {
    auto* t = p.add_initializer();
    *t = tensorToProto(i.value, i.name);
    if (!i.docString.empty()) t->set_doc_string(i.docString);
  }
  for (const ValueInfo& v : g.inputs) *p.add_input() = valueInfoToProto(v);
  for (const ValueInfo& v : g.outputs) *p.add_output() = valueInfoToProto(v);
  for (const ValueInfo& v : g.valueInfos) *p.add_value_info() = valueInfoToProto(v);
  return p;
}

}  // namespace

bool forEachTensorIn(const google::protobuf::Message& m, const std::string& path,
                     const std::function<bool(const onnx::TensorProto&, const std::string&)>& f) {
  if (m.GetDescriptor() == onnx::TensorProto::descriptor() &&
      f(static_cast<const onnx::TensorProto&>(m), path))
    return true;
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (!field->is_repeated()) {
      if (forEachTensorIn(r->GetMessage(m, field), path + "." + field->name(), f)) return true;
      continue;
    }
    for (int i = 0; i < r->FieldSize(m, field); ++i)
      if (forEachTensorIn(r->GetRepeatedMessage(m, field, i),
                          path + "." + field->name() + "[" + std::to_string(i) + "]", f))
        return true;
  }
  return false;
}

namespace {

// The first tensor at or below `m` whose data lives in a file (a TensorProto with
// data_location EXTERNAL or external_data entries), described with the fields that lead to it
// from `path`. An engine handed such a model reads the file, relative to its working folder.
std::optional<std::string> fileReferenceIn(const google::protobuf::Message& m,
                                           const std::string& path) {
  std::optional<std::string> found;
  forEachTensorIn(m, path, [&](const onnx::TensorProto& t, const std::string& at) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL && t.external_data_size() == 0)
      return false;
    std::string location;
    for (const auto& kv : t.external_data())
      if (kv.key() == "location") location = kv.value();
    found = "tensor '" + t.name() + "' (" + at + ") keeps its data in " +
            (location.empty() ? std::string("an external file") : "the file '" + location + "'");
    return true;
  });
  return found;
}

// What the IR keeps as protobuf bytes (model.opaque: functions and training information;
// graph.opaque: sparse initializers; opaque attributes: sparse tensors, tensor and graph lists),
// walked for file references; its own tensors hold their data.
template <class Proto>
std::optional<std::string> fileReferenceInBytes(const std::string& bytes, const std::string& path) {
  if (bytes.empty()) return std::nullopt;
  Proto p;
  if (!p.ParseFromString(bytes)) return std::nullopt;  // nothing that parses reaches an engine
  return fileReferenceIn(p, path);
}

std::optional<std::string> fileReferenceIn(const Graph& g, const std::string& path) {
  if (auto found = fileReferenceInBytes<onnx::GraphProto>(g.opaque, path)) return found;
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (const Attribute& a : g.nodes[n].attributes) {
      const std::string at = path + ".node[" + std::to_string(n) + "].attribute '" + a.name + "'";
      if (a.kind == Attribute::Kind::Opaque)
        if (auto found = fileReferenceInBytes<onnx::AttributeProto>(a.opaque, at)) return found;
      for (const Graph& sub : a.graphs)
        if (auto found = fileReferenceIn(sub, at)) return found;
    }
  return std::nullopt;
}

// The first text field (protobuf's `string`, every name, op type, domain and doc string of
// ONNX's messages) at or below `m` that is not UTF-8, which ONNX requires of them, described
// with the fields that lead to it: names reach scripts, pictures and terminals.
std::optional<std::string> nonUtf8TextIn(const google::protobuf::Message& m,
                                         const std::string& path) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* field : fields) {
    const bool text = field->type() == FieldDescriptor::TYPE_STRING;
    if (!text && field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const int n = field->is_repeated() ? r->FieldSize(m, field) : 1;
    for (int i = 0; i < n; ++i) {
      std::string at = path;  // (appended: GCC 12 warns falsely on `"a" + s` of strings)
      at.append(".").append(field->name());
      if (field->is_repeated()) at.append("[").append(std::to_string(i)).append("]");
      std::string scratch;
      if (text) {
        const std::string& value = field->is_repeated()
                                       ? r->GetRepeatedStringReference(m, field, i, &scratch)
                                       : r->GetStringReference(m, field, &scratch);
        if (const std::optional<size_t> bad = firstInvalidUtf8(value))
          return at + " '" + escapeInvisible(value) + "' is not UTF-8 (byte " +
                 std::to_string(*bad) + ")";
        continue;
      }
      const google::protobuf::Message& sub =
          field->is_repeated() ? r->GetRepeatedMessage(m, field, i) : r->GetMessage(m, field);
      if (std::optional<std::string> found = nonUtf8TextIn(sub, at)) return found;
    }
  }
  return std::nullopt;
}

std::string refusedFileReference(std::string_view origin, const std::string& reference) {
  return std::string(origin) + ": " + reference +
         "; nncheck takes no model that refers to files (an engine would read them from "
         "wherever it runs), so keep every tensor's data inside the model";
}

}  // namespace

void refuseFileReferences(const Model& model, std::string_view origin) {
  std::optional<std::string> found = fileReferenceInBytes<onnx::ModelProto>(model.opaque, "model");
  if (!found) found = fileReferenceIn(model.graph, "graph");
  if (found) throw Error(refusedFileReference(origin, *found));
}

Tensor tensorFromProto(const onnx::TensorProto& p, std::string_view origin) {
  const std::string where(origin);
  if (!isKnownDType(p.data_type()) || p.data_type() == 0)
    throw Error(where + ": TensorProto has unknown data_type " + std::to_string(p.data_type()));
  if (p.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error(where + ": tensor '" + p.name() + "' stores its data externally; unsupported");
  if (p.has_segment()) throw Error(where + ": segmented TensorProto is unsupported");
  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw Error(where + ": TensorProto has negative dim in " + shapeToString(shape));
  // Every element takes at least a byte of the message, so a claim of more elements than the
  // message has bytes is false: refused before anything that size is allocated.
  int64_t count = 0;
  try {
    count = elementCount(shape);
  } catch (const std::exception& e) {
    throw Error(where + ": " + e.what());
  }
  if (count > static_cast<int64_t>(p.ByteSizeLong()))
    throw Error(where + ": TensorProto claims " + std::to_string(count) + " elements (shape " +
                shapeToString(shape) + ") but holds only " + std::to_string(p.ByteSizeLong()) +
                " bytes");
  Tensor t;
  try {
    t = Tensor(static_cast<DType>(p.data_type()), shape);
  } catch (const std::exception& e) {
    throw Error(where + ": " + e.what());
  }
  if (p.has_raw_data()) {
    if (t.dtype() == DType::String) throw Error(where + ": string tensor with raw_data");
    if (hasTypedFields(p))
      throw Error(where + ": TensorProto has both raw_data and typed data fields");
    if (p.raw_data().size() != t.bytes().size())
      throw Error(where + ": raw_data holds " + std::to_string(p.raw_data().size()) +
                  " bytes, shape " + shapeToString(shape) + " of " +
                  std::string(dtypeName(t.dtype())) + " needs " + std::to_string(t.bytes().size()));
    std::memcpy(t.bytes().data(), p.raw_data().data(), t.bytes().size());
    if (t.dtype() == DType::Bool)
      for (auto& b : t.bytes()) b = b != 0;
  } else {
    fromTypedFields(p, t, origin);
  }
  return t;
}

onnx::TensorProto tensorToProto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  for (int64_t d : t.shape()) p.add_dims(d);
  p.set_data_type(static_cast<int32_t>(t.dtype()));
  if (!name.empty()) p.set_name(name);
  if (t.dtype() == DType::String) {
    for (const auto& s : t.strings()) p.add_string_data(s);
  } else {
    p.set_raw_data(std::string(t.bytes().begin(), t.bytes().end()));
  }
  return p;
}

Model modelFromProto(const onnx::ModelProto& p) {
  Model m;
  m.irVersion = p.ir_version();
  for (const auto& o : p.opset_import()) m.opsets.push_back({o.domain(), o.version()});
  m.producerName = p.producer_name();
  m.producerVersion = p.producer_version();
  m.domain = p.domain();
  m.modelVersion = p.model_version();
  m.docString = p.doc_string();
  for (const auto& kv : p.metadata_props()) m.metadata.emplace_back(kv.key(), kv.value());
  m.graph = graphFromProto(p.graph(), "model");
  onnx::ModelProto rest;
  *rest.mutable_functions() = p.functions();
  *rest.mutable_training_info() = p.training_info();
  m.opaque = rest.SerializeAsString();
  return m;
}

onnx::ModelProto modelToProto(const Model& m) {
  onnx::ModelProto p;
  if (!m.opaque.empty()) p.ParseFromString(m.opaque);
  p.set_ir_version(m.irVersion);
  for (const auto& o : m.opsets) {
    auto* op = p.add_opset_import();
    op->set_domain(o.domain);
    op->set_version(o.version);
  }
  if (!m.producerName.empty()) p.set_producer_name(m.producerName);
  if (!m.producerVersion.empty()) p.set_producer_version(m.producerVersion);
  if (!m.domain.empty()) p.set_domain(m.domain);
  if (m.modelVersion) p.set_model_version(m.modelVersion);
  if (!m.docString.empty()) p.set_doc_string(m.docString);
  for (const auto& [k, v] : m.metadata) {
    auto* kv = p.add_metadata_props();
    kv->set_key(k);
    kv->set_value(v);
  }
  *p.mutable_graph() = graphToProto(m.graph);
  return p;
}

Model parseModel(const std::string& bytes, std::string_view origin) {
  onnx::ModelProto p;
  if (bytes.empty()) throw Error(std::string(origin) + ": empty file, not an ONNX model");
  if (!p.ParseFromString(bytes))
    throw Error(std::string(origin) +
                ": cannot parse as an ONNX ModelProto (truncated or not an ONNX model)");
  if (!p.has_graph() || p.ir_version() == 0 || !p.GetReflection()->GetUnknownFields(p).empty())
    throw Error(std::string(origin) +
                ": not an ONNX model (no graph or ir_version, or unknown fields)");
  // Before anything else reads it: a dense initializer's reference would be refused below too,
  // but one in a sparse initializer, an attribute or a function would pass through untouched.
  if (const std::optional<std::string> found = fileReferenceIn(p, "model"))
    throw Error(refusedFileReference(origin, *found));
  if (const std::optional<std::string> found = nonUtf8TextIn(p, "model"))
    throw Error(std::string(origin) + ": " + *found + "; ONNX's names and text are UTF-8");
  try {
    return modelFromProto(p);
  } catch (const Error& e) {
    throw Error(std::string(origin) + ": " + e.what());
  }
}

std::string serializeModel(const Model& m) {
  std::string out;
  modelToProto(m).SerializeToString(&out);
  return out;
}

namespace {
// A TensorProto as parsed from a file or bytes: `parsed` says whether protobuf took it.
Tensor tensorFromParsed(bool parsed, const onnx::TensorProto& p, std::string_view origin,
                        std::string* name) {
  if (!parsed) throw Error(std::string(origin) + ": cannot parse as an ONNX TensorProto");
  // A message of another type usually parses, leaving unknown fields or no data type.
  if (!p.GetReflection()->GetUnknownFields(p).empty() || p.data_type() == 0)
    throw Error(std::string(origin) + ": not an ONNX TensorProto (wrong message type?)");
  if (const std::optional<std::string> found = nonUtf8TextIn(p, "tensor"))
    throw Error(std::string(origin) + ": " + *found + "; ONNX's names and text are UTF-8");
  if (name) *name = p.name();
  return tensorFromProto(p, origin);
}
}  // namespace

Tensor parseTensor(const std::string& bytes, std::string_view origin, std::string* name) {
  onnx::TensorProto p;
  const bool parsed = p.ParseFromString(bytes);
  return tensorFromParsed(parsed, p, origin, name);
}

std::string serializeTensor(const Tensor& t, const std::string& name) {
  std::string out;
  tensorToProto(t, name).SerializeToString(&out);
  return out;
}

Model loadModel(const std::filesystem::path& path) {
  return parseModel(readFile(path), path.string());
}

void saveModel(const Model& m, const std::filesystem::path& path) {
  writeFileAtomic(path, serializeModel(m));
}

Tensor loadTensor(const std::filesystem::path& path, std::string* name, Links links) {
  // Parsed as it is read: a large tensor's bytes are held twice (the message, the tensor), not
  // three times (the file's bytes too).
  const CheckedFile file(path, links, kMaxFileBytes);
  google::protobuf::io::FileInputStream in(file.fd());
  onnx::TensorProto p;
  const bool parsed = p.ParseFromZeroCopyStream(&in) && in.GetErrno() == 0;
  return tensorFromParsed(parsed, p, path.string(), name);
}

void saveTensor(const Tensor& t, const std::string& name, const std::filesystem::path& path) {
  writeFileAtomic(path, serializeTensor(t, name));
}

}  // namespace nncheck
