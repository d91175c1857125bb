// A Python engine's campaign against its own floor: for each engine served by a Python worker in
// this build (a worker script <engines>/<engine>/<engine>_worker.py), `nncheck fuzz` at its
// default configurations for NNCHECK_BENCH_SECONDS (600 by default), one job, its failures and
// known bugs included, the worker's requests recorded (NNCHECK_WORKER_RECORD); then
// bench/worker_floor.py runs those requests again in one process, with nothing of nncheck around.
// Both on one core (the first this process may use). Counters: the campaign's cases/s, the
// floor's requests/s on the same requests and their ratio (`share`), the floor's rate on the case
// requests alone (`case_floor_per_s`: the engine's own speed on those cases) and the campaign's
// share of it (`case_share`: the part of the campaign's time the engine spent on its cases), the
// cases' part of the engine's time in the replay (`case_work`), the requests, and the seconds
// spent after failures. A campaign that spends its time on cases keeps most of its floor; the
// first share is also bounded by cases over requests, whatever they cost.
// With NNCHECK_BENCH_OUTPUT=DIR, the campaign's and the floor's output are kept there.
//   NNCHECK_BENCH_SECONDS=600 ./build/bench/worker_campaign_bench --benchmark_filter=litert
#include <benchmark/benchmark.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/engine_files.h"
#include "run_program.h"
#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using nncheck::bench::runInto;

std::string contents(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number that follows `label` in `text`; throws when there is none.
double numberAfter(const std::string& text, const std::string& label, const fs::path& file) {
  const size_t at = text.find(label);
  if (at == std::string::npos)
    throw std::runtime_error(file.string() + ": no '" + label + "' in it");
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}

void campaignAgainstFloor(benchmark::State& state, const std::string& engine,
                          const fs::path& worker) {
  const char* given = std::getenv("NNCHECK_BENCH_SECONDS");
  const std::string seconds = given && *given ? given : "600";
  for (auto _ : state) {
    nncheck::testing::TempDir tmp("worker_campaign_bench");
    const fs::path records = tmp.path() / "requests", campaign = tmp.path() / "campaign.txt",
                   floor = tmp.path() / "floor.txt";
    fs::create_directories(records);
    runInto({NNCHECK_CLI, "fuzz", "--backend", engine, "--seconds", seconds, "--jobs", "1",
             "--seed", "7", "--corpus", (tmp.path() / "corpus").string()},
            {"NNCHECK_WORKER_RECORD=" + records.string()}, campaign);
    std::vector<std::string> floorArgs = {nncheck::environmentPython(engine, NNCHECK_PYTHON_DIR),
                                          NNCHECK_SOURCE_DIR "/bench/worker_floor.py",
                                          worker.string()};
    for (const fs::directory_entry& r : fs::directory_iterator(records))
      floorArgs.push_back(r.path().string());
    if (floorArgs.size() == 3) throw std::runtime_error(engine + ": the worker recorded nothing");
    runInto(floorArgs, {}, floor);
    if (const char* keep = std::getenv("NNCHECK_BENCH_OUTPUT"); keep && *keep) {
      fs::create_directories(keep);
      for (const fs::path& file : {campaign, floor})
        fs::copy_file(file, fs::path(keep) / (engine + "-" + file.filename().string()),
                      fs::copy_options::overwrite_existing);
    }
    const std::string c = contents(campaign), f = contents(floor);
    const double cases = numberAfter(c, "campaign: ", campaign);
    const double took = numberAfter(c, " cases in ", campaign);
    const double after = numberAfter(c, "after failures ", campaign);
    // "N requests (F failed, H hung for the T s timeout, C crashed and left out) in S s: R
    // requests/s", the last line (what the engine printed comes before it)
    const size_t summary = f.rfind(" requests (");
    if (summary == std::string::npos)
      throw std::runtime_error(floor.string() + ": no 'requests (' in it");
    const size_t line = f.rfind('\n', summary);
    const double requests =
        std::strtod(f.c_str() + (line == std::string::npos ? 0 : line + 1), nullptr);
    const double allSeconds = numberAfter(f, "left out) in ", floor);
    const double perSecond = requests / allSeconds;
    // "K case requests (the first of each model's name) in S s: R requests/s", the line before
    const size_t caseLine = f.rfind(" case requests (", summary);
    if (caseLine == std::string::npos)
      throw std::runtime_error(floor.string() + ": no ' case requests (' in it");
    const std::string caseSummary = f.substr(caseLine);
    const double casesPerSecond = numberAfter(caseSummary, "s: ", floor);
    const double caseSeconds = numberAfter(caseSummary, "name) in ", floor);
    state.counters["cases"] = cases;
    state.counters["cases_per_s"] = cases / took;
    state.counters["floor_requests_per_s"] = perSecond;
    state.counters["share"] = cases / took / perSecond;
    state.counters["case_floor_per_s"] = casesPerSecond;
    state.counters["case_share"] = cases / took / casesPerSecond;
    // The engine's time on cases over its time on every request, in the replay: what the
    // campaign's share on cases is at most, however fast the replay ran beside the campaign.
    state.counters["case_work"] = caseSeconds / allSeconds;
    state.counters["requests"] = requests;
    state.counters["after_failures_s"] = after;
  }
}

// The first CPU this process may run on: the campaign, its workers and the floor all run there.
void pinToOneCore() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      return;
    }
}

}  // namespace

int main(int argc, char** argv) {
  pinToOneCore();
  // Every engine a Python worker serves here, by its worker script's folder.
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(NNCHECK_ENGINES_DIR, ec)) {
    const std::string engine = e.path().filename().string();
    const fs::path worker = e.path() / (engine + "_worker.py");
    if (!fs::is_regular_file(worker)) continue;
    benchmark::RegisterBenchmark(
        ("BM_CampaignAgainstFloor/" + engine).c_str(),
        [engine, worker](benchmark::State& s) { campaignAgainstFloor(s, engine, worker); })
        ->Iterations(1)
        ->Unit(benchmark::kSecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
