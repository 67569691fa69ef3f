#include "tools/npy.h"

#include <bit>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>

#include "graph/ir.h"

namespace braid::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

static_assert(std::endian::native == std::endian::little,
              ".npy I/O assumes a little-endian host");

struct DtypeName {
  DataType dtype;
  std::string_view descr;  // as np.save writes it
};
constexpr DtypeName kDtypes[] = {
    {DataType::kF32, "<f4"}, {DataType::kF16, "<f2"}, {DataType::kI64, "<i8"},
    {DataType::kI32, "<i4"}, {DataType::kI8, "|i1"},  {DataType::kU8, "|u1"},
    {DataType::kBool, "|b1"}, {DataType::kF64, "<f8"}, {DataType::kI16, "<i2"},
    {DataType::kU16, "<u2"},  {DataType::kU32, "<u4"}, {DataType::kU64, "<u8"},
};

std::optional<DataType> ParseDescr(std::string_view descr) {
  for (const DtypeName& d : kDtypes) {
    if (descr == d.descr) return d.dtype;
    // Single-byte types carry no byte order; accept "<i1", "=u1", "i1" too.
    // "=" (native) is little-endian here.
    std::string_view base = d.descr.substr(1);
    if (descr.size() == d.descr.size() &&
        (descr[0] == '<' || descr[0] == '=' ||
         (d.descr[0] == '|' && descr[0] == '|')) &&
        descr.substr(1) == base)
      return d.dtype;
    if (d.descr[0] == '|' && descr == base) return d.dtype;
  }
  return std::nullopt;
}

// A cursor over the header's Python dict literal:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what)
      : text_(text), what_(what) {}

  Status Parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("header is not a dict");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      ASSIGN_OR_RETURN(std::string key, String());
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        ASSIGN_OR_RETURN(descr, String());
        have_descr = true;
      } else if (key == "fortran_order") {
        ASSIGN_OR_RETURN(fortran, Bool());
        have_fortran = true;
      } else if (key == "shape") {
        ASSIGN_OR_RETURN(shape, Tuple());
        have_shape = true;
      } else {
        return Error("unexpected header key '" + key + "'");
      }
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}' in header");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing text after header dict");
    if (!have_descr || !have_fortran || !have_shape)
      return Error("header lacks 'descr', 'fortran_order' or 'shape'");
    return Status::Ok();
  }

 private:
  Status Error(const std::string& m) const {
    return DataLoss(std::string(what_).append(": malformed .npy header: ").append(m));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  StatusOr<std::string> String() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return Error("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Error("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  StatusOr<bool> Bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return Error("expected True or False");
  }
  StatusOr<std::vector<int64_t>> Tuple() {
    if (!Consume('(')) return Error("shape is not a tuple");
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Consume(')')) return dims;
      int64_t v = 0;
      size_t digits = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
          return Error("shape dimension too large");
        v = v * 10 + (text_[pos_++] - '0');
        ++digits;
      }
      if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long
      if (digits == 0) return Error("shape holds a non-integer");
      dims.push_back(v);
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume(')')) return dims;
      return Error("expected ',' or ')' in shape");
    }
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

}  // namespace

int64_t Array::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string_view Descr(DataType dtype) {
  for (const DtypeName& d : kDtypes)
    if (d.dtype == dtype) return d.descr;
  return {};
}

StatusOr<Array> Parse(std::string_view bytes, const std::string& what) {
  if (bytes.size() < kMagicSize ||
      std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    return DataLoss(what + ": not a .npy file (no \\x93NUMPY magic)");
  if (bytes.size() < kMagicSize + 2) return DataLoss(what + ": truncated .npy preamble");
  const auto major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0;
  size_t prefix = 0;
  if (major == 1) {
    if (bytes.size() < 10) return DataLoss(what + ": truncated .npy preamble");
    header_len = static_cast<uint8_t>(bytes[8]) |
                 (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return DataLoss(what + ": truncated .npy preamble");
    for (int i = 3; i >= 0; --i)
      header_len = (header_len << 8) | static_cast<uint8_t>(bytes[8 + i]);
    prefix = 12;
  } else {
    return DataLoss(std::string(what).append(": unsupported .npy format version ")
                        .append(std::to_string(major)));
  }
  if (bytes.size() - prefix < header_len)
    return DataLoss(what + ": truncated .npy header");
  const std::string_view header = bytes.substr(prefix, header_len);

  std::string descr;
  bool fortran = false;
  Array array;
  HeaderParser parser(header, what);
  RETURN_IF_ERROR(parser.Parse(descr, fortran, array.dims));
  if (fortran)
    return Unimplemented(what + ": Fortran-order arrays are not supported "
                                "(save with np.ascontiguousarray)");
  std::optional<DataType> dtype = ParseDescr(descr);
  if (!dtype)
    return Unimplemented(what + ": unsupported dtype '" + descr +
                         "' (braid reads <f4 <f2 <i8 <i4 |i1 |u1 |b1)");
  array.dtype = *dtype;

  // The one check for untrusted dims: the product of the non-zero dimensions
  // is bounded even when a zero dimension makes the array empty, so
  // elements() and every caller's arithmetic stay within int64.
  const StatusOr<uint64_t> needed = CheckedTensorBytes(array.dtype, array.dims);
  if (!needed.ok()) return DataLoss(what + ": shape too large: " + needed.status().message());
  const size_t payload = bytes.size() - prefix - header_len;
  if (payload != *needed)
    return DataLoss(std::string(what).append(": data holds ")
                        .append(std::to_string(payload))
                        .append(" bytes, the header's shape needs ")
                        .append(std::to_string(*needed)));
  const char* begin = bytes.data() + prefix + header_len;
  array.data.resize(payload);
  if (payload) std::memcpy(array.data.data(), begin, payload);
  if (array.dtype == DataType::kBool)
    for (std::byte b : array.data)
      if (static_cast<uint8_t>(b) > 1)
        return DataLoss(what + ": bool array holds a byte other than 0 or 1");
  return array;
}

StatusOr<Array> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open file");
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  if (in.bad()) return DataLoss(path + ": read error");
  return Parse(bytes, path);
}

StatusOr<std::string> Encode(DataType dtype, std::span<const int64_t> dims,
                             const void* data) {
  const std::string_view descr = Descr(dtype);
  if (descr.empty())
    return Unimplemented(
        std::string("no .npy encoding for dtype ").append(DataTypeName(dtype))
            .append(dtype == DataType::kBF16
                        ? " (numpy has no bfloat16 dtype; cast to f32 first)"
                        : ""));
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': (";
  size_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) return InvalidArgument("negative dimension in .npy shape");
    header += std::to_string(dims[i]);
    header += (dims.size() == 1 || i + 1 < dims.size()) ? ", " : "";
    count *= static_cast<size_t>(dims[i]);
  }
  if (dims.size() == 1) header.pop_back();  // "(3,)"
  header += "), }";
  // Pad with spaces and end with '\n' so the data starts 64-byte aligned.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xFFFF) return InvalidArgument(".npy header too long");

  const size_t payload = count * DataTypeSize(dtype);
  std::string out;
  out.reserve(10 + header.size() + payload);
  out.append(kMagic, kMagicSize);
  out += static_cast<char>(1);
  out += static_cast<char>(0);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (payload) out.append(static_cast<const char*>(data), payload);
  return out;
}

Status WriteFile(const std::string& path, DataType dtype,
                 std::span<const int64_t> dims, const void* data) {
  ASSIGN_OR_RETURN(std::string bytes, Encode(dtype, dims, data));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return NotFound(path + ": cannot create file");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return DataLoss(path + ": write error");
  return Status::Ok();
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mantissa & 0x3FF) << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t FloatToHalf(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t abs = bits & 0x7FFFFFFF;
  if (abs > 0x7F800000) return sign | 0x7E00;  // NaN
  if (abs >= 0x477FF000) return sign | 0x7C00;  // overflow (after rounding) -> inf
  if (abs < 0x38800000) {  // subnormal half or zero
    if (abs < 0x33000000) return sign;  // rounds to zero
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7FFFFF) | 0x800000;
    const uint32_t shift = 126 - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((abs - 0x38000000) >> 13);
  const uint32_t rest = abs & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | half);
}

}  // namespace braid::npy
