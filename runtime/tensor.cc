#include <cstdlib>
#include <cstring>
#include <new>

#include "braid/braid.h"

namespace braid {

Tensor Tensor::Allocate(DataType dtype, std::vector<int64_t> dims) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  const size_t bytes = t.bytes();
  const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  t.owned_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  t.data_ = p;
  return t;
}

Tensor Tensor::Borrow(DataType dtype, std::vector<int64_t> dims, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.data_ = data;
  return t;
}

int64_t Tensor::elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

size_t Tensor::bytes() const {
  return static_cast<size_t>(elements()) * DataTypeSize(dtype_);
}

std::string TensorInfo::ToString() const {
  std::string s = name + ": " + DataTypeName(dtype) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += (i < symbols.size() && !symbols[i].empty()) ? symbols[i]
                                                     : std::to_string(dims[i]);
  }
  return s + "]";
}

}  // namespace braid
