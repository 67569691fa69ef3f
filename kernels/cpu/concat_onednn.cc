// Concat on oneDNN's concat primitive, plain or channels-last. Concat only
// moves bytes, so every dtype maps to a oneDNN type of its size; 8-byte
// elements (i64) become pairs of s32 along an extra innermost dim (plain
// only). Inputs that are empty along the axis are skipped.
#include <algorithm>

#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/onednn_kernels.h"
#include "kernels/params/data_ops.h"

namespace braid {
namespace {

using dnnl::memory;

class ConcatOnednn final : public onednn::PrimitiveKernel {
 public:
  ConcatOnednn() : PrimitiveKernel("concat") {}

  Status Prepare(const PrepareArgs& args) override {
    SetNode(args);
    ASSIGN_OR_RETURN(const ConcatParams p, ParseConcat(args));
    const TensorDesc& out = args.outputs[0];
    const int axis = p.axis;
    memory::data_type type;
    bool split_pairs = false;
    switch (DataTypeSize(out.dtype)) {
      case 1: type = memory::data_type::u8; break;
      case 2: type = memory::data_type::f16; break;
      case 4: type = memory::data_type::s32; break;
      case 8: type = memory::data_type::s32; split_pairs = true; break;
      default: return Unimplemented(where() + ": element size for oneDNN");
    }
    if (out.rank() + (split_pairs ? 1 : 0) > DNNL_MAX_NDIMS)
      return Unimplemented(where() + ": rank for oneDNN concat");
    if (split_pairs && (out.layout != TensorLayout::kPlain ||
                        std::any_of(args.inputs.begin(), args.inputs.end(), [](const TensorDesc& d) {
                          return d.layout != TensorLayout::kPlain;
                        })))
      return Unimplemented(where() + ": 64-bit concat handles plain layouts only");
    for (size_t i = 0; i < args.inputs.size(); ++i)
      if (args.inputs[i].elements() > 0) used_inputs_.push_back(i);
    if (used_inputs_.empty()) return Unimplemented(where() + ": empty output");
    auto desc_of = [&](const TensorDesc& d) {
      if (!split_pairs) return onednn::DescOf(d, type);
      std::vector<int64_t> dims = d.dims;  // 64-bit values as s32 pairs: plain only
      dims.push_back(2);
      return onednn::PlainDesc(dims, type);
    };
    return BuildPrimitive(args, [&] {
      std::vector<memory::desc> src_mds;
      for (size_t i : used_inputs_)
        src_mds.push_back(desc_of(args.inputs[i]));
      dnnl::concat::primitive_desc pd(desc_of(out), axis, src_mds,
                                      context().engine,
                                      onednn::UserScratchpadAttr());
      exec().Init(context(), dnnl::concat(pd), pd.scratchpad_desc(),
                  args.num_threads);
      for (size_t i = 0; i < src_mds.size(); ++i)
        srcs_.push_back(exec().Bind(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i),
                                    src_mds[i]));
      dst_ = exec().Bind(DNNL_ARG_DST, pd.dst_desc());
      return Status::Ok();
    });
  }

  Status Run(const RunArgs& args) override {
    for (size_t i = 0; i < srcs_.size(); ++i)
      RETURN_IF_ERROR(
          onednn::SetHandle(srcs_[i], args.src[used_inputs_[i]], where()));
    RETURN_IF_ERROR(onednn::SetHandle(dst_, args.dst[0], where()));
    return Execute(args);
  }

 private:
  std::vector<size_t> used_inputs_;
  std::vector<memory> srcs_;
  memory dst_;
};

}  // namespace

std::unique_ptr<Kernel> CreateConcatOnednn() {
  return std::make_unique<ConcatOnednn>();
}

}  // namespace braid
