// A campaign's live progress line, printed to stderr by a thread of its own every interval, so
// it goes on while the campaign shrinks a failure or waits on an engine. On a terminal it is
// one line redrawn (carriage returns); elsewhere (CI logs) a plain line each interval. With a
// planned number of cases it shows an ETA.
//
//   CampaignProgress p(/*tty=*/true, /*interval=*/1.0);
//   runCampaign(engines, o, [&](const CampaignStats& s) { p.update(s); });
//   p.stop();
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "nncheck/campaign.h"

namespace nncheck::cli {

class CampaignProgress {
 public:
  CampaignProgress(bool tty, double intervalSeconds);
  ~CampaignProgress();
  CampaignProgress(const CampaignProgress&) = delete;
  CampaignProgress& operator=(const CampaignProgress&) = delete;

  void update(const CampaignStats& s);  // copies the counts; cheap
  void stop();                          // prints the last line (on a terminal) and ends the thread

 private:
  struct Counts {
    bool known = false;  // the campaign has reported
    int64_t cases = 0, planned = 0, passed = 0, unsupported = 0, nonfinite = 0, failures = 0;
    size_t distinct = 0;
    std::string activity;
  };
  void print(const Counts& c, double seconds) const;
  void run();

  const bool tty_;
  const std::chrono::duration<double> interval_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  std::condition_variable wake_;
  Counts counts_;
  bool stopping_ = false;
  std::thread thread_;
};

// "1:02:03", "4:05": a duration for people.
std::string clockText(double seconds);

}  // namespace nncheck::cli
