// The OpenCV DNN adapter: its own target (nncheck::opencv), built when CMake finds OpenCV's DNN
// module.
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>

#include "nncheck/engine.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/opencv.h"
#include "opencv/opencv_reproducer.h"

namespace nncheck::opencv {

std::string Config::describe() const {
  return std::string(target == Target::Cpu ? "cpu" : "opencl") + ", fusion " +
         (fusion ? "on" : "off");
}

std::string Config::key() const {
  return std::string("target=") + (target == Target::Cpu ? "cpu" : "opencl") +
         ",fusion=" + (fusion ? "on" : "off");
}

Config Config::parse(const std::string& text) {
  Config c;
  const ConfigText t("opencv", text, "fusion=on|off, target=cpu|opencl");
  for (const ConfigText::Item& item : t.items()) {
    if (item.key == "fusion")
      c.fusion = t.onOff(item);
    else if (item.key == "target")
      c.target = t.choice(item, {"cpu", "opencl"}) == 0 ? Target::Cpu : Target::OpenCL;
    else
      t.reject(item);
  }
  return c;
}

Backend::Backend(Config config) : config_(config) {
  // The importer logs every rejected node to stderr; the message comes back in the exception.
  cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
}

std::string Backend::name() const { return "opencv (" + config_.describe() + ")"; }

Capabilities Backend::baseCapabilities() {
  Capabilities caps;
  caps.dtypes = {DType::Float32};
  caps.opset = 13;  // OpenCV 4.6 reads any opset but behaves like opset 11; 13 is our oldest
  caps.weightsMustBeInitializers = true;
  return caps;
}

Capabilities Backend::capabilities() const {
  static const std::vector<std::pair<std::string, double>> kProbed = {
#include "opencv/opencv_capabilities.inc"
  };
  return baseCapabilities().withProbedOps(kProbed);
}

std::vector<std::string> Backend::unreportedOptimizations() const {
  return config_.fusion ? std::vector<std::string>{"fusion"} : std::vector<std::string>{};
}

std::vector<Config> configurations() {
  std::vector<Config> out = {{true, Target::Cpu}, {false, Target::Cpu}};
  if (cv::ocl::haveOpenCL() && cv::ocl::useOpenCL()) {  // a runtime and a usable device
    out.push_back({true, Target::OpenCL});
    out.push_back({false, Target::OpenCL});
  }
  return out;
}

namespace {

// A 1-D input becomes the Mat OpenCV builds from one dim, [n, 1] (4.6 has no 1-D Mat). Its ONNX
// importer knows the input's declared shape, and layers honour it (ONNX's test_mul_bcast and
// test_div_bcast, [3, 4, 5] with [5], pass), so a layer that broadcasts it as a column instead
// (a campaign's Mul([2], [1, 2]) came back [2, 2]) is OpenCV's inconsistency, not this adapter's.
cv::Mat toMat(const Tensor& t, const std::string& name) {
  if (t.dtype() != DType::Float32)
    throw Unsupported("engine", "opencv: input '" + name + "' is " +
                                    std::string(dtypeName(t.dtype())) +
                                    "; only float32 is supported");
  std::vector<int> dims(t.shape().begin(), t.shape().end());
  if (dims.empty()) dims = {1};
  cv::Mat m(static_cast<int>(dims.size()), dims.data(), CV_32F);
  if (!t.bytes().empty()) std::memcpy(m.data, t.bytes().data(), t.bytes().size());
  return m;
}

// A cv::Mat has at least two dims, so a scalar or 1-D output comes back as [1, n] or [n, 1]: the
// declared shape is restored when the element count agrees. Higher ranks are kept as OpenCV
// gives them, so a wrong shape shows.
Tensor fromMat(const cv::Mat& m, const ValueInfo& declared) {
  const std::string& name = declared.name;
  if (m.depth() != CV_32F) throw Error("opencv: output '" + name + "' is not float32");
  cv::Mat c = m.isContinuous() ? m : m.clone();
  Shape shape;
  for (int i = 0; i < c.dims; ++i) shape.push_back(c.size[i]);
  if (std::optional<Shape> want = declared.shape();
      want && want->size() < 2 && elementCount(*want) == static_cast<int64_t>(c.total()))
    shape = *want;
  Tensor t(DType::Float32, shape);
  if (static_cast<size_t>(c.total() * c.elemSize()) != t.bytes().size())
    throw Error("opencv: output '" + name + "' has an unexpected size");
  if (!t.bytes().empty()) std::memcpy(t.bytes().data(), c.data, t.bytes().size());
  return t;
}

}  // namespace

TensorMap Backend::run(const Model& model, const TensorMap& inputs) {
  try {
    const std::string bytes = serializeModel(model);
    cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
    net.enableFusion(config_.fusion);
    net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
    net.setPreferableTarget(config_.target == Target::Cpu ? cv::dnn::DNN_TARGET_CPU
                                                          : cv::dnn::DNN_TARGET_OPENCL);
    for (const ValueInfo* in : model.graph.feedInputs())
      net.setInput(toMat(inputs.at(in->name), in->name), in->name);
    std::vector<std::string> names;
    for (const ValueInfo& o : model.graph.outputs) names.push_back(o.name);
    std::vector<cv::Mat> outs;
    net.forward(outs, names);
    TensorMap result;
    for (size_t i = 0; i < names.size() && i < outs.size(); ++i)
      result[names[i]] = fromMat(outs[i], model.graph.outputs[i]);
    return result;
  } catch (const cv::Exception& e) {
    // OpenCV throws on what it cannot import or run (an unsupported op or attribute, a failed
    // shape check): a limit of the engine, reported as such. Crashes and wrong results are bugs.
    throw Unsupported("engine", std::string("opencv: ") + e.what());
  }
}

}  // namespace nncheck::opencv

namespace nncheck::opencv {

NNCHECK_REGISTER_ENGINE(opencv) {
  return configuredEngine<Backend, Config>(
      {.name = "opencv",
       .description =
           "OpenCV DNN (readNetFromONNX); configurations fusion=on|off, target=cpu|opencl",
       .baseline = "target=cpu,fusion=off",
       .withDisabled =
           [](const std::string& config, const std::vector<std::string>& names) {
             Config c = Config::parse(config);
             for (const std::string& name : names) {
               if (name != "fusion")
                 throw Error("opencv: '" + name + "' is not an optimization it switches off");
               c.fusion = false;
             }
             return c.key();
           },
       .install = "scripts/install-deps.sh of nncheck's source tree (Debian's libopencv-dnn-dev)",
       .reproducer = &reproducer},
      &configurations);
}

}  // namespace nncheck::opencv
