// Slimmable models (docs/slimmable.md): a model cut into sequential segments
// that each run at a width from the model's set (e.g. 1, 0.75, 0.5, 0.25: the
// leading channels of every convolution), any per-segment combination chosen
// per request, from one weight blob and without reloading the model.
//
//   #include <braid/slimmable.h>
//
//   auto model = braid::SlimmableModel::Open("builtin:slim_resnet");  // or a .braid / .onnx
//   if (!model.ok()) { std::cerr << model.status().ToString() << "\n"; return 2; }
//   // Segment 0 at width 0.5, then segment 1 at 0.25 on segment 0's output.
//   auto first = (*model)->OpenSegment(0, 0.5, 1.0);
//   auto second = (*model)->OpenSegment(1, 0.25, 0.5);
//   // first: SetInput("input", image); Run(); GetOutput((*first)->outputs()[0].name)
//   // second: SetInput((*second)->inputs()[0].name, that output); Run(); ...
//
// A segment Session is an ordinary braid::Session (any SessionOptions:
// devices, policy, threads) over that segment's graph; a server keeps one per
// (segment, width, input width) it uses and drops it when idle.
#ifndef BRAID_SLIMMABLE_H_
#define BRAID_SLIMMABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "braid/braid.h"

namespace braid {

class SlimmableModel {
 public:
  virtual ~SlimmableModel() = default;

  // `model` as for Session::Open. NotFound when the model records no
  // segments and widths (it is not slimmable), InvalidArgument when they are
  // malformed.
  static StatusOr<std::unique_ptr<SlimmableModel>> Open(const std::string& model, bool fuse = true);

  virtual int num_segments() const = 0;
  virtual const std::vector<double>& widths() const = 0;  // descending, starts at 1

  // A Session running segment `segment` (0-based) with its convolutions at
  // `width`, its input being the previous segment's output computed at
  // `input_width` (ignored for segment 0). Widths must be the model's.
  virtual StatusOr<std::unique_ptr<Session>> OpenSegment(
      int segment, double width, double input_width,
      const SessionOptions& options = {}) const = 0;

  // Bytes of the weights such a Session holds (the memory a serving
  // instance of it costs beyond its activations).
  virtual StatusOr<uint64_t> SegmentWeightBytes(int segment, double width,
                                                double input_width) const = 0;
};

}  // namespace braid

#endif  // BRAID_SLIMMABLE_H_
