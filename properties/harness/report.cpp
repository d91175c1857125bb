#include "harness/report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/backend_test.h"
#include "core/files.h"
#include "core/shell_words.h"
#include "harness/corpus_store.h"
#include "harness/culprit.h"
#include "harness/root_cause.h"
#include "nncheck/error.h"
#include "nncheck/onnx_io.h"
#include "render/picture.h"

namespace nncheck {
namespace fs = std::filesystem;
namespace {

const char* const kChartLibrary = NNCHECK_CHARTJS;

std::string escapeHtml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string chartLibrary() {
  requireReportLibrary();
  return readFile(kChartLibrary);
}

// The SVG of a case's picture, without the XML prolog, to sit inside the page.
std::string pictureOf(const CorpusCase& c) {
  try {
    std::string svg = drawModel(c.testCase.model, PictureFormat::Svg, drawOptionsFor(c));
    const size_t at = svg.find("<svg");
    return at == std::string::npos ? svg : svg.substr(at);
  } catch (const Error& e) {
    return "<p class=note>No picture: " + escapeHtml(e.what()) + "</p>";
  }
}

std::string row(const std::string& name, const std::string& valueHtml) {
  return "<tr><th>" + escapeHtml(name) + "</th><td>" + valueHtml + "</td></tr>\n";
}

std::string headline(const CorpusCase& c) {
  std::string s = c.kind ? std::string(outcomeName(*c.kind)) : "case";
  if (!c.divergingOp.empty()) s += " at " + c.divergingOp;
  return s;
}

std::string failureSection(size_t i, const ReportFailure& f) {
  const CorpusCase& c = f.record;
  std::string rows;
  rows += row("pattern", "<code>" + escapeHtml(c.pattern) + "</code>");
  rows += row("kind", escapeHtml(c.kind ? std::string(outcomeName(*c.kind)) : "not recorded") +
                          (c.signal ? " (signal " + std::to_string(c.signal) + ")" : ""));
  rows += row("root cause", escapeHtml(f.rootCause));
  rows += row("status", escapeHtml(f.status));
  if (const std::optional<KnownBug>& k = f.known)
    rows += row("known as",
                escapeHtml(k->dir.string() + (k->title.empty() ? "" : ": " + k->title) +
                           (k->upstream.empty() ? "" : " (upstream: " + k->upstream + ")")));
  else if (!c.info.title.empty() || !c.info.upstream.empty())
    rows += row(
        "bug", escapeHtml(c.info.title +
                          (c.info.upstream.empty() ? "" : " (upstream: " + c.info.upstream + ")")));
  if (!c.configuration.empty()) rows += row("failed in", escapeHtml(c.configuration));
  if (c.kind == Outcome::Mismatch && (c.maxAbsError != 0 || c.maxRelError != 0)) {
    std::string figures = "max abs " + number(c.maxAbsError) + ", max rel " + number(c.maxRelError);
    if (c.estimatedError >= 0) figures += "; a correct float engine: " + number(c.estimatedError);
    rows += row("error", escapeHtml(figures));
  }
  if (!c.divergingOp.empty())
    rows += row("first diverging",
                escapeHtml(c.divergingOp + " → " + c.divergingOutput +
                           (c.divergenceDetail.empty() ? "" : ": " + c.divergenceDetail)));
  if (!c.triage.empty())
    rows += row("configurations", escapeHtml(outcomesByConfiguration(c.triage)));
  if (!c.knownFailures.empty())
    rows += row("known failure in", escapeHtml(outcomesByConfiguration(c.knownFailures)));
  if (c.culprit) {
    rows += row("culprit", escapeHtml(describeCulprit(*c.culprit)));
    if (c.culprit->workaroundPasses && !c.culprit->workaround.empty())
      rows += row("workaround",
                  "<code>--config " + escapeHtml(shellQuote(c.culprit->workaround)) + "</code>");
  }
  if (c.nodesAfter > 0)
    rows += row("nodes", std::to_string(c.nodesBefore) + " → " + std::to_string(c.nodesAfter));
  if (f.hits > 0) rows += row("hits", std::to_string(f.hits));
  if (!c.dir.empty()) rows += row("case", "<code>" + escapeHtml(c.dir.string()) + "</code>");
  if (!f.replay.empty()) rows += row("replay", "<code>" + escapeHtml(f.replay) + "</code>");
  std::string message = c.message.size() > 2000 ? c.message.substr(0, 2000) + " ..." : c.message;
  const std::string id = "failure-" + std::to_string(i + 1);
  return "<section class=failure id=" + id + "><h3>#" + std::to_string(i + 1) + " " +
         escapeHtml(headline(c)) + "</h3>\n<div class=columns><div><table class=facts>\n" + rows +
         "</table>" +
         (message.empty() ? "" : "<pre class=message>" + escapeHtml(message) + "</pre>") +
         "</div><div class=picture>" + pictureOf(c) + "</div></div></section>\n";
}

const char* const kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
h3{font-size:16px;margin:0 0 8px}
table{border-collapse:collapse}th,td{text-align:left;padding:2px 10px 2px 0;vertical-align:top}
table.list td,table.list th{border-bottom:1px solid #eee}
code{font:12px monospace;word-break:break-all}
.charts{display:flex;flex-wrap:wrap;gap:24px}.chart{width:560px;height:300px}
.failure{border:1px solid #ddd;border-radius:6px;padding:12px;margin:16px 0}
.columns{display:flex;gap:16px;flex-wrap:wrap}.columns>div{flex:1;min-width:380px}
.picture svg{max-width:100%;height:auto}
pre.message{white-space:pre-wrap;font-size:12px;background:#f6f6f6;padding:6px;max-height:160px;overflow:auto}
.note{color:#777}
)";

// Draws the charts from the page's data; marks the body with how many it drew.
const char* const kScript = R"(
(function () {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  let drawn = 0;
  Chart.defaults.animation = false;
  const t = data.timeline;
  if (t.length > 1) {
    const rate = [], failures = [];
    for (let i = 1; i < t.length; ++i) {
      const dt = t[i][0] - t[i - 1][0];
      rate.push({x: t[i][0], y: dt > 0 ? (t[i][1] - t[i - 1][1]) / dt : 0});
      failures.push({x: t[i][0], y: t[i][5]});
    }
    new Chart(document.getElementById('rate'), {
      type: 'line',
      data: {datasets: [
        {label: 'cases/s', data: rate, pointRadius: 0, borderColor: '#3366cc', yAxisID: 'y'},
        {label: 'failures so far', data: failures, pointRadius: 0, borderColor: '#cc3333',
         yAxisID: 'y1'}]},
      options: {maintainAspectRatio: false, scales: {
        x: {type: 'linear', title: {display: true, text: 'seconds'}},
        y: {beginAtZero: true, title: {display: true, text: 'cases/s'}},
        y1: {beginAtZero: true, position: 'right', grid: {drawOnChartArea: false},
             title: {display: true, text: 'failures'}}}}});
    ++drawn;
  }
  new Chart(document.getElementById('outcomes'), {
    type: 'bar',
    data: {labels: data.outcomes.map(o => o[0]),
           datasets: [{label: 'cases', data: data.outcomes.map(o => o[1]),
                       backgroundColor: '#5577aa'}]},
    options: {maintainAspectRatio: false, plugins: {legend: {display: false}}}});
  ++drawn;
  if (data.ops.length > 0) {
    const datasets = [{label: data.opLabel, data: data.ops.map(o => o[1]),
                       backgroundColor: '#77aa77'}];
    if (data.ops.some(o => o[2] > 0))
      datasets.push({label: 'rejected by the engine', data: data.ops.map(o => o[2]),
                     backgroundColor: '#cc8844'});
    new Chart(document.getElementById('ops'), {
      type: 'bar', data: {labels: data.ops.map(o => o[0]), datasets: datasets},
      options: {indexAxis: 'y', maintainAspectRatio: false,
                scales: {y: {ticks: {autoSkip: false, font: {size: 10}}}}}});
    ++drawn;
  }
  document.body.dataset.charts = String(drawn);
})();
)";

}  // namespace

void requireReportLibrary() {
  std::error_code ec;
  if (!fs::is_regular_file(kChartLibrary, ec))
    throw Error(std::string(kChartLibrary) +
                ": Chart.js is not installed; the report needs it (Debian: apt install "
                "libjs-chart.js)");
}

std::string reportHtml(const CampaignReport& r) {
  const std::string chart = chartLibrary();
  nlohmann::ordered_json data;
  data["timeline"] = nlohmann::ordered_json::array();
  for (const CampaignSample& s : r.timeline)
    data["timeline"].push_back(
        {s.seconds, s.cases, s.passed, s.unsupported, s.nonfinite, s.failures});
  data["outcomes"] = nlohmann::ordered_json::array();
  for (const auto& [name, n] : r.outcomes) data["outcomes"].push_back({name, n});
  // Ops by how many cases hold them, most first; the rejected ones among them.
  std::set<std::string> names;
  for (const auto& [op, n] : r.opCases) names.insert(op);
  for (const auto& [op, n] : r.rejectedOps) names.insert(op);
  std::vector<std::tuple<int64_t, std::string, int64_t>> ops;
  for (const std::string& op : names) {
    auto count = [&](const std::map<std::string, int64_t>& m) {
      auto it = m.find(op);
      return it == m.end() ? int64_t{0} : it->second;
    };
    ops.emplace_back(-count(r.opCases), op, count(r.rejectedOps));
  }
  std::sort(ops.begin(), ops.end());
  data["ops"] = nlohmann::ordered_json::array();
  for (const auto& [n, op, rejected] : ops) data["ops"].push_back({op, -n, rejected});
  data["opLabel"] = r.timeline.empty() ? "cases holding the op" : "generated cases holding the op";
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Nothing in the data may end the script element or open a comment in it ("</script",
  // "<!--" in an op's name): every '<' is written as JSON's \u003c, which parses the same.
  for (size_t at = json.find('<'); at != std::string::npos; at = json.find('<', at + 6))
    json.replace(at, 1, "\\u003c");

  std::string settings;
  for (const auto& [name, value] : r.settings) settings += row(name, escapeHtml(value));
  // Root causes first, each with the patterns that show it; the failures in that order.
  std::vector<std::string> causes;
  for (const ReportFailure& f : r.failures) causes.push_back(f.rootCause);
  const std::vector<RootCauseGroup> groups = groupByRootCause(causes);
  std::string index, failures;
  for (const RootCauseGroup& g : groups) {
    index += "<tr><td colspan=4><b>" + escapeHtml(g.rootCause) + "</b> (" +
             std::to_string(g.members.size()) + " pattern" + (g.members.size() == 1 ? "" : "s") +
             ")</td></tr>\n";
    for (size_t i : g.members) {
      const CorpusCase& c = r.failures[i].record;
      index += "<tr><td><a href=\"#failure-" + std::to_string(i + 1) + "\">#" +
               std::to_string(i + 1) + "</a></td><td>" + escapeHtml(headline(c)) + "</td><td>" +
               escapeHtml(r.failures[i].status) + "</td><td><code>" + escapeHtml(c.pattern) +
               "</code></td></tr>\n";
      failures += failureSection(i, r.failures[i]);
    }
  }
  const size_t opRows = ops.size();

  std::string page = "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>" +
                     escapeHtml(r.title) + "</title>\n<style>" + kStyle + "</style>\n";
  page += "<script>" + chart + "</script>\n</head><body>\n<h1>" + escapeHtml(r.title) + "</h1>\n";
  page += "<h2>Settings</h2>\n<table>\n" + settings + "</table>\n";
  page += "<h2>Cases</h2>\n<div class=charts>";
  if (r.timeline.size() > 1) page += "<div class=chart><canvas id=rate></canvas></div>";
  page += "<div class=chart><canvas id=outcomes></canvas></div></div>\n";
  page += "<h2>Distinct failures: " + std::to_string(r.failures.size()) + ", " +
          std::to_string(groups.size()) + " root causes</h2>\n";
  if (!r.failures.empty())
    page +=
        "<table class=list><tr><th>#</th><th>failure</th><th>status</th><th>pattern</th>"
        "</tr>\n" +
        index + "</table>\n" + failures;
  page += "<h2>Ops</h2>\n";
  page += opRows
              ? "<div style=\"height:" + std::to_string(std::max<size_t>(200, 40 + 14 * opRows)) +
                    "px;max-width:900px\"><canvas id=ops></canvas></div>\n"
              : "<p class=note>No op was counted.</p>\n";
  page += "<script type=\"application/json\" id=report-data>" + json + "</script>\n";
  page += std::string("<script>") + kScript + "</script>\n</body></html>\n";
  return page;
}

void writeReport(const fs::path& file, const CampaignReport& r) {
  writeOutputFile(file, reportHtml(r));
}

CampaignReport campaignReport(const CampaignStats& s,
                              std::vector<std::pair<std::string, std::string>> settings,
                              const std::string& engine) {
  CampaignReport r;
  r.title = "nncheck campaign: " + engine;
  r.settings = std::move(settings);
  char rate[64];
  std::snprintf(rate, sizeof rate, "%lld cases in %.1f s (%.0f cases/s)",
                static_cast<long long>(s.cases), s.seconds, s.cases / std::max(s.seconds, 1e-9));
  r.settings.emplace_back("ran", rate);
  r.timeline = s.timeline;
  r.outcomes = {{"pass", s.passed}, {"unsupported", s.unsupported}, {"nonfinite", s.nonfinite}};
  for (const auto& [kind, n] : s.failures) r.outcomes.emplace_back(outcomeName(kind), n);
  r.opCases = s.opCases;
  r.rejectedOps = s.rejectedOps;
  for (const Finding& f : s.findings) {
    ReportFailure out;
    out.record = corpusRecord(f.minimized, f.info);
    if (!f.dir.empty()) try {
        out.record = loadCorpusCase(f.dir);
      } catch (const std::exception&) {  // changed since it was saved: shown as found
      }
    out.status = f.known                            ? "known bug"
                 : !f.fromCorpus                    ? "new"
                 : out.record.knownFailures.empty() ? "in the corpus"
                                                    : "known failure";
    out.known = f.known;
    out.rootCause = rootCause(f.info, f.minimized.model);
    out.hits = f.hits;
    out.replay = replayCommand(out.record, engine);
    r.failures.push_back(std::move(out));
  }
  return r;
}

CampaignReport corpusReport(const fs::path& corpus) {
  std::error_code ec;
  if (!fs::is_directory(corpus, ec)) throw Error(corpus.string() + ": no such corpus folder");
  CampaignReport r;
  r.title = "nncheck corpus: " + corpus.filename().string();
  std::map<std::string, int64_t> kinds;
  std::set<std::string> properties;
  CaseScan scan = scanBackendTestCases(corpus);
  r.leftOut = std::move(scan.leftOut);
  for (const fs::path& dir : scan.cases) {
    ReportFailure f;
    try {
      f.record = loadCorpusCase(dir);
    } catch (const std::exception& e) {
      r.unreadable.push_back(e.what());
      continue;
    }
    const CorpusCase& c = f.record;
    ++kinds[c.kind ? std::string(outcomeName(*c.kind)) : "not recorded"];
    if (!c.property.empty()) properties.insert(c.property);
    std::set<std::string> ops;
    for (const Node& n : c.testCase.model.graph.nodes) ops.insert(n.opType);
    for (const std::string& op : ops) ++r.opCases[op];
    f.status = c.knownFailures.empty() ? "in the corpus" : "known failure";
    f.rootCause = c.kind ? rootCause(c.info, c.testCase.model) : "no failure recorded";
    f.replay = replayCommand(c, "");
    r.failures.push_back(std::move(f));
  }
  r.outcomes.assign(kinds.begin(), kinds.end());
  std::string props;
  for (const std::string& p : properties) props += (props.empty() ? "" : ", ") + p;
  r.settings = {{"corpus", corpus.string()},
                {"cases", std::to_string(r.failures.size())},
                {"properties", props.empty() ? "(not recorded)" : props}};
  if (!r.unreadable.empty())
    r.settings.emplace_back(
        "unreadable cases, left out",
        std::to_string(r.unreadable.size()) + " (first: " + r.unreadable.front() + ")");
  if (!r.leftOut.empty())
    r.settings.emplace_back(
        "entries not followed or searched",
        std::to_string(r.leftOut.size()) + " (first: " + r.leftOut.front() + ")");
  return r;
}

}  // namespace nncheck
