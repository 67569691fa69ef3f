#include "kernels/params/broadcast.h"

#include <algorithm>
#include <string>

namespace braid {
namespace {

std::string DimsToString(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

}  // namespace

const char* BroadcastPatternName(BroadcastPattern pattern) {
  switch (pattern) {
    case BroadcastPattern::kSameShape: return "same-shape";
    case BroadcastPattern::kScalar: return "scalar";
    case BroadcastPattern::kPerChannel: return "per-channel";
    case BroadcastPattern::kGeneral: return "general";
  }
  return "unknown";
}

StatusOr<std::vector<int64_t>> BroadcastDims(
    std::span<const std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& s : shapes) {
    const size_t pad = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      const int64_t d = s[i];
      if (d < 0)
        return InvalidArgument(std::string("negative extent in shape ")
                                   .append(DimsToString(s)));
      int64_t& o = out[pad + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      std::string msg = "shapes do not broadcast:";
      for (const auto& t : shapes) msg.append(" ").append(DimsToString(t));
      msg.append(" (extent ")
          .append(std::to_string(o))
          .append(" vs ")
          .append(std::to_string(d))
          .append(" at output axis ")
          .append(std::to_string(pad + i))
          .append(")");
      return InvalidArgument(msg);
    }
  }
  return out;
}

bool BroadcastsTo(std::span<const int64_t> from, std::span<const int64_t> to) {
  if (from.size() > to.size()) return false;
  const size_t pad = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[pad + i]) return false;
  return true;
}

std::vector<int64_t> ContiguousStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

StatusOr<BroadcastPlan> BroadcastPlan::Make(
    std::span<const std::vector<int64_t>> input_dims) {
  ASSIGN_OR_RETURN(std::vector<int64_t> out, BroadcastDims(input_dims));
  return MakeForOutput(input_dims, out);
}

StatusOr<BroadcastPlan> BroadcastPlan::MakeForOutput(
    std::span<const std::vector<int64_t>> input_dims,
    std::span<const int64_t> output_dims) {
  if (input_dims.empty()) return InvalidArgument("broadcast of no inputs");
  if (input_dims.size() > static_cast<size_t>(kMaxBroadcastInputs))
    return Unimplemented(std::string("broadcast of ")
                             .append(std::to_string(input_dims.size()))
                             .append(" inputs (at most ")
                             .append(std::to_string(kMaxBroadcastInputs))
                             .append(")"));
  for (const auto& dims : input_dims) {
    if (!BroadcastsTo(dims, output_dims))
      return InvalidArgument(std::string("shape ")
                                 .append(DimsToString(dims))
                                 .append(" does not broadcast to ")
                                 .append(DimsToString(output_dims)));
  }
  BroadcastPlan plan;
  plan.output_dims_.assign(output_dims.begin(), output_dims.end());
  for (int64_t d : output_dims) plan.output_elements_ *= d;
  const size_t rank = output_dims.size();
  for (const auto& dims : input_dims) {
    BroadcastInput in;
    in.dims.assign(rank - dims.size(), 1);
    in.dims.insert(in.dims.end(), dims.begin(), dims.end());
    in.strides = ContiguousStrides(in.dims);
    for (size_t a = 0; a < rank; ++a) {
      if (in.dims[a] == 1) in.strides[a] = 0;
      in.elements *= in.dims[a];
    }
    plan.inputs_.push_back(std::move(in));
  }
  plan.Finish();
  if (plan.collapsed_rank() > kMaxBroadcastRank)
    return Unimplemented(std::string("broadcast of rank ")
                             .append(std::to_string(plan.collapsed_rank()))
                             .append(" after merging axes (at most ")
                             .append(std::to_string(kMaxBroadcastRank))
                             .append(")"));
  return plan;
}

bool BroadcastPlan::AllSameShape() const {
  return std::all_of(inputs_.begin(), inputs_.end(), [](const BroadcastInput& in) {
    return in.pattern == BroadcastPattern::kSameShape;
  });
}

void BroadcastPlan::Finish() {
  const size_t rank = output_dims_.size();
  for (BroadcastInput& in : inputs_) {
    if (in.dims == output_dims_) {
      in.pattern = BroadcastPattern::kSameShape;
    } else if (in.elements == 1) {
      in.pattern = BroadcastPattern::kScalar;
    } else {
      int axis = -1;
      int non_one = 0;
      for (size_t a = 0; a < rank; ++a) {
        if (in.dims[a] != 1) {
          ++non_one;
          axis = static_cast<int>(a);
        }
      }
      if (non_one == 1) {
        in.pattern = BroadcastPattern::kPerChannel;
        in.channel_axis = axis;
        in.channel_outer = 1;
        in.channel_inner = 1;
        for (int a = 0; a < axis; ++a) in.channel_outer *= output_dims_[static_cast<size_t>(a)];
        for (size_t a = static_cast<size_t>(axis) + 1; a < rank; ++a)
          in.channel_inner *= output_dims_[a];
      } else {
        in.pattern = BroadcastPattern::kGeneral;
      }
    }
  }

  // Collapsed form: drop output axes of extent 1, then merge an axis into
  // the next one whenever every input steps through both contiguously
  // (stride[outer] == stride[inner] * extent[inner]; also true when both
  // are stretched).
  const size_t n = inputs_.size();
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(n);
  for (size_t a = 0; a < rank; ++a) {
    if (output_dims_[a] == 1) continue;
    bool merge = !dims.empty();
    for (size_t i = 0; merge && i < n; ++i)
      merge = strides[i].back() == inputs_[i].strides[a] * output_dims_[a];
    if (merge) {
      dims.back() *= output_dims_[a];
      for (size_t i = 0; i < n; ++i) strides[i].back() = inputs_[i].strides[a];
    } else {
      dims.push_back(output_dims_[a]);
      for (size_t i = 0; i < n; ++i) strides[i].push_back(inputs_[i].strides[a]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& s : strides) s.push_back(0);
  }
  collapsed_dims_ = dims;
  collapsed_strides_.clear();
  for (const auto& s : strides)
    collapsed_strides_.insert(collapsed_strides_.end(), s.begin(), s.end());
}

}  // namespace braid
