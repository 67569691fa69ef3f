// braid's public vocabulary types: Status, StatusOr<T> and DataType.
//
//   braid::StatusOr<std::unique_ptr<braid::Session>> s = braid::Session::Open("m.braid");
//   if (!s.ok()) { std::cerr << s.status().ToString() << "\n"; return 2; }
//
// Library errors (protobuf, FlatBuffers, oneDNN, CUDA) are translated into a
// Status at one place per backend; asserts are for programmer errors only.
#ifndef BRAID_TYPES_H_
#define BRAID_TYPES_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace braid {

// Numbering is part of the .braid format: append only.
enum class DataType : uint8_t {
  kUndefined = 0,
  kF32 = 1,
  kF16 = 2,
  kI64 = 3,
  kI32 = 4,
  kI8 = 5,
  kU8 = 6,
  kBool = 7,
  kF64 = 8,
  kBF16 = 9,
  kI16 = 10,
  kU16 = 11,
  kU32 = 12,
  kU64 = 13,
};

size_t DataTypeSize(DataType type);        // bytes per element; 0 if undefined
const char* DataTypeName(DataType type);   // "f32", "i64", ...

}  // namespace braid

namespace braid {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // bad input: malformed model, wrong shape, bad flag
  kNotFound,         // missing file, value or op
  kUnimplemented,    // unsupported op, opset or feature
  kOutOfRange,       // index or offset outside its container
  kDataLoss,         // truncated or corrupt file
  kFailedPrecondition,
  kResourceExhausted,  // allocation failure
  kUnavailable,        // device absent
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (for adding file or
  // node context while an error travels up).
  Status WithPrefix(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status OutOfRange(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status DataLoss(std::string m) {
  return Status(StatusCode::kDataLoss, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status Unavailable(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "StatusOr built from an OK status without value");
    if (status_.ok()) status_ = Internal("StatusOr: OK status without value");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace braid

#endif  // BRAID_TYPES_H_
