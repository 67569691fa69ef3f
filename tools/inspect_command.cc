// braid inspect MODEL [--json]
#include <cstdio>
#include <ostream>

#include "graph/annotate.h"
#include "graph/passes/passes.h"
#include "tools/commands.h"

namespace braid::cli {
namespace {

constexpr char kInspectHelp[] =
    "Usage: braid inspect MODEL [--json]\n"
    "\n"
    "Prints one row per node: name, op, output shape, GFLOPs, bytes moved,\n"
    "arithmetic intensity (FLOPs/byte), weight sparsity, activation sparsity\n"
    "(a.zero%: measured by `braid convert --activation-sparsity`, '-' when not\n"
    "measured) and parameters, then totals. FLOPs and bytes are per image\n"
    "(symbolic batch taken as 1). The op shows a fused activation (+Relu)\n"
    "and a compute precision other than f32 (:bf16, braid convert --precision).\n"
    "A .onnx or builtin: model is shown as the file has it (shapes inferred,\n"
    "nothing fused); a .braid file shows its stored annotations.\n"
    "\n"
    "  MODEL    a .onnx file, a .braid file, or builtin:NAME\n"
    "  --json   print {\"nodes\":[{\"name\",\"op\",\"activation\",\"precision\",\n"
    "           \"output_shape\",\"flops\",\n"
    "           \"bytes\",\"intensity\",\"weight_sparsity\",\"activation_sparsity\"\n"
    "           (null when not measured),\"params\"}...],\n"
    "           \"total\":{...}} instead of the table\n";

std::string OutputShape(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] == kNoValue) return "-";
  const Value& v = g.value(n.outputs[0]);
  return v.has_shape ? ShapeToString(v.shape) : "?";
}

std::string Clip(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return "..." + s.substr(s.size() - (width - 3));  // keep the informative tail
}

void PrintTable(const Graph& g, const ModelTotals& t, std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof(line), "%-4s %-40s %-18s %-20s %10s %10s %9s %8s %8s %10s\n",
                "#", "name", "op", "output shape", "GFLOPs", "MB moved",
                "FLOP/B", "w.zero%", "a.zero%", "params");
  out << line;
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    const Annotation& a = n.annotation;
    std::string op = n.op_type;
    const std::string act = n.attrs.GetString("activation", "");
    if (!act.empty()) op += "+" + act;
    const std::string precision = n.attrs.GetString("precision", "");
    if (!precision.empty()) op += ":" + precision;
    char activation[16] = "-";
    if (a.activation_sparsity >= 0)
      std::snprintf(activation, sizeof(activation), "%.1f", a.activation_sparsity * 100.0);
    std::snprintf(line, sizeof(line),
                  "%-4d %-40s %-18s %-20s %10.4f %10.3f %9.2f %8.1f %8s %10lld\n",
                  i, Clip(n.name, 40).c_str(), Clip(op, 18).c_str(),
                  Clip(OutputShape(g, n), 20).c_str(), a.flops / 1e9,
                  a.bytes / 1e6, a.intensity, a.weight_sparsity * 100.0, activation,
                  static_cast<long long>(a.params));
    out << line;
  }
  std::snprintf(line, sizeof(line),
                "total: %d nodes, %.4f GFLOPs, %.3f MB moved, %.3f M params, "
                "weight sparsity %.2f%%\n",
                t.nodes, t.flops / 1e9, t.bytes / 1e6, t.params / 1e6,
                t.weight_sparsity * 100.0);
  out << line;
}

void PrintJson(const std::string& model, const Graph& g, const ModelTotals& t,
               std::ostream& out) {
  out << "{\"model\":" << JsonString(model) << ",\"opset\":" << g.opset()
      << ",\"nodes\":[";
  for (int i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    const Annotation& a = n.annotation;
    out << (i ? ",\n" : "\n") << "{\"name\":" << JsonString(n.name)
        << ",\"op\":" << JsonString(n.op_type)
        << ",\"activation\":" << JsonString(n.attrs.GetString("activation", ""))
        << ",\"precision\":" << JsonString(n.attrs.GetString("precision", "f32"))
        << ",\"output_shape\":" << JsonString(OutputShape(g, n))
        << ",\"flops\":" << JsonNumber(a.flops)
        << ",\"bytes\":" << JsonNumber(a.bytes)
        << ",\"intensity\":" << JsonNumber(a.intensity)
        << ",\"weight_sparsity\":" << JsonNumber(a.weight_sparsity)
        << ",\"activation_sparsity\":"
        << (a.activation_sparsity < 0 ? "null" : JsonNumber(a.activation_sparsity))
        << ",\"params\":" << a.params
        << ",\"device_pin\":" << JsonString(n.device_pin) << "}";
  }
  out << "\n],\"total\":{\"nodes\":" << t.nodes
      << ",\"flops\":" << JsonNumber(t.flops)
      << ",\"bytes\":" << JsonNumber(t.bytes)
      << ",\"intensity\":" << JsonNumber(t.bytes > 0 ? t.flops / t.bytes : 0)
      << ",\"params\":" << t.params
      << ",\"weight_sparsity\":" << JsonNumber(t.weight_sparsity) << "}}\n";
}

}  // namespace

int RunInspect(Args args, std::ostream& out, std::ostream& err) {
  ArgScanner scan(args);
  if (scan.Flag("--help") || scan.Flag("-h")) {
    out << kInspectHelp;
    return kExitOk;
  }
  const bool json = scan.Flag("--json");
  StatusOr<std::vector<std::string>> pos = scan.Positionals();
  if (!pos.ok()) return ReportError(err, "inspect", pos.status());
  if (pos->size() != 1) {
    err << "braid inspect: error: expected one model\n\n" << kInspectHelp;
    return kExitBadInput;
  }
  const std::string& path = (*pos)[0];
  StatusOr<LoadedModel> model = LoadModel(path);
  if (!model.ok()) return ReportError(err, "inspect", model.status());
  Graph& g = model->graph;
  if (model->format != ModelFormat::kBraid) {
    if (Status s = InferShapes(g); !s.ok())
      return ReportError(err, "inspect", s.WithPrefix(path));
    if (Status s = Annotate(g); !s.ok())
      return ReportError(err, "inspect", s.WithPrefix(path));
  }
  const ModelTotals totals = ComputeTotals(g);
  if (json) {
    PrintJson(path, g, totals, out);
  } else {
    PrintTable(g, totals, out);
  }
  return kExitOk;
}

}  // namespace braid::cli
