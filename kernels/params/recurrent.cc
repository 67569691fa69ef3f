#include "kernels/params/recurrent.h"

#include <vector>

#include "kernels/params/parse_util.h"

namespace braid {

using params_internal::HasInput;
using params_internal::HasOutput;

StatusOr<RecurrentParams> ParseRecurrent(const PrepareArgs& args) {
  if (args.node == nullptr) return InvalidArgument("kernel: PrepareArgs without node");
  StatusOr<RecurrentAttrs> parsed = ParseRecurrentAttrs(*args.node);
  if (!parsed.ok()) return params_internal::Invalid(args, parsed.status().message());
  RecurrentParams p;
  p.attrs = *parsed;
  const bool lstm = p.attrs.cell == RecurrentCell::kLstm;
  const size_t max_inputs = lstm ? 8 : 6;
  if (args.inputs.size() < 3 || args.inputs.size() > max_inputs || !HasInput(args, 0) ||
      !HasInput(args, 1) || !HasInput(args, 2))
    return params_internal::Invalid(args, "needs X, W and R (and at most " + std::to_string(max_inputs) +
                                              " inputs)");
  for (size_t i = 0; i < args.inputs.size(); ++i)
    if (HasInput(args, i) && i != 4 && args.inputs[i].dtype != DataType::kF32)
      return params_internal::Unsupported(args, args.node->op_type + " supports f32 only");
  const TensorDesc& x = args.inputs[0];
  const TensorDesc& r = args.inputs[2];
  if (x.rank() != 3 || r.rank() != 3)
    return params_internal::Invalid(args, "X " + x.ToString() + " and R " + r.ToString() + " must be 3-D");
  p.seq = p.attrs.layout == 0 ? x.dims[0] : x.dims[1];
  p.batch = p.attrs.layout == 0 ? x.dims[1] : x.dims[0];
  p.input = x.dims[2];
  p.hidden = p.attrs.hidden_size > 0 ? p.attrs.hidden_size : r.dims[2];
  p.dirs = p.attrs.num_directions;
  const int64_t gh = p.GateRows();
  auto expect = [&](size_t i, const char* name, std::vector<int64_t> dims) -> Status {
    if (!HasInput(args, i) || args.inputs[i].dims == dims) return Status::Ok();
    return params_internal::Invalid(args, std::string(name) + " " + args.inputs[i].ToString() + " must be " +
                                              params_internal::IntsToString(dims));
  };
  const std::vector<int64_t> state = p.attrs.layout == 0 ? std::vector<int64_t>{p.dirs, p.batch, p.hidden}
                                                         : std::vector<int64_t>{p.batch, p.dirs, p.hidden};
  RETURN_IF_ERROR(expect(1, "W", {p.dirs, gh, p.input}));
  RETURN_IF_ERROR(expect(2, "R", {p.dirs, gh, p.hidden}));
  RETURN_IF_ERROR(expect(3, "B", {p.dirs, 2 * gh}));
  RETURN_IF_ERROR(expect(4, "sequence_lens", {p.batch}));
  if (HasInput(args, 4) && args.inputs[4].dtype != DataType::kI32)
    return params_internal::Invalid(args, "sequence_lens must be i32");
  RETURN_IF_ERROR(expect(5, "initial_h", state));
  if (lstm) {
    RETURN_IF_ERROR(expect(6, "initial_c", state));
    RETURN_IF_ERROR(expect(7, "P", {p.dirs, 3 * p.hidden}));
  }
  p.has_b = HasInput(args, 3);
  p.has_lens = HasInput(args, 4);
  p.has_h0 = HasInput(args, 5);
  p.has_c0 = lstm && HasInput(args, 6);
  p.has_p = lstm && HasInput(args, 7);
  const std::vector<int64_t> y = p.attrs.layout == 0 ? std::vector<int64_t>{p.seq, p.dirs, p.batch, p.hidden}
                                                     : std::vector<int64_t>{p.batch, p.seq, p.dirs, p.hidden};
  if (args.outputs.size() > (lstm ? 3u : 2u)) return params_internal::Invalid(args, "too many outputs");
  bool any = false;
  for (size_t o = 0; o < args.outputs.size(); ++o) {
    if (!HasOutput(args, o)) continue;
    any = true;
    const std::vector<int64_t>& want = o == 0 ? y : state;
    if (args.outputs[o].dims != want || args.outputs[o].dtype != DataType::kF32)
      return params_internal::Invalid(args, "output " + std::to_string(o) + " " + args.outputs[o].ToString() +
                                                " must be " + params_internal::IntsToString(want));
  }
  if (!any) return params_internal::Invalid(args, "no output is requested");
  p.has_y = HasOutput(args, 0);
  p.has_yh = HasOutput(args, 1);
  p.has_yc = lstm && HasOutput(args, 2);
  p.where = args.Where();
  return p;
}

Status CheckSequenceLens(const RecurrentParams& p, const int32_t* lens) {
  for (int64_t b = 0; lens != nullptr && b < p.batch; ++b)
    if (lens[b] < 0 || lens[b] > p.seq)
      return InvalidArgument(p.where + ": sequence_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                             " outside [0, " + std::to_string(p.seq) + "]");
  return Status::Ok();
}

}  // namespace braid
