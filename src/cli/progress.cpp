#include "cli/progress.h"

#include <cstdio>

namespace nncheck::cli {

std::string clockText(double seconds) {
  const long long s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

CampaignProgress::CampaignProgress(bool tty, double intervalSeconds)
    : tty_(tty), interval_(intervalSeconds), thread_([this] { run(); }) {}

CampaignProgress::~CampaignProgress() { stop(); }

void CampaignProgress::update(const CampaignStats& s) {
  Counts c;
  c.known = true;
  c.cases = s.cases;
  c.planned = s.plannedCases;
  c.passed = s.passed;
  c.unsupported = s.unsupported;
  c.nonfinite = s.nonfinite;
  c.distinct = s.findings.size();
  c.activity = s.activity;
  for (const auto& [kind, n] : s.failures) c.failures += n;
  std::lock_guard lock(mutex_);
  counts_ = std::move(c);
}

void CampaignProgress::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (tty_) std::fprintf(stderr, "\n");
}

void CampaignProgress::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    const Counts c = counts_;
    if (!c.known) continue;  // nothing heard from the campaign yet
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    lock.unlock();
    print(c, seconds);
    lock.lock();
  }
}

void CampaignProgress::print(const Counts& c, double seconds) const {
  const double rate = c.cases / std::max(seconds, 1e-9);
  std::string eta;
  if (c.planned > 0)
    eta =
        "  ETA " + (c.cases > 0 ? clockText(static_cast<double>(c.planned - c.cases) / rate) : "-");
  const std::string done = c.planned > 0 ? std::to_string(c.cases) + "/" + std::to_string(c.planned)
                                         : std::to_string(c.cases);
  const std::string activity = c.activity.empty() ? "" : "  (" + c.activity + ")";
  // On a terminal the line is redrawn; the padding clears what a longer line left.
  std::fprintf(stderr,
               "%s[%s] %s cases (%.0f/s)  passed %lld  unsupported %lld  nonfinite %lld  "
               "failures %lld  distinct %zu%s%s%s",
               tty_ ? "\r" : "", clockText(seconds).c_str(), done.c_str(), rate,
               static_cast<long long>(c.passed), static_cast<long long>(c.unsupported),
               static_cast<long long>(c.nonfinite), static_cast<long long>(c.failures), c.distinct,
               eta.c_str(), activity.c_str(), tty_ ? "\033[K" : "\n");
  std::fflush(stderr);
}

}  // namespace nncheck::cli
