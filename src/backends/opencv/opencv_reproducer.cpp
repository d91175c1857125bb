// OpenCV's part of a standalone reproducer (nncheck repro): C++ against OpenCV's own API, doing
// what Backend::run does. Not Python: 4.6's binding takes a 3-D array as a 2-D image of
// channels, so it cannot feed the 3-D inputs many findings have.
#include "opencv/opencv_reproducer.h"

#include <opencv2/core/utility.hpp>

#include "nncheck/opencv.h"

namespace nncheck::opencv {

std::optional<ReproducerRecipe> reproducer(const std::string& configuration, const Model&) {
  const Config c = Config::parse(configuration);
  std::string code = R"(#include <opencv2/dnn.hpp>

std::vector<Tensor> run(const std::string& modelPath,
                        const std::vector<std::pair<std::string, Tensor>>& feeds) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(modelPath);
)";
  code += std::string("  net.enableFusion(") + (c.fusion ? "true" : "false") + ");\n";
  code += "  net.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);\n";
  code += std::string("  net.setPreferableTarget(") +
          (c.target == Target::Cpu ? "cv::dnn::DNN_TARGET_CPU" : "cv::dnn::DNN_TARGET_OPENCL") +
          ");\n";
  code += R"(  for (const auto& [name, t] : feeds) {
    std::vector<int> dims(t.dims.begin(), t.dims.end());
    if (dims.empty()) dims = {1};  // a Mat has at least one dim
    cv::Mat m(static_cast<int>(dims.size()), dims.data(), CV_32F);
    for (size_t i = 0; i < t.values.size(); ++i) m.ptr<float>()[i] = static_cast<float>(t.values[i]);
    net.setInput(m, name);
  }
  std::vector<cv::Mat> outs;
  net.forward(outs, OUTPUT_NAMES);
  std::vector<Tensor> result;
  for (size_t k = 0; k < outs.size(); ++k) {
    const cv::Mat m = outs[k].isContinuous() ? outs[k] : outs[k].clone();
    Tensor t{"float32", {}, {}};
    for (int i = 0; i < m.dims; ++i) t.dims.push_back(m.size[i]);
    for (size_t i = 0; i < m.total(); ++i) t.values.push_back(m.ptr<float>()[i]);
    // A Mat has at least two dims: a scalar or 1-D output comes back as [1, n], and is read
    // with the model's declared shape when the counts agree.
    const std::vector<long long>& declared = EXPECTED[k].second.dims;
    long long count = 1;
    for (long long d : declared) count *= d;
    if (declared.size() < 2 && count == static_cast<long long>(m.total())) t.dims = declared;
    result.push_back(t);
  }
  return result;
}
)";
  return ReproducerRecipe{
      .language = "c++",
      .code = std::move(code),
      .requirements = "apt-get install g++ libopencv-dnn-dev   # OpenCV " + std::string(CV_VERSION),
      .versions = "OpenCV " + cv::getVersionString(),
      .run =
          "g++ -std=c++17 reproduce.cpp -I/usr/include/opencv4 -lopencv_dnn -lopencv_core -o "
          "reproduce && ./reproduce"};
}

}  // namespace nncheck::opencv
