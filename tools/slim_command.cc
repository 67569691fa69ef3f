// braid slim MODEL [--widths W,...] [--batch B] [--threads T] [--devices D]
//                  [--iterations N] [--seed S]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <sstream>

#include "braid/slimmable.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

constexpr char kSlimHelp[] =
    "Usage: braid slim MODEL [--widths W,...] [--batch B] [--threads T]\n"
    "                  [--devices cpu|cpu,vgpu|cpu,cuda] [--iterations N] [--seed S]\n"
    "\n"
    "Runs a slimmable model (docs/slimmable.md; e.g. builtin:slim_resnet) segment\n"
    "by segment, each segment a Session at its width, the output of one the\n"
    "input of the next, on a random input. Prints per segment its width, the\n"
    "channels it hands on, its weight bytes and its median latency, then the\n"
    "chain's median and the first logits.\n"
    "\n"
    "  --widths W,...   one width per segment (default: every uniform width of\n"
    "                   the model in turn, a latency table per width)\n"
    "  --batch B        batch size (default 1)\n"
    "  --threads T      intra-op threads per Session (default 0: all cores)\n"
    "  --devices D      as braid run (default cpu)\n"
    "  --iterations N   timed runs of the chain (default 20; 2 warm-up runs first)\n"
    "  --seed S         seed of the random input (default 1)\n";

struct SegmentRun {
  std::unique_ptr<Session> session;
  double width = 1, input_width = 1;
  uint64_t weight_bytes = 0;
  std::vector<double> ms;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One run of the chain on `input`; the last segment's output is left in its Session.
Status RunChain(std::vector<SegmentRun>& segments, Tensor input, bool timed) {
  for (SegmentRun& s : segments) {
    RETURN_IF_ERROR(s.session->SetInput(s.session->inputs()[0].name, input));
    const auto start = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(s.session->Run());
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    if (timed) s.ms.push_back(took.count());
    ASSIGN_OR_RETURN(input, s.session->GetOutput(s.session->outputs()[0].name));
  }
  return Status::Ok();
}

}  // namespace

int RunSlim(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kSlimHelp;
    return kExitOk;
  }
  auto fail = [&](const Status& s) { return ReportError(err, "slim", s); };
  std::map<std::string, std::string> values;
  for (const char* flag : {"--widths", "--batch", "--threads", "--devices", "--iterations", "--seed"}) {
    StatusOr<std::optional<std::string>> v = scan.Value(flag);
    if (!v.ok()) return fail(v.status());
    if (v->has_value()) values[flag] = **v;
  }
  StatusOr<std::vector<std::string>> rest = scan.Positionals();
  if (!rest.ok()) return fail(rest.status());
  if (rest->size() != 1) {
    err << "braid slim: error: expected one MODEL\n" << kSlimHelp;
    return kExitBadInput;
  }
  auto integer = [&](const char* flag, long fallback, long lo) -> std::optional<long> {
    if (!values.count(flag)) return fallback;
    char* end = nullptr;
    const long v = std::strtol(values[flag].c_str(), &end, 10);
    if (end == values[flag].c_str() || *end != '\0' || v < lo) return std::nullopt;
    return v;
  };
  const std::optional<long> batch = integer("--batch", 1, 1), threads = integer("--threads", 0, 0),
                            iterations = integer("--iterations", 20, 1), seed = integer("--seed", 1, 0);
  if (!batch || !threads || !iterations || !seed)
    return fail(InvalidArgument("--batch, --iterations need an integer >= 1; --threads, --seed >= 0"));

  StatusOr<std::unique_ptr<SlimmableModel>> model = SlimmableModel::Open((*rest)[0]);
  if (!model.ok()) return fail(model.status());
  const int num_segments = (*model)->num_segments();
  std::vector<std::vector<double>> combinations;
  if (values.count("--widths")) {
    std::vector<double> widths;
    for (const std::string& item : SplitList(values["--widths"])) {
      char* end = nullptr;
      widths.push_back(std::strtod(item.c_str(), &end));
      if (end == item.c_str() || *end != '\0')
        return fail(InvalidArgument("--widths: '" + item + "' is not a number"));
    }
    if (static_cast<int>(widths.size()) != num_segments)
      return fail(InvalidArgument("--widths: the model has " + std::to_string(num_segments) +
                                  " segments, " + std::to_string(widths.size()) + " widths given"));
    combinations.push_back(widths);
  } else {
    for (double w : (*model)->widths()) combinations.emplace_back(num_segments, w);
  }
  SessionOptions options;
  options.num_threads = static_cast<int>(*threads);
  if (values.count("--devices")) options.devices = SplitList(values["--devices"]);

  out << "model: " << (*rest)[0] << " (" << num_segments << " segments, widths";
  for (double w : (*model)->widths()) out << " " << w;
  out << ")\n";
  for (const std::vector<double>& widths : combinations) {
    std::vector<SegmentRun> segments(static_cast<size_t>(num_segments));
    for (int s = 0; s < num_segments; ++s) {
      SegmentRun& run = segments[static_cast<size_t>(s)];
      run.width = widths[static_cast<size_t>(s)];
      run.input_width = s == 0 ? 1.0 : widths[static_cast<size_t>(s - 1)];
      StatusOr<std::unique_ptr<Session>> session =
          (*model)->OpenSegment(s, run.width, run.input_width, options);
      if (!session.ok()) return fail(session.status());
      StatusOr<uint64_t> bytes = (*model)->SegmentWeightBytes(s, run.width, run.input_width);
      if (!bytes.ok()) return fail(bytes.status());
      run.session = std::move(*session);
      run.weight_bytes = *bytes;
    }
    const TensorInfo& info = segments[0].session->inputs()[0];
    std::vector<int64_t> dims = info.dims;
    for (int64_t& d : dims) d = d < 0 ? *batch : d;
    int64_t elements = 1;
    for (int64_t d : dims) elements *= d;
    std::vector<float> image(static_cast<size_t>(elements));
    std::mt19937 rng(static_cast<uint32_t>(*seed));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (float& v : image) v = uniform(rng);
    const Tensor input = Tensor::Borrow(DataType::kF32, dims, image.data());
    for (int i = 0; i < 2 + *iterations; ++i)
      if (Status s = RunChain(segments, input, i >= 2); !s.ok()) return fail(s);

    out << "\nwidths";
    for (double w : widths) out << " " << w;
    out << " (batch " << *batch << ", " << *iterations << " runs; CPU-measured unless --devices says otherwise)\n";
    out << "  segment  width  in->out                 weights     median ms\n";
    std::vector<double> chain(static_cast<size_t>(*iterations), 0.0);
    for (int s = 0; s < num_segments; ++s) {
      const SegmentRun& run = segments[static_cast<size_t>(s)];
      for (size_t i = 0; i < run.ms.size(); ++i) chain[i] += run.ms[i];
      StatusOr<Tensor> y = run.session->GetOutput(run.session->outputs()[0].name);
      if (!y.ok()) return fail(y.status());
      std::ostringstream shape;
      shape << "[";
      for (size_t d = 0; d < y->dims().size(); ++d) shape << (d ? "," : "") << y->dims()[d];
      shape << "]";
      const std::string shapes = shape.str();
      out << "  " << s << "        " << Format("%-5.2f", run.width) << "  -> " << shapes
          << std::string(shapes.size() < 20 ? 20 - shapes.size() : 1, ' ')
          << Format("%8.1f KB", static_cast<double>(run.weight_bytes) / 1024.0) << "  "
          << Format("%8.3f", Median(run.ms)) << "\n";
    }
    out << "  chain median " << Format("%.3f", Median(chain)) << " ms\n";
    StatusOr<Tensor> logits = segments.back().session->GetOutput(segments.back().session->outputs()[0].name);
    if (!logits.ok()) return fail(logits.status());
    out << "  first outputs:";
    for (int64_t i = 0; i < std::min<int64_t>(5, logits->elements()); ++i)
      out << " " << Format("%.5g", logits->data<float>()[i]);
    out << "\n";
  }
  return kExitOk;
}

}  // namespace braid::cli
