// SlimmableModel (include/braid/slimmable.h): the model's graph is loaded
// once; each OpenSegment derives the segment's graph at its width
// (graph/slimmable.h) and opens a Session on it as Session::Open would.
#include "braid/slimmable.h"

#include <utility>

#include "graph/slimmable.h"
#include "api/model_loader.h"
#include "api/session_open.h"

namespace braid {
namespace {

class SlimmableModelImpl final : public SlimmableModel {
 public:
  SlimmableModelImpl(Graph graph, SlimSpec spec) : graph_(std::move(graph)), spec_(std::move(spec)) {}

  int num_segments() const override { return spec_.num_segments(); }
  const std::vector<double>& widths() const override { return spec_.widths; }

  StatusOr<std::unique_ptr<Session>> OpenSegment(int segment, double width, double input_width,
                                                 const SessionOptions& options) const override {
    return OpenSessionWithGraph(
        options, [&] { return SlimSegmentGraph(graph_, spec_, segment, width, input_width); });
  }

  StatusOr<uint64_t> SegmentWeightBytes(int segment, double width,
                                        double input_width) const override {
    ASSIGN_OR_RETURN(Graph part, SlimSegmentGraph(graph_, spec_, segment, width, input_width));
    uint64_t bytes = 0;
    for (const Value& v : part.values())
      if (v.constant) bytes += v.constant->size();
    return bytes;
  }

 private:
  const Graph graph_;
  const SlimSpec spec_;
};

}  // namespace

StatusOr<std::unique_ptr<SlimmableModel>> SlimmableModel::Open(const std::string& model, bool fuse) {
  ASSIGN_OR_RETURN(Graph graph, LoadGraphForExecution(model, fuse));
  StatusOr<SlimSpec> spec = ReadSlimSpec(graph);
  if (!spec.ok())
    return Status(spec.status().code(), "'" + model + "': " + spec.status().message());
  return std::unique_ptr<SlimmableModel>(new SlimmableModelImpl(std::move(graph), std::move(*spec)));
}

}  // namespace braid
