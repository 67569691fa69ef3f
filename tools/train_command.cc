// braid train --policy sparoa --profiles a,b --out POLICY.bin [--episodes N]
//             [--seed S] [--csv curve.csv] [--svg curve.svg] [--random-graphs N]
//             [--energy-weight L]
// braid train --policy temporl --out TEMPORL.bin [--profiles a,b] [--episodes N]
//             [--seed S] [--csv curve.csv] [--svg curve.svg] [--random-graphs N]
//             [--models a,b] [--base POLICY]
// braid train --policy temporl --fine-tune MODEL --policy-file IN.bin --out OUT.bin
//             [--devices cpu,vgpu] [--profile P] [--rounds N] [--runs N] [--threads T]
//             [--compare R]   (MEASURED: fine-tuning on the engine's part times)
//
// Trains SparOA (scheduler/sparoa_policy.h) on the simulator: the threshold
// predictor on grid-searched best thresholds over the built-in zoo plus
// seeded random CNN-like graphs, then the SAC refinement policy. A quarter of
// the random graphs are held out from both and the final summary reports
// the held-out errors. Every latency is SIMULATED (cost model + simulator).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "models/builtin.h"
#include "models/graph_builder.h"
#include "scheduler/cost_model.h"
#include "scheduler/device_profile.h"
#include "profiling/plan_timer.h"
#include "scheduler/sparoa_policy.h"
#include "tools/cli_random_graph.h"
#include "tools/cli_temporl.h"
#include "tools/commands.h"
#include "tools/profile_report.h"

namespace braid::cli {
namespace {

constexpr char kTrainHelp[] =
    "Usage: braid train --policy sparoa --out POLICY.bin [--profiles A,B] [--episodes N]\n"
    "                   [--seed S] [--csv CURVE.csv] [--svg CURVE.svg] [--random-graphs N]\n"
    "                   [--energy-weight L]\n\n"
    "Trains the SparOA policy on SIMULATED latency (cost model + simulator, no device runs):\n"
    "the threshold predictor on grid-searched best (sparsity, intensity) thresholds over the\n"
    "built-in models and seeded random CNN-like graphs, then the SAC refinement per operator.\n"
    "A quarter of the random graphs are held out; the summary reports errors on them.\n\n"
    "  --profiles      device profiles to train on (default jetson-orin-nano-8gb,host-vgpu)\n"
    "  --episodes N    SAC episodes (default 300)\n"
    "  --seed S        seeds the random graphs and SAC (default 1)\n"
    "  --random-graphs N  generated graphs (default 24)\n"
    "  --energy-weight L  reward -(latency + L * energy), both relative (default 0)\n"
    "  --csv, --svg    learning curve (per-episode cost relative to the threshold plan)\n\n"
    "       braid train --policy temporl --out TEMPORL.bin [--profiles A,B] [--episodes N]\n"
    "                   [--seed S] [--csv CURVE.csv] [--svg CURVE.svg] [--random-graphs N]\n"
    "                   [--models a,b] [--base POLICY]\n\n"
    "Trains TempoRL's split-ratio agent (REINFORCE with a critic baseline, one continuous\n"
    "ratio per sliceable layer) on SIMULATED part times: reward -|T_a - T_b| / S + 0.25 (hidden\n"
    "copy share - 1) - (latency change) / S. Layers' devices come from --base (default\n"
    "partition). Every 4th random graph is held out; the summary compares the greedy agent's\n"
    "split-layer gap with the 50/50 and the peak-FLOPs split of the same layers.\n"
    "  --models L      built-in models to train on (default: all)\n"
    "  --episodes N    (default 300), --random-graphs N (default 8)\n\n"
    "       braid train --policy temporl --fine-tune MODEL --policy-file IN.bin --out OUT.bin\n"
    "                   [--devices cpu,vgpu] [--profile P] [--rounds N] [--runs N]\n"
    "                   [--threads T] [--compare R] [--base POLICY]\n\n"
    "Fine-tunes a trained temporl model on MEASURED part times: each round plans MODEL,\n"
    "runs the plan through the engine (--runs runs, per-step medians), reads each split\n"
    "layer's two part times and moves the layer's ratio towards the share at which both\n"
    "parts finish together (a logit offset per layer and device pair, saved in OUT.bin and\n"
    "used by --policy temporl afterwards). Then --compare rounds run the base plan, temporl\n"
    "before and after, and the same layers at 50/50 and at the peak ratio, alternating\n"
    "plan by plan, and print medians. vgpu is a VIRTUAL GPU: its figures are a model.\n"
    "  --devices L     (default cpu,vgpu)   --profile P (default host-vgpu with vgpu, else host)\n"
    "  --rounds N      fine-tuning rounds (default 8)   --runs N runs per measurement (default 5)\n"
    "  --threads T     CPU threads (default 1)   --compare R (default 10; 0: none)\n";

// prefix + n, built by append (GCC 12's -Wrestrict misfires on "x" + to_string).
std::string Numbered(const char* prefix, uint64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

struct Instance {
  std::string graph_name, profile_name;
  const Graph* graph = nullptr;
  const CostModel* model = nullptr;
  PlacementContext ctx;
  bool held_out = false;
  std::vector<double> features;
  ThresholdGridResult grid;
  std::unique_ptr<PlacementEnv> env;
};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

void WriteSvg(std::ostream& out, const std::vector<double>& train,
              const std::vector<std::pair<int, double>>& eval) {
  const double w = 640, h = 360, pad = 50;
  double lo = 1e9, hi = -1e9;
  for (double v : train) lo = std::min(lo, v), hi = std::max(hi, v);
  for (auto& e : eval) lo = std::min(lo, e.second), hi = std::max(hi, e.second);
  if (!(hi > lo)) hi = lo + 1e-3;
  const double n = std::max<double>(1, static_cast<double>(train.size()));
  auto px = [&](double i) { return pad + (w - 2 * pad) * i / n; };
  auto py = [&](double v) { return h - pad - (h - 2 * pad) * (v - lo) / (hi - lo); };
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << w << "' height='" << h << "'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << pad
      << "' y='20' font-size='13'>braid train (SIMULATED): cost relative to "
         "the threshold plan (lower is better)</text>\n"
      << "<line x1='" << pad << "' y1='" << h - pad << "' x2='" << w - pad << "' y2='" << h - pad
      << "' stroke='black'/><line x1='" << pad << "' y1='" << pad << "' x2='" << pad << "' y2='"
      << h - pad << "' stroke='black'/>\n";
  char buf[64];
  for (double v : {lo, hi}) {
    std::snprintf(buf, sizeof buf, "%.3f", v);
    out << "<text x='5' y='" << py(v) + 4 << "' font-size='11'>" << buf << "</text>\n";
  }
  out << "<text x='" << w / 2 << "' y='" << h - 15 << "' font-size='11'>episode</text>\n";
  // Moving average of the training episodes.
  out << "<polyline fill='none' stroke='steelblue' points='";
  double acc = 0;
  const size_t window = std::max<size_t>(1, train.size() / 20);
  for (size_t i = 0; i < train.size(); ++i) {
    acc += train[i];
    if (i >= window) acc -= train[i - window];
    out << px(static_cast<double>(i)) << ","
        << py(acc / static_cast<double>(std::min(i + 1, window))) << " ";
  }
  out << "'/>\n<polyline fill='none' stroke='darkorange' stroke-width='2' points='";
  for (auto& e : eval) out << px(e.first) << "," << py(e.second) << " ";
  out << "'/>\n<text x='" << w - 250
      << "' y='40' font-size='11' fill='steelblue'>train episodes "
         "(moving mean)</text>\n<text x='"
      << w - 250
      << "' y='55' font-size='11' "
         "fill='darkorange'>greedy, held-out graphs</text>\n</svg>\n";
}


struct TemporlTrainFlags {
  std::string profiles, out, episodes, seed, csv, svg, random_graphs, models, base;
};

// braid train --policy temporl: every figure SIMULATED.
int RunTrainTemporl(const TemporlTrainFlags& f, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& s) { return ReportError(err, "train", s); };
  if (f.out.empty()) return fail(InvalidArgument("--out TEMPORL.bin is required"));
  char* end = nullptr;
  const long episodes = std::strtol(f.episodes.c_str(), &end, 10);
  if (*end != 0 || episodes < 0 || episodes > 1000000)
    return fail(InvalidArgument("--episodes: expected 0..1000000"));
  const unsigned long long seed = std::strtoull(f.seed.c_str(), &end, 10);
  if (*end != 0 || seed > kMaxTrainSeed)
    return fail(InvalidArgument("--seed: expected an integer 0..1000000"));
  const std::string random_text = f.random_graphs.empty() ? std::string("8") : f.random_graphs;
  const long random_graphs = std::strtol(random_text.c_str(), &end, 10);
  if (*end != 0 || random_graphs < 0 || random_graphs > 10000)
    return fail(InvalidArgument("--random-graphs: expected 0..10000"));
  const std::string base = f.base.empty() ? "partition" : f.base;
  if (base == "temporl") return fail(InvalidArgument("--base must be another policy"));
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  out << "braid train --policy temporl: SIMULATED (cost model + simulator on device profiles; "
         "no device is run)\n";
  StatusOr<TemporlTrainSet> set = BuildTemporlTrainSet(
      SplitList(f.profiles), SplitList(f.models), static_cast<int>(random_graphs), seed, base);
  if (!set.ok()) return fail(set.status());
  std::vector<TemporlEnv*> train = set->Envs(false), eval = set->Envs(true);
  if (train.empty()) return fail(InvalidArgument("no training graph has a sliceable layer"));
  if (eval.empty()) eval = train;  // fewer than 4 random graphs: evaluate on the training set
  char line[512];
  std::snprintf(line, sizeof line,
                "%zu training and %zu held-out (graph, profile) pairs, base plans from %s, %.1f s\n",
                train.size(), set->Envs(true).size(), base.c_str(), elapsed());
  out << line;
  TemporlTrainOptions options;
  options.episodes = static_cast<int>(episodes);
  options.seed = seed;
  options.eval_every = std::max(1, options.episodes / 20);
  TemporlModel model = NewTemporlModel(options.hidden, seed);
  model.trained_on = f.profiles + "; base " + base;
  std::ofstream csv;
  if (!f.csv.empty()) {
    csv.open(f.csv);
    if (!csv) return fail(NotFound("cannot open " + f.csv + " for writing"));
    csv << "episode,train_reward,train_gap_over_scale,eval_gap_vs_half,eval_latency_vs_base\n";
  }
  const std::vector<TemporlCurvePoint> curve =
      TrainTemporl(train, eval, options, model, [&](const TemporlCurvePoint& p) {
        if (csv.is_open())
          csv << p.episode << "," << p.train_reward << "," << p.train_gap_norm << ","
              << (p.eval_gap_vs_half >= 0 ? std::to_string(p.eval_gap_vs_half) : "") << ","
              << (p.eval_latency_vs_base >= 0 ? std::to_string(p.eval_latency_vs_base) : "")
              << "\n";
        if (p.eval_gap_vs_half < 0) return;
        std::snprintf(line, sizeof line,
                      "episode %5d  reward %8.4f  held-out greedy, no guard: gap %.3fx the 50/50 split's, "
                      "latency %.4fx the base plan's  %.1f s\n",
                      p.episode, p.train_reward, p.eval_gap_vs_half, p.eval_latency_vs_base,
                      elapsed());
        out << line << std::flush;
      });
  if (!f.svg.empty()) {
    if (Status s = WriteTextFile(f.svg, TemporlCurveSvg(curve)); !s.ok()) return fail(s);
  }
  if (Status s = SaveTemporlModel(model, f.out); !s.ok()) return fail(s);
  // Summary: greedy with the guard, against the static splits of the same
  // layers; training pairs and held-out pairs apart.
  // Last, a reference without learning (FinishTogetherRatio) on the held-out
  // pairs: what the split granularity leaves of the gap.
  struct SummaryRow {
    bool held_out, guard, reference;
  };
  for (const SummaryRow& row : {SummaryRow{false, true, false}, SummaryRow{true, true, false},
                                SummaryRow{false, false, false}, SummaryRow{true, false, false},
                                SummaryRow{true, true, true}}) {
    const bool held_out = row.held_out, guard = row.guard;
    double gap = 0, half = 0, peak = 0, mgap = 0, mhalf = 0, mpeak = 0;
    std::vector<double> latency_vs_base;
    int layers = 0, movable = 0;
    for (const TemporlTrainSet::Item& item : set->items) {
      if (item.held_out != held_out) continue;
      const TemporlComparison c =
          CompareTemporl(*item.env, model, *item.model, guard,
                         row.reference ? TemporlChooser(FinishTogetherRatio) : TemporlChooser());
      layers += c.layers;
      movable += c.movable_layers;
      gap += c.gap_us, half += c.half_gap_us, peak += c.peak_gap_us;
      mgap += c.movable_gap_us, mhalf += c.movable_half_gap_us, mpeak += c.movable_peak_gap_us;
      latency_vs_base.push_back(c.latency_us / c.base_latency_us);
    }
    if (latency_vs_base.empty()) continue;
    std::snprintf(line, sizeof line,
                  "summary (SIMULATED, %s%s, %zu pairs): %d split layers, summed |gap| %.3fx the "
                  "50/50 split's, %.3fx the peak-ratio split's; on the %d whose split can move: "
                  "%.3fx and %.3fx; latency %.4fx %s's (max %.4fx)\n",
                  held_out ? "held-out" : "training",
                  row.reference ? ", reference: finish-together ratios, no learning"
                  : guard       ? ""
                                : ", agent's ratios without the guard", latency_vs_base.size(), layers,
                  half > 0 ? gap / half : 1.0, peak > 0 ? gap / peak : 1.0, movable,
                  mhalf > 0 ? mgap / mhalf : 1.0, mpeak > 0 ? mgap / mpeak : 1.0,
                  Mean(latency_vs_base), base.c_str(),
                  *std::max_element(latency_vs_base.begin(), latency_vs_base.end()));
    out << line;
  }
  std::snprintf(line, sizeof line, "wrote %s (%ld episodes, seed %llu) in %.1f s\n", f.out.c_str(),
                episodes, seed, elapsed());
  out << line;
  return kExitOk;
}

}  // namespace

struct FineTuneFlags {
  std::string model, in, out, devices, profile, rounds, runs, threads, compare, base;
};

// braid train --policy temporl --fine-tune MODEL: MEASURED through the engine.
int RunFineTuneTemporl(const FineTuneFlags& f, std::ostream& out, std::ostream& err) {
  auto fail = [&](const Status& s) { return ReportError(err, "train", s); };
  if (f.in.empty()) return fail(InvalidArgument("--fine-tune needs --policy-file IN.bin (a trained model)"));
  if (f.out.empty()) return fail(InvalidArgument("--out OUT.bin is required"));
  TemporlFineTuneConfig c;
  c.model = f.model;
  c.timer.devices = {"cpu"};
  for (const std::string& d : SplitList(f.devices.empty() ? "cpu,vgpu" : f.devices))
    if (d != "cpu") c.timer.devices.push_back(d);
  if (c.timer.devices.size() < 2)
    return fail(InvalidArgument("--devices: fine-tuning needs a second device besides cpu"));
  const bool vgpu = std::find(c.timer.devices.begin(), c.timer.devices.end(), "vgpu") !=
                    c.timer.devices.end();
  c.profile = !f.profile.empty() ? f.profile : (vgpu ? "host-vgpu" : "host");
  if (!f.base.empty()) c.base = f.base;
  if (c.base == "temporl") return fail(InvalidArgument("--base must be another policy"));
  for (auto [flag, text, target, lo, hi, fallback] :
       {std::tuple{"--rounds", &f.rounds, &c.rounds, 0, 1000, 8},
        {"--runs", &f.runs, &c.timer.iterations, 1, 100000, 5},
        {"--threads", &f.threads, &c.timer.threads, 0, 1024, 1},
        {"--compare", &f.compare, &c.compare_rounds, 0, 100000, 10}}) {
    if (text->empty()) {
      *target = fallback;
      continue;
    }
    char* end = nullptr;
    const long v = std::strtol(text->c_str(), &end, 10);
    if (*end != 0 || v < lo || v > hi)
      return fail(InvalidArgument(std::string(flag) + ": expected an integer " + std::to_string(lo) +
                                  ".." + std::to_string(hi) + ", got '" + *text + "'"));
    *target = static_cast<int>(v);
  }
  c.timer.warmup = 1;
  StatusOr<DeviceProfile> profile = LoadDeviceProfile(ResolveProfileName(c.profile));
  if (!profile.ok()) return fail(profile.status());
  if (vgpu) {
    StatusOr<VgpuTiming> timing = profiling::VgpuTimingFromProfile(*profile, "vgpu");
    if (!timing.ok()) return fail(timing.status().WithPrefix("--profile " + c.profile));
    c.timer.vgpu_timing = *timing;
  }
  StatusOr<TemporlModel> model = LoadTemporlModel(f.in);
  if (!model.ok()) return fail(model.status());
  if (Status s = FineTuneTemporlMeasured(c, *model, out); !s.ok()) return fail(s);
  if (Status s = SaveTemporlModel(*model, f.out); !s.ok()) return fail(s);
  out << "wrote " << f.out << " (" << model->correction.layer_offset.size()
      << " layer corrections, " << model->correction.updates << " rounds)\n";
  return kExitOk;
}

int RunTrain(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kTrainHelp;
    return kExitOk;
  }
  auto fail = [&](const Status& s) { return ReportError(err, "train", s); };
  auto value = [&](const char* flag, std::string fallback) -> StatusOr<std::string> {
    ASSIGN_OR_RETURN(std::optional<std::string> v, scan.Value(flag));
    return v ? *v : fallback;
  };
  StatusOr<std::string> policy = value("--policy", "");
  StatusOr<std::string> profiles_flag = value("--profiles", "jetson-orin-nano-8gb,host-vgpu");
  StatusOr<std::string> out_path = value("--out", "");
  StatusOr<std::string> episodes_flag = value("--episodes", "300");
  StatusOr<std::string> seed_flag = value("--seed", "1");
  StatusOr<std::string> csv_path = value("--csv", "");
  StatusOr<std::string> svg_path = value("--svg", "");
  StatusOr<std::string> random_flag = value("--random-graphs", "");
  StatusOr<std::string> energy_flag = value("--energy-weight", "0");
  StatusOr<std::string> models_flag = value("--models", "");
  StatusOr<std::string> base_flag = value("--base", "");
  StatusOr<std::string> fine_tune = value("--fine-tune", "");
  StatusOr<std::string> policy_file = value("--policy-file", "");
  StatusOr<std::string> devices_flag = value("--devices", "");
  StatusOr<std::string> profile_flag = value("--profile", "");
  StatusOr<std::string> rounds_flag = value("--rounds", "");
  StatusOr<std::string> runs_flag = value("--runs", "");
  StatusOr<std::string> threads_flag = value("--threads", "");
  StatusOr<std::string> compare_flag = value("--compare", "");
  for (const auto* s : {&policy, &profiles_flag, &out_path, &episodes_flag, &seed_flag, &csv_path,
                        &svg_path, &random_flag, &energy_flag, &models_flag, &base_flag, &fine_tune,
                        &policy_file, &devices_flag, &profile_flag, &rounds_flag, &runs_flag,
                        &threads_flag, &compare_flag})
    if (!s->ok()) return fail(s->status());
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return fail(pos.status());
  if (!pos->empty()) return fail(InvalidArgument("unexpected argument " + (*pos)[0]));
  const bool measured_flags = !policy_file->empty() || !devices_flag->empty() ||
                              !profile_flag->empty() || !rounds_flag->empty() ||
                              !runs_flag->empty() || !threads_flag->empty() ||
                              !compare_flag->empty();
  if (*policy == "temporl" && !fine_tune->empty())
    return RunFineTuneTemporl({*fine_tune, *policy_file, *out_path, *devices_flag, *profile_flag,
                               *rounds_flag, *runs_flag, *threads_flag, *compare_flag, *base_flag},
                              out, err);
  if (!fine_tune->empty() && *policy != "temporl")
    return fail(InvalidArgument("--fine-tune applies to --policy temporl only"));
  if (measured_flags)
    return fail(InvalidArgument(
        "--policy-file, --devices, --profile, --rounds, --runs, --threads and --compare apply to "
        "--policy temporl --fine-tune only"));
  if (*policy == "temporl") {
    TemporlTrainFlags f{*profiles_flag, *out_path,   *episodes_flag, *seed_flag, *csv_path,
                        *svg_path,      *random_flag, *models_flag,  *base_flag};
    return RunTrainTemporl(f, out, err);
  }
  if (*policy != "sparoa")
    return fail(InvalidArgument("--policy must be sparoa or temporl (the trainable policies)"));
  if (!models_flag->empty() || !base_flag->empty())
    return fail(InvalidArgument("--models and --base apply to --policy temporl only"));
  if (out_path->empty()) return fail(InvalidArgument("--out POLICY.bin is required"));
  char* end = nullptr;
  const long episodes = std::strtol(episodes_flag->c_str(), &end, 10);
  if (*end != 0 || episodes < 0 || episodes > 1000000)
    return fail(InvalidArgument("--episodes: expected 0..1000000"));
  const unsigned long long seed = std::strtoull(seed_flag->c_str(), &end, 10);
  if (*end != 0 || seed > kMaxTrainSeed)
    return fail(InvalidArgument("--seed: expected an integer 0..1000000"));
  const std::string random_text = random_flag->empty() ? std::string("24") : *random_flag;
  const long random_graphs = std::strtol(random_text.c_str(), &end, 10);
  if (*end != 0 || random_graphs < 0 || random_graphs > 10000)
    return fail(InvalidArgument("--random-graphs: expected 0..10000"));
  const double energy_weight = std::strtod(energy_flag->c_str(), &end);
  if (*end != 0 || !(energy_weight >= 0))
    return fail(InvalidArgument("--energy-weight: expected a number >= 0"));
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  // Profiles and graphs.
  std::vector<std::string> profile_names = SplitList(*profiles_flag);
  if (profile_names.empty()) return fail(InvalidArgument("--profiles is empty"));
  std::vector<std::unique_ptr<CostModel>> models;
  for (const std::string& name : profile_names) {
    StatusOr<DeviceProfile> p = LoadDeviceProfile(ResolveProfileName(name));
    if (!p.ok()) return fail(p.status());
    if (p->devices.size() < 2)
      return fail(InvalidArgument("profile " + name + " has no accelerator"));
    models.push_back(std::make_unique<CostModel>(*p));
  }
  std::vector<std::pair<std::string, Graph>> graphs;
  std::vector<bool> graph_held_out;
  for (const BuiltinModelInfo& info : ListBuiltinModels()) {
    StatusOr<Graph> g = BuildBuiltinModel(info.name);
    if (!g.ok()) return fail(g.status());
    if (Status s = RunDefaultPasses(*g); !s.ok()) return fail(s);
    if (Status s = Annotate(*g); !s.ok()) return fail(s);
    graphs.emplace_back(info.name, std::move(*g));
    graph_held_out.push_back(false);
  }
  for (long i = 0; i < random_graphs; ++i) {
    const uint64_t graph_seed = TrainingGraphSeed(seed, static_cast<uint64_t>(i));
    StatusOr<Graph> g = RandomTrainingGraph(graph_seed);
    if (!g.ok()) return fail(g.status());
    graphs.emplace_back(Numbered("random_", static_cast<uint64_t>(i)), std::move(*g));
    graph_held_out.push_back(i % 4 == 3);
  }

  // 1. Threshold predictor: grid search per (graph, profile).
  out << "braid train: SIMULATED (cost model + simulator on device profiles; no device is run)\n";
  std::vector<Instance> instances;
  SparoaModel trained;
  trained.energy_weight = energy_weight;
  trained.profiles = *profiles_flag;
  for (size_t p = 0; p < models.size(); ++p)
    for (size_t g = 0; g < graphs.size(); ++g) {
      Instance in;
      in.graph_name = graphs[g].first;
      in.profile_name = profile_names[p];
      in.graph = &graphs[g].second;
      in.model = models[p].get();
      for (const DeviceSpec& d : in.model->profile().devices) in.ctx.devices.push_back(d.name);
      in.ctx.cost_model = in.model;
      in.held_out = graph_held_out[g];
      StatusOr<std::vector<double>> f = ThresholdFeatures(*in.graph, in.ctx);
      if (!f.ok()) return fail(f.status());
      StatusOr<ThresholdGridResult> grid = GridSearchThresholds(*in.graph, in.ctx, energy_weight);
      if (!grid.ok()) return fail(grid.status());
      in.features = std::move(*f);
      in.grid = std::move(*grid);
      if (!in.held_out)
        if (Status s = trained.predictor.AddSample(in.features, in.grid.cost); !s.ok())
          return fail(s);
      instances.push_back(std::move(in));
    }
  if (Status s = trained.predictor.Fit(); !s.ok()) return fail(s);
  // The MLP baseline on the same samples (compared below, not saved).
  MlpThresholdPredictor mlp_predictor;
  for (const Instance& in : instances)
    if (!in.held_out)
      if (Status s = mlp_predictor.AddSample(in.features, in.grid.cost); !s.ok()) return fail(s);
  MlpPredictorOptions mlp_options;
  mlp_options.seed = seed;
  StatusOr<double> mlp_loss = mlp_predictor.Fit(mlp_options);
  if (!mlp_loss.ok()) return fail(mlp_loss.status());
  std::vector<double> mlp_top1, mlp_top3;
  std::vector<double> top1, top3, fixed_default;
  const int default_cell = 2 * static_cast<int>(IntensityThresholdGrid().size()) + 5;  // (0.5, 8)
  for (const Instance& in : instances) {
    if (!in.held_out) continue;
    const std::vector<int> cells = trained.predictor.RankCells(in.features, 3);
    top1.push_back(in.grid.cost[static_cast<size_t>(cells[0])]);
    double best3 = 1e30;
    for (int c : cells) best3 = std::min(best3, in.grid.cost[static_cast<size_t>(c)]);
    top3.push_back(best3);
    fixed_default.push_back(in.grid.cost[static_cast<size_t>(default_cell)]);
    const std::vector<int> mlp_cells = mlp_predictor.RankCells(in.features, 3);
    mlp_top1.push_back(in.grid.cost[static_cast<size_t>(mlp_cells[0])]);
    double mlp_best3 = 1e30;
    for (int c : mlp_cells) mlp_best3 = std::min(mlp_best3, in.grid.cost[static_cast<size_t>(c)]);
    mlp_top3.push_back(mlp_best3);
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "threshold predictor: k-NN over %d samples (%zu graphs x %zu profiles, %zu "
                "held-out pairs), %.1f s\n",
                trained.predictor.num_samples(), graphs.size(), models.size(), top1.size(),
                elapsed());
  out << line;

  // 2. SAC: environments start from the predicted thresholds.
  for (Instance& in : instances) {
    const ThresholdPair start = trained.predictor.Predict(in.features);
    StatusOr<std::unique_ptr<PlacementEnv>> env =
        PlacementEnv::Create(*in.graph, in.ctx, start, energy_weight);
    if (!env.ok()) return fail(env.status());
    in.env = std::move(*env);
  }
  std::vector<size_t> train_ids, eval_ids;
  for (size_t i = 0; i < instances.size(); ++i)
    (instances[i].held_out ? eval_ids : train_ids).push_back(i);
  SacOptions sac;
  sac.seed = seed;
  trained.agent =
      std::make_unique<DiscreteSac>(PlacementEnv::kStateSize, PlacementEnv::kNumActions, sac);
  auto greedy_eval = [&] {
    std::vector<double> c;
    for (size_t i : eval_ids) {
      RefinePlacement(*trained.agent, *instances[i].env);
      c.push_back(instances[i].env->current_cost());
    }
    return Mean(c);
  };
  std::ofstream csv;
  if (!csv_path->empty()) {
    csv.open(*csv_path);
    if (!csv) return fail(NotFound("cannot open " + *csv_path + " for writing"));
    csv << "episode,graph,profile,cost_vs_threshold_plan,return,critic_loss,actor_loss,alpha,"
           "entropy,greedy_heldout_cost\n";
  }
  std::mt19937_64 order_rng(seed);
  std::vector<double> curve;
  std::vector<std::pair<int, double>> eval_curve;
  const double initial_eval = greedy_eval();
  eval_curve.push_back({0, initial_eval});
  const long report_every = std::max(1L, episodes / 10);
  for (long e = 0; e < episodes && !train_ids.empty(); ++e) {
    if (e % static_cast<long>(train_ids.size()) == 0)
      std::shuffle(train_ids.begin(), train_ids.end(), order_rng);
    Instance& in = instances[train_ids[static_cast<size_t>(e) % train_ids.size()]];
    const SacEpisode ep = RunSacEpisode(*trained.agent, *in.env, true);
    curve.push_back(ep.final_cost);
    double eval = -1;
    if ((e + 1) % report_every == 0 || e + 1 == episodes) {
      eval = greedy_eval();
      eval_curve.push_back({static_cast<int>(e + 1), eval});
      const size_t from = curve.size() > static_cast<size_t>(report_every)
                              ? curve.size() - static_cast<size_t>(report_every)
                              : 0;
      std::snprintf(
          line, sizeof line,
          "[%-20s] episode %ld/%ld  train cost %.4f  held-out greedy %.4f  alpha %.4f  "
          "critic %.2e  %.1f s\n",
          std::string(static_cast<size_t>(20 * (e + 1) / episodes), '#').c_str(), e + 1, episodes,
          Mean(std::vector<double>(curve.begin() + static_cast<std::ptrdiff_t>(from), curve.end())),
          eval, trained.agent->alpha(), ep.losses.critic, elapsed());
      out << line << std::flush;
    }
    if (csv.is_open())
      csv << e + 1 << "," << in.graph_name << "," << in.profile_name << "," << ep.final_cost << ","
          << ep.episode_return << "," << ep.losses.critic << "," << ep.losses.actor << ","
          << trained.agent->alpha() << "," << ep.losses.entropy << ","
          << (eval >= 0 ? std::to_string(eval) : "") << "\n";
  }
  if (!svg_path->empty()) {
    std::ofstream svg(*svg_path);
    if (!svg) return fail(NotFound("cannot open " + *svg_path + " for writing"));
    WriteSvg(svg, curve, eval_curve);
  }
  if (Status s = SaveSparoaModel(trained, *out_path); !s.ok()) return fail(s);

  // 3. Summary on the held-out pairs: the whole sparoa pipeline (with its
  //    fallback) against the grid-best thresholds and the best single device.
  PolicyRegistry registry;
  RegisterSparoaPolicy(registry, {.policy_file = *out_path, .polish = false}, "sparoa-sac-only");
  RegisterSparoaPolicy(registry, {.policy_file = *out_path});
  std::vector<double> vs_grid_best, vs_single, sac_vs_threshold, polished_vs_single,
      polished_vs_sac;
  int sac_used = 0;
  for (size_t i : eval_ids) {
    Instance& in = instances[i];
    Simulator sim(in.env->space().sim);
    auto simulate = [&](const char* policy_name) -> StatusOr<double> {
      ASSIGN_OR_RETURN(Plan plan, MakePlan(registry, policy_name, *in.graph, in.ctx));
      ASSIGN_OR_RETURN(std::vector<SimPlacement> placement,
                       CompilePlacement(in.env->space().sim, plan));
      if (std::string(policy_name) == "sparoa-sac-only" &&
          plan.nodes.front().reason.find("SAC-refined threshold plan (") != std::string::npos)
        ++sac_used;
      return sim.Run(placement).latency_us;
    };
    StatusOr<double> latency = simulate("sparoa-sac-only");
    if (!latency.ok()) return fail(latency.status());
    StatusOr<double> polished = simulate("sparoa");
    if (!polished.ok()) return fail(polished.status());
    const double cpu = sim.Run(in.env->space().SingleDevice(0)).latency_us;
    const double gpu = sim.Run(in.env->space().SingleDevice(1)).latency_us;
    vs_grid_best.push_back(*latency / in.grid.best_latency_us);
    vs_single.push_back(std::min(cpu, gpu) / *latency);
    polished_vs_single.push_back(std::min(cpu, gpu) / *polished);
    polished_vs_sac.push_back(*polished / *latency);
    RefinePlacement(*trained.agent, *in.env);
    sac_vs_threshold.push_back(in.env->current_cost());
  }
  auto max_of = [](const std::vector<double>& v) {
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
  };
  if (eval_ids.empty()) {
    out << "summary: no held-out (graph, profile) pairs to evaluate on (a quarter of "
           "--random-graphs is held out: use 4 or more)\n";
    std::snprintf(line, sizeof line, "wrote %s\n", out_path->c_str());
    out << line;
    return kExitOk;
  }
  out << "summary (SIMULATED, " << eval_ids.size() << " held-out (graph, profile) pairs):\n";
  std::snprintf(line, sizeof line,
                "  threshold predictor, latency vs grid-best thresholds: top-1 mean %.4fx (max "
                "%.4fx), best of top-3 mean %.4fx (max %.4fx); fixed (0.5, 8) mean %.4fx\n",
                Mean(top1), max_of(top1), Mean(top3), max_of(top3), Mean(fixed_default));
  out << line;
  std::snprintf(line, sizeof line,
                "  MLP baseline (%d-%d-%d-%d tanh, %d epochs, train loss %.2e), same pairs: top-1 "
                "mean %.4fx (max %.4fx), best of top-3 mean %.4fx (max %.4fx)\n",
                kThresholdFeatureCount, mlp_options.hidden, mlp_options.hidden,
                ThresholdGridSize(), mlp_options.epochs, *mlp_loss, Mean(mlp_top1),
                max_of(mlp_top1), Mean(mlp_top3), max_of(mlp_top3));
  out << line;
  std::snprintf(line, sizeof line,
                "  SAC greedy refinement: cost %.4fx the predicted-threshold plan (%.4f before "
                "training)\n",
                Mean(sac_vs_threshold), initial_eval);
  out << line;
  std::snprintf(
      line, sizeof line,
      "  sparoa without polish (predictor + SAC + fallback): latency %.4fx the grid-best "
      "threshold plan; speedup over the best single device %.4fx (min %.4fx); SAC plan kept on "
      "%d of %zu\n",
      Mean(vs_grid_best), Mean(vs_single),
      vs_single.empty() ? 0.0 : *std::min_element(vs_single.begin(), vs_single.end()), sac_used,
      eval_ids.size());
  out << line;
  std::snprintf(line, sizeof line,
                "  sparoa with the simulator local-search polish (not RL): latency %.4fx the "
                "unpolished plan; speedup over the best single device %.4fx (min %.4fx)\n",
                Mean(polished_vs_sac), Mean(polished_vs_single),
                *std::min_element(polished_vs_single.begin(), polished_vs_single.end()));
  out << line;
  std::snprintf(line, sizeof line, "wrote %s (%ld episodes, seed %llu) in %.1f s\n",
                out_path->c_str(), episodes, seed, elapsed());
  out << line;
  return kExitOk;
}

}  // namespace braid::cli
