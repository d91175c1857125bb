#include "cli/engines.h"

#include "nncheck/error.h"
#include "nncheck/opencv.h"

namespace nncheck::cli {

std::unique_ptr<Backend> makeEngine(const std::string& name, const std::string& config) {
  if (name == "reference") {
    if (!config.empty())
      throw Error("--config " + config + ": the reference backend has no configurations");
    return std::make_unique<ReferenceBackend>();
  }
  if (name == "opencv") {
    if (!opencv::available())
      throw Error("--backend opencv: this nncheck was built without OpenCV DNN "
                  "(install libopencv-dnn-dev and rebuild)");
    return std::make_unique<opencv::Backend>(opencv::Config::parse(config));
  }
  throw Error("--backend " + name + ": unknown backend (available: opencv, reference)");
}

std::vector<std::string> engineConfigurations(const std::string& name) {
  if (name != "opencv") return {""};
  std::vector<std::string> out;
  for (const opencv::Config& c : opencv::configurations()) out.push_back(c.key());
  return out;
}

std::chrono::milliseconds secondsOption(const std::string& option, double seconds) {
  if (!(seconds > 0)) throw Error(option + ": expected a positive number of seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace nncheck::cli
