// braid convert IN -o OUT [--no-fuse] [--opset-check] [--prune RATIO ...]
//                          [--activation-sparsity N ...] [--precision int8|bf16 ...]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <vector>

#include "graph/annotate.h"
#include "graph/braid_format.h"
#include "graph/onnx_importer.h"
#include "graph/op_schema.h"
#include "graph/passes/passes.h"
#include "graph/passes/prune.h"
#include "graph/slimmable.h"
#include "models/builtin.h"
#include "tools/cli_activation_sparsity.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

constexpr char kConvertHelp[] =
    "Usage: braid convert IN -o OUT [--no-fuse] [--opset-check] [--quiet]\n"
    "                     [--prune RATIO [--prune-structure S] [--prune-skip L]]\n"
    "                     [--activation-sparsity N\n"
    "                      [--activation-sparsity-input NAME=FILE.npy]...]\n"
    "                     [--precision int8|bf16 [--calibration-samples N]\n"
    "                      [--calibration-input NAME=FILE.npy]...\n"
    "                      [--calibration-method M] [--min-cosine C]\n"
    "                      [--sensitivity-report FILE.csv]]\n"
    "\n"
    "Converts a model into braid's .braid format: imports it, infers shapes\n"
    "(symbolic batch stays symbolic), folds constants, folds BatchNorm into\n"
    "Conv/Gemm, fuses bias + activation, tags every node with FLOPs, bytes\n"
    "moved, intensity and weight sparsity, and writes FlatBuffers with the\n"
    "weights in one 64-byte aligned blob.\n"
    "\n"
    "  IN               a .onnx file, or builtin:NAME (list below)\n"
    "  -o, --output OUT the .braid file to write\n"
    "  --no-fuse        keep BatchNorm and activations as separate nodes\n"
    "  --opset-check    only check that the opset and every operator are\n"
    "                   supported (lists every unsupported node); write nothing\n"
    "  -q, --quiet      no progress lines on stderr\n"
    "  --slim-segments V,...  record the model as slimmable (docs/slimmable.md):\n"
    "                   the values that end its segments (the last segment ends\n"
    "                   at the outputs); needs --slim-widths\n"
    "  --slim-widths W,...    the widths each segment may run at, 1 among them\n"
    "  --prune RATIO    magnitude-prune each Conv/Gemm/MatMul weight: zero the\n"
    "                   RATIO (0..1) of it with the smallest |w|, per layer,\n"
    "                   after the passes and before annotation. For sparsity\n"
    "                   experiments: it CHANGES THE MODEL'S ACCURACY.\n"
    "  --prune-structure unstructured (default) or block:RxC (R outputs x C\n"
    "                   reduction elements zeroed together, e.g. block:4x1)\n"
    "  --prune-skip L   comma list of layers kept dense: first (the stem\n"
    "                   conv), depthwise\n"
    "Sparsity already in a model's weights is annotated without --prune.\n"
    "  --activation-sparsity N\n"
    "                   after annotation, run the model N times on the CPU on\n"
    "                   random N(0,1) inputs and store per node the fraction of\n"
    "                   zeros in the activations it reads (e.g. after a ReLU;\n"
    "                   `braid inspect` shows it; a batch-1 Gemm/MatMul at\n"
    "                   >= 30% zeros then runs the input-sparse kernel).\n"
    "                   Random inputs only approximate real data: give real\n"
    "                   inputs with the next flag\n"
    "  --activation-sparsity-input NAME=FILE.npy\n"
    "                   real data for input NAME (repeatable; NAME given again =\n"
    "                   one more sample). When every input is given, the model\n"
    "                   runs once per file and N is not used. Integer and bool\n"
    "                   inputs must be given (random ids are not valid)\n"
    "  --precision P    fp32 (default), bf16 or int8.\n"
    "                   bf16: every Conv, MatMul and Gemm computes in bfloat16\n"
    "                   (inputs and weights rounded, sums and outputs f32; the\n"
    "                   file keeps f32 weights). Runs natively on CPUs with\n"
    "                   AVX512_BF16 or AMX, emulated (slower than f32) on\n"
    "                   other AVX-512 CPUs, on the reference kernels (far\n"
    "                   slower) elsewhere; a device without bf16 kernels\n"
    "                   (cuda) declines those nodes, which then run on the\n"
    "                   CPU. The outputs' cosine to f32 on calibration\n"
    "                   samples is printed (a warning below --min-cosine).\n"
    "                   Not with --prune / --activation-sparsity (the sparse\n"
    "                   kernels compute in f32 only).\n"
    "                   int8: static int8 quantization. The\n"
    "                   model runs on the CPU on calibration inputs; every\n"
    "                   Conv, fully connected Gemm, MatMul with constant B,\n"
    "                   same-shape Add, Concat and MaxPool whose tensors were\n"
    "                   measured gets uint8 activations (min-max range) and\n"
    "                   int8 per-channel weights, as ONNX Runtime's\n"
    "                   quantize_static writes them; the rest stays f32 and\n"
    "                   is listed. It CHANGES THE MODEL'S OUTPUTS (by about a\n"
    "                   quantization step per layer): check them\n"
    "  --calibration-samples N\n"
    "                   random N(0,1) calibration runs (default 8) when no\n"
    "                   input is given: ranges from random data fit real data\n"
    "                   badly; give real inputs with the next flag\n"
    "  --calibration-input NAME=FILE.npy\n"
    "                   real data for input NAME (repeatable, one sample each)\n"
    "  --calibration-method M\n"
    "                   minmax (default): each tensor's range is the smallest\n"
    "                   and largest value seen; percentile[:P] (P default\n"
    "                   99.99): from the P-th and (100-P)-th percentiles, so a\n"
    "                   few outliers do not coarsen every other value (the\n"
    "                   calibration runs twice)\n"
    "  --min-cosine C   when the int8 outputs' cosine similarity to f32 on the\n"
    "                   calibration inputs is below C (default 0.99), the\n"
    "                   layers that move the outputs most when quantized\n"
    "                   alone stay f32, as few as reach C (listed as kept\n"
    "                   f32). 0: no check, every layer that can be int8 is\n"
    "  --sensitivity-report FILE.csv\n"
    "                   per quantized layer, worst first: the model's output\n"
    "                   cosine with it alone int8 (the ranking), the error\n"
    "                   quantizing its inputs and weights adds (SQNR in dB,\n"
    "                   cosine to an f32 twin at the same inputs) and the\n"
    "                   precision it got\n";

class Stopwatch {
 public:
  double ElapsedMs() const {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
};

// Progress on stderr: "[2/4] passes ... 35 ms".
class Progress {
 public:
  Progress(std::ostream& err, bool quiet, int steps)
      : err_(err), quiet_(quiet), steps_(steps) {}
  void Begin(const std::string& what) {
    ++step_;
    watch_ = Stopwatch();
    if (!quiet_) err_ << "[" << step_ << "/" << steps_ << "] " << what << " ... " << std::flush;
  }
  void End(const std::string& detail = "") {
    if (quiet_) return;
    char ms[32];
    std::snprintf(ms, sizeof(ms), "%.0f ms", watch_.ElapsedMs());
    err_ << ms << (detail.empty() ? "" : "  (" + detail + ")") << "\n";
  }
  void Fail() {
    if (!quiet_) err_ << "failed\n";
  }

 private:
  std::ostream& err_;
  bool quiet_;
  int steps_;
  int step_ = 0;
  Stopwatch watch_;
};

void PrintBuiltins(std::ostream& out) {
  out << "\nBuilt-in models (seeded random weights):\n";
  for (const BuiltinModelInfo& m : ListBuiltinModels())
    out << "  builtin:" << m.name << std::string(m.name.size() < 20 ? 20 - m.name.size() : 1, ' ')
        << m.description << "\n";
}

// Lists the opset and every unsupported node; never writes a file.
int OpsetCheck(const std::string& in, std::ostream& out, std::ostream& err) {
  StatusOr<LoadedModel> m = LoadModel(in, /*reject_unsupported_ops=*/false);
  if (!m.ok()) return ReportError(err, "convert", m.status());
  const Graph& g = m->graph;
  std::map<std::string, int> unsupported;
  std::vector<std::string> nodes;
  for (const Node& n : g.nodes()) {
    if (IsSupportedOp(n.op_type)) continue;
    ++unsupported[n.op_type];
    nodes.push_back("node '" + n.name + "' (" + n.op_type + ")");
  }
  out << in << ": opset " << g.opset() << " (braid reads " << kMinOnnxOpset
      << ".." << kMaxOnnxOpset << "), " << g.num_nodes() << " nodes\n";
  if (unsupported.empty()) {
    out << "all operators supported\n";
    return kExitOk;
  }
  out << nodes.size() << " unsupported nodes:\n";
  for (const std::string& n : nodes) out << "  " << n << "\n";
  return kExitBadInput;
}

}  // namespace

int RunConvert(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kConvertHelp;
    PrintBuiltins(out);
    return kExitOk;
  }
  const bool no_fuse = scan.Flag("--no-fuse");
  const bool opset_check = scan.Flag("--opset-check");
  const bool quiet = scan.Flag("--quiet") || scan.Flag("-q");
  std::optional<PruneOptions> prune;
  {
    StatusOr<std::optional<std::string>> ratio = scan.Value("--prune");
    StatusOr<std::optional<std::string>> structure = scan.Value("--prune-structure");
    StatusOr<std::optional<std::string>> skip = scan.Value("--prune-skip");
    for (const auto* v : {&ratio, &structure, &skip})
      if (!v->ok()) return ReportError(err, "convert", v->status());
    if (!ratio->has_value() && (structure->has_value() || skip->has_value()))
      return ReportError(err, "convert",
                         InvalidArgument("--prune-structure and --prune-skip need --prune RATIO"));
    if (ratio->has_value()) {
      PruneOptions options;
      char* end = nullptr;
      const std::string& text = **ratio;
      options.ratio = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size() ||
          !(options.ratio >= 0.0 && options.ratio <= 1.0))
        return ReportError(err, "convert",
                           InvalidArgument("--prune needs a fraction in [0, 1], got '" +
                                           text + "'"));
      if (structure->has_value())
        if (Status s = ParsePruneStructure(**structure, options); !s.ok())
          return ReportError(err, "convert", s);
      if (skip->has_value())
        if (Status s = ParsePruneSkip(**skip, options); !s.ok())
          return ReportError(err, "convert", s);
      prune = options;
    }
  }
  StatusOr<std::optional<std::string>> slim_segments = scan.Value("--slim-segments");
  StatusOr<std::optional<std::string>> slim_widths = scan.Value("--slim-widths");
  for (const auto* v : {&slim_segments, &slim_widths})
    if (!v->ok()) return ReportError(err, "convert", v->status());
  if (slim_segments->has_value() && !slim_widths->has_value())
    return ReportError(err, "convert", InvalidArgument("--slim-segments needs --slim-widths"));
  StatusOr<std::optional<ActivationSparsityFlags>> activation =
      ParseActivationSparsityFlags(scan);
  if (!activation.ok()) return ReportError(err, "convert", activation.status());
  StatusOr<std::optional<PrecisionFlags>> precision = ParsePrecisionFlags(scan);
  if (!precision.ok()) return ReportError(err, "convert", precision.status());
  const std::optional<PrecisionFlags> int8 =
      *precision && !(*precision)->bf16 ? *precision : std::nullopt;
  const std::optional<PrecisionFlags> bf16 =
      *precision && (*precision)->bf16 ? *precision : std::nullopt;
  if (int8 && no_fuse)
    return ReportError(err, "convert",
                       InvalidArgument("--precision int8 needs fusion (FoldQdq); drop --no-fuse"));
  // Both read f32 weights / activations, which int8 conversion replaces.
  if (bf16 && (prune || *activation))
    return ReportError(err, "convert",
                       InvalidArgument("--precision bf16 does not combine with --prune or "
                                       "--activation-sparsity (the sparse kernels they are for "
                                       "compute in f32 only)"));
  if (int8 && (prune || *activation))
    return ReportError(err, "convert",
                       InvalidArgument("--precision int8 does not combine with --prune or "
                                       "--activation-sparsity (they act on f32 weights and "
                                       "activations); convert in two steps"));
  StatusOr<std::optional<std::string>> output = scan.Value("--output");
  if (!output.ok()) return ReportError(err, "convert", output.status());
  if (!output->has_value()) {
    output = scan.Value("-o");
    if (!output.ok()) return ReportError(err, "convert", output.status());
  }
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return ReportError(err, "convert", pos.status());
  if (pos->size() != 1) {
    err << "braid convert: error: expected one input model\n\n" << kConvertHelp;
    return kExitBadInput;
  }
  const std::string& in = (*pos)[0];
  if (opset_check) return OpsetCheck(in, out, err);
  if (!output->has_value()) {
    err << "braid convert: error: missing -o OUT\n\n" << kConvertHelp;
    return kExitBadInput;
  }
  const std::string& out_path = **output;

  Progress progress(err, quiet,
                    4 + (prune ? 1 : 0) + (*activation ? 1 : 0) + (*precision ? 1 : 0));
  progress.Begin("load " + in);
  StatusOr<LoadedModel> model = LoadModel(in);
  if (!model.ok()) {
    progress.Fail();
    return ReportError(err, "convert", model.status());
  }
  Graph& g = model->graph;
  const int imported_nodes = g.num_nodes();
  progress.End(std::to_string(imported_nodes) + " nodes, opset " +
               std::to_string(g.opset()));

  progress.Begin(no_fuse ? "passes (no fusion)" : "passes");
  PassOptions pass_options;
  pass_options.fuse = !no_fuse;
  // Quantization wants each Relu as its own node; the passes run again after.
  pass_options.fuse_activations = !int8;
  if (Status s = RunDefaultPasses(g, pass_options); !s.ok()) {
    progress.Fail();
    return ReportError(err, "convert", s.WithPrefix(in));
  }
  progress.End(std::to_string(imported_nodes) + " -> " +
               std::to_string(g.num_nodes()) + " nodes");
  if (bf16) {
    progress.Begin(bf16->min_cosine > 0 ? "bf16 (accuracy check on the CPU)" : "bf16");
    StatusOr<std::string> summary = Bf16ForCli(*bf16, g, err, quiet);
    if (!summary.ok()) {
      progress.Fail();
      return ReportError(err, "convert", summary.status().WithPrefix(in));
    }
    progress.End();
    out << *summary;
  }
  if (int8) {
    const PrecisionFlags& flags = *int8;
    progress.Begin("int8 calibration (" +
                   (flags.inputs.empty() ? std::to_string(flags.samples) + " random samples"
                                         : std::string("given inputs")) +
                   ", CPU)");
    StatusOr<std::string> summary = QuantizeForCli(flags, g, err, quiet);
    if (!summary.ok()) {
      progress.Fail();
      return ReportError(err, "convert", summary.status().WithPrefix(in));
    }
    progress.End(std::to_string(g.num_nodes()) + " nodes");
    out << *summary;
  }
  if (slim_widths->has_value()) {
    // After the passes: the boundaries must name values of the graph as stored.
    SlimSpec spec;
    if (slim_segments->has_value()) spec.boundaries = SplitList(**slim_segments);
    for (const std::string& item : SplitList(**slim_widths)) {
      char* end = nullptr;
      spec.widths.push_back(std::strtod(item.c_str(), &end));
      if (end == item.c_str() || *end != '\0')
        return ReportError(err, "convert", InvalidArgument("--slim-widths: '" + item + "' is not a number"));
    }
    std::sort(spec.widths.rbegin(), spec.widths.rend());
    if (Status s = WriteSlimSpec(spec, g); !s.ok())
      return ReportError(err, "convert", s.WithPrefix("--slim-segments / --slim-widths"));
    // Every segment at every width must derive, or serving fails later.
    for (int segment = 0; segment < spec.num_segments(); ++segment)
      for (double width : spec.widths)
        for (double input_width : segment == 0 ? std::vector<double>{1.0} : spec.widths)
          if (StatusOr<Graph> part = SlimSegmentGraph(g, spec, segment, width, input_width); !part.ok())
            return ReportError(err, "convert", part.status().WithPrefix("segment " + std::to_string(segment)));
  }

  if (prune) {
    progress.Begin("prune");
    StatusOr<PruneReport> report = PruneWeights(g, *prune);
    if (!report.ok()) {
      progress.Fail();
      return ReportError(err, "convert", report.status().WithPrefix(in));
    }
    progress.End(std::to_string(report->layers.size()) + " layers");
    char line[256];
    std::snprintf(line, sizeof(line),
                  "pruned %zu layers to %.1f%% (%s): %lld of %lld weights are now "
                  "zero (%lld newly zeroed), %zu layers kept dense. Pruning changes "
                  "the model's accuracy.\n",
                  report->layers.size(), prune->ratio * 100.0,
                  prune->block_rows == 1 && prune->block_cols == 1
                      ? "unstructured"
                      : ("block " + std::to_string(prune->block_rows) + "x" +
                         std::to_string(prune->block_cols)).c_str(),
                  static_cast<long long>(report->zeros_after),
                  static_cast<long long>(report->elements),
                  static_cast<long long>(report->zeros_after - report->zeros_before),
                  report->skipped.size());
    out << line;
  }

  progress.Begin("annotate");
  if (Status s = Annotate(g); !s.ok()) {
    progress.Fail();
    return ReportError(err, "convert", s.WithPrefix(in));
  }
  const ModelTotals totals = ComputeTotals(g);
  progress.End();

  if (*activation) {
    const ActivationSparsityFlags& flags = **activation;
    progress.Begin("activation sparsity (" +
                   (flags.inputs.empty() ? std::to_string(flags.samples) + " random samples"
                                         : std::string("given inputs")) +
                   ", CPU)");
    StatusOr<ActivationSparsityReport> report =
        MeasureActivationSparsityForCli(flags, g, err, quiet);
    if (!report.ok()) {
      progress.Fail();
      return ReportError(err, "convert", report.status().WithPrefix(in));
    }
    progress.End(std::to_string(report->nodes.size()) + " nodes");
    out << ActivationSparsitySummary(*report);
  }

  progress.Begin("write " + out_path);
  if (Status s = SaveBraidFile(g, out_path); !s.ok()) {
    progress.Fail();
    err << "braid convert: error: " << s.message() << "\n";
    return kExitFailure;
  }
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(out_path, ec);
  progress.End();

  char line[256];
  std::snprintf(line, sizeof(line),
                "wrote %s: %d nodes, %.2f M params, %.3f GFLOPs per image, "
                "weight sparsity %.1f%%, %.1f MB\n",
                out_path.c_str(), g.num_nodes(), totals.params / 1e6,
                totals.flops / 1e9, totals.weight_sparsity * 100.0,
                ec ? 0.0 : static_cast<double>(file_bytes) / 1e6);
  out << line;
  return kExitOk;
}

}  // namespace braid::cli
