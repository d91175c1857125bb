// Probing what an engine accepts: single-op models of every op the generator can make under the
// engine's base capabilities (dtypes, opset, weights), each run isolated and compared with the
// reference. The table says, per op, how many models ran, matched, were rejected, crashed or
// hung; capabilitiesFromProbe turns it into the ops and op weights the generator uses, so an
// engine's declared capabilities come from measurement, not from memory.
//
//   nncheck::Isolated engine = nncheck::isolated(cv, 10s, nncheck::Isolation::Persistent);
//   auto rows = nncheck::probe(engine, base, {.perOp = 10});
//   nncheck::Capabilities caps = nncheck::capabilitiesFromProbe(base, rows);
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "nncheck/isolation.h"

namespace nncheck {

struct ProbeRow {
  std::string op;
  int models = 0;  // single-op models generated (some ops cannot be made under the base)
  std::map<Outcome, int> outcomes;  // how many models had each outcome
  int count(Outcome o) const;
  std::string firstProblem;  // the first non-matching outcome's message
  // The share of models the engine ran (wrong results and crashes count: they are bugs, not
  // limits); 0 when no model could be made.
  double acceptedShare() const;
};

struct ProbeOptions {
  int perOp = 10;
  uint64_t seed = 1;
};

std::vector<ProbeRow> probe(const Isolated& engine, const Capabilities& base,
                            const ProbeOptions& options = {},
                            const std::function<void(const ProbeRow&)>& progress = {});

// The base with the ops the engine ran at least once, weighted by their accepted share.
Capabilities capabilitiesFromProbe(const Capabilities& base, const std::vector<ProbeRow>& rows);

// Whether the engine works here at all: a one-node model any engine computes (Relu on float32,
// else the first op and dtype its capabilities take) must not end in an error, a crash or a
// hang. Throws nncheck::SetUpError with what the engine said when it does (a runtime that is not
// installed, a worker program that exits): otherwise every case would fail that way and be
// saved as a finding. An engine that rejects the model or computes it wrongly passes: that is
// its behaviour, judged case by case. Campaigns, reduce and corpus checks call it before any
// case; check() when a property fails, before anything is saved.
void checkEngineSetUp(const Isolated& engine);

// The table as C++ initializer rows, {"Abs", 1.0}, for a backend to compile in.
std::string probeTableSource(const std::vector<ProbeRow>& rows, const std::string& engine,
                             const ProbeOptions& options);

}  // namespace nncheck
