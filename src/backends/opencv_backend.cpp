// The OpenCV DNN adapter. Compiled into the library only when CMake finds OpenCV's DNN module
// (NNCHECK_HAS_OPENCV); without it the backend reports itself unavailable.
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "nncheck/opencv.h"

#ifdef NNCHECK_HAS_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#endif

namespace nncheck::opencv {

std::string Config::describe() const {
  return std::string(target == Target::Cpu ? "cpu" : "opencl") + ", fusion " +
         (fusion ? "on" : "off");
}

Backend::Backend(Config config) : config_(config) {}

std::string Backend::name() const { return "opencv (" + config_.describe() + ")"; }

Capabilities Backend::capabilities() const {
  Capabilities caps;
  caps.dtypes = {DType::Float32};
  caps.opset = 13;  // OpenCV 4.6 reads any opset but behaves like opset 11; 13 is our oldest
  caps.weightsMustBeInitializers = true;
  return caps;
}

#ifdef NNCHECK_HAS_OPENCV
bool available() { return true; }

namespace {

cv::Mat toMat(const Tensor& t, const std::string& name) {
  if (t.dtype() != DType::Float32)
    throw Error("opencv: input '" + name + "' is " + std::string(dtypeName(t.dtype())) +
                "; only float32 is supported");
  std::vector<int> dims(t.shape().begin(), t.shape().end());
  if (dims.empty()) dims = {1};
  cv::Mat m(static_cast<int>(dims.size()), dims.data(), CV_32F);
  std::memcpy(m.data, t.bytes().data(), t.bytes().size());
  return m;
}

Tensor fromMat(const cv::Mat& m, const std::string& name) {
  if (m.depth() != CV_32F) throw Error("opencv: output '" + name + "' is not float32");
  cv::Mat c = m.isContinuous() ? m : m.clone();
  Shape shape;
  for (int i = 0; i < c.dims; ++i) shape.push_back(c.size[i]);
  Tensor t(DType::Float32, shape);
  if (static_cast<size_t>(c.total() * c.elemSize()) != t.bytes().size())
    throw Error("opencv: output '" + name + "' has an unexpected size");
  std::memcpy(t.bytes().data(), c.data, t.bytes().size());
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
      result[names[i]] = fromMat(outs[i], names[i]);
    return result;
  } catch (const cv::Exception& e) {
    throw Error(std::string("opencv: ") + e.what());
  }
}
#else
bool available() { return false; }

TensorMap Backend::run(const Model&, const TensorMap&) {
  throw Error(
      "opencv: nncheck was built without OpenCV DNN (install libopencv-dnn-dev and rebuild)");
}
#endif

}  // namespace nncheck::opencv
