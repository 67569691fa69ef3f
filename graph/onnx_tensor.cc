#include "graph/onnx_tensor.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <vector>

namespace braid::onnx_import {

namespace fs = std::filesystem;

std::optional<DataType> MapDataType(int32_t onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return DataType::kF32;
    case onnx::TensorProto::FLOAT16: return DataType::kF16;
    case onnx::TensorProto::INT64: return DataType::kI64;
    case onnx::TensorProto::INT32: return DataType::kI32;
    case onnx::TensorProto::INT8: return DataType::kI8;
    case onnx::TensorProto::UINT8: return DataType::kU8;
    case onnx::TensorProto::BOOL: return DataType::kBool;
    case onnx::TensorProto::DOUBLE: return DataType::kF64;
    case onnx::TensorProto::BFLOAT16: return DataType::kBF16;
    case onnx::TensorProto::INT16: return DataType::kI16;
    case onnx::TensorProto::UINT16: return DataType::kU16;
    case onnx::TensorProto::UINT32: return DataType::kU32;
    case onnx::TensorProto::UINT64: return DataType::kU64;
    default: return std::nullopt;
  }
}

bool ParseProtoFile(const std::string& path,
                    google::protobuf::MessageLite* message) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::string bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  return message->ParseFromString(bytes);
}

StatusOr<TensorAttr> ReadTensorProtoFile(const std::string& path) {
  onnx::TensorProto proto;
  if (!ParseProtoFile(path, &proto))
    return DataLoss(path + ": cannot read or parse the TensorProto");
  return TensorReader("").Read(proto, fs::path(path).filename().string());
}

std::string OnnxDataTypeName(int32_t onnx_type) {
  if (onnx::TensorProto::DataType_IsValid(onnx_type))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(onnx_type));
  return "data type " + std::to_string(onnx_type);
}

namespace {

// Narrows int32_data entries into `Narrow`-sized elements: ONNX stores
// int8/uint8/int16/uint16/bool values and float16/bfloat16 bit patterns in
// int32_data, and uint32 values in uint64_data.
template <typename Narrow, typename Wide>
TensorData NarrowData(const google::protobuf::RepeatedField<Wide>& src) {
  TensorData data = TensorData::Allocate(static_cast<size_t>(src.size()) *
                                         sizeof(Narrow));
  std::span<Narrow> dst = data.mutable_as<Narrow>();
  for (int i = 0; i < src.size(); ++i)
    dst[static_cast<size_t>(i)] = static_cast<Narrow>(src.Get(i));
  return data;
}

template <typename T>
TensorData CopyRepeated(const google::protobuf::RepeatedField<T>& src) {
  return TensorData::Copy(src.data(), static_cast<size_t>(src.size()) * sizeof(T));
}

StatusOr<int64_t> ParseExternalNumber(const std::string& key,
                                      const std::string& text,
                                      const std::string& what) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    return InvalidArgument(what + ": external data " + key + " '" + text +
                           "' is not a non-negative integer");
  return value;
}

// True when `path` is `base` or lies below it (both canonical).
bool IsWithin(const fs::path& path, const fs::path& base) {
  auto p = path.begin();
  for (auto b = base.begin(); b != base.end(); ++b, ++p) {
    if (b->empty()) continue;  // trailing separator
    if (p == path.end() || *p != *b) return false;
  }
  return true;
}

}  // namespace

StatusOr<TensorAttr> TensorReader::Read(onnx::TensorProto& tensor,
                                        const std::string& what) {
  TensorAttr out;
  std::optional<DataType> dtype = MapDataType(tensor.data_type());
  if (!dtype)
    return Unimplemented(what + ": data type " +
                         OnnxDataTypeName(tensor.data_type()) +
                         " is not supported (braid handles FLOAT, FLOAT16, "
                         "BFLOAT16, DOUBLE, INT64, INT32, INT16, INT8, "
                         "UINT64, UINT32, UINT16, UINT8, BOOL)");
  out.dtype = *dtype;
  out.dims.assign(tensor.dims().begin(), tensor.dims().end());
  if (tensor.has_segment())
    return Unimplemented(what + ": segmented tensors are not supported");
  StatusOr<uint64_t> bytes = CheckedTensorBytes(out.dtype, out.dims);
  if (!bytes.ok()) return bytes.status().WithPrefix(what);
  const size_t expected_bytes = static_cast<size_t>(*bytes);
  const size_t count = expected_bytes / DataTypeSize(out.dtype);

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    ASSIGN_OR_RETURN(out.data, ReadExternal(tensor, expected_bytes, what));
    return out;
  }
  if (tensor.has_raw_data()) {
    std::string& raw = *tensor.mutable_raw_data();
    if (raw.size() != expected_bytes)
      return InvalidArgument(what + ": raw_data holds " +
                             std::to_string(raw.size()) + " bytes, expected " +
                             std::to_string(expected_bytes) + " (" +
                             std::to_string(count) + " x " +
                             DataTypeName(out.dtype) + ")");
    out.data = TensorData::Copy(raw.data(), raw.size());
    std::string().swap(raw);  // release the protobuf copy right away
    return out;
  }

  // Typed fields: which one carries the data depends on the type.
  int stored = 0;
  const char* field = "";
  switch (out.dtype) {
    case DataType::kF32:
      field = "float_data";
      stored = tensor.float_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = CopyRepeated(tensor.float_data());
      break;
    case DataType::kI64:
      field = "int64_data";
      stored = tensor.int64_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = CopyRepeated(tensor.int64_data());
      break;
    case DataType::kI32:
      field = "int32_data";
      stored = tensor.int32_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = CopyRepeated(tensor.int32_data());
      break;
    case DataType::kF64:
      field = "double_data";
      stored = tensor.double_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = CopyRepeated(tensor.double_data());
      break;
    case DataType::kU64:
      field = "uint64_data";
      stored = tensor.uint64_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = CopyRepeated(tensor.uint64_data());
      break;
    case DataType::kU32:
      field = "uint64_data";
      stored = tensor.uint64_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = NarrowData<uint32_t>(tensor.uint64_data());
      break;
    case DataType::kF16:
    case DataType::kBF16:
    case DataType::kI16:
    case DataType::kU16:
      field = "int32_data";
      stored = tensor.int32_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = NarrowData<uint16_t>(tensor.int32_data());
      break;
    case DataType::kI8:
    case DataType::kU8:
    case DataType::kBool:
      field = "int32_data";
      stored = tensor.int32_data_size();
      if (static_cast<size_t>(stored) == count)
        out.data = NarrowData<uint8_t>(tensor.int32_data());
      break;
    case DataType::kUndefined:
      break;
  }
  if (static_cast<size_t>(stored) != count)
    return InvalidArgument(what + ": " + field + " holds " +
                           std::to_string(stored) + " values, expected " +
                           std::to_string(count) + " (" +
                           DataTypeName(out.dtype) + ")");
  return out;
}

StatusOr<TensorData> TensorReader::ReadExternal(const onnx::TensorProto& tensor,
                                                size_t expected_bytes,
                                                const std::string& what) {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      ASSIGN_OR_RETURN(offset, ParseExternalNumber("offset", entry.value(), what));
    } else if (entry.key() == "length") {
      ASSIGN_OR_RETURN(length, ParseExternalNumber("length", entry.value(), what));
    }
  }
  if (location.empty())
    return InvalidArgument(what + ": external data without a location");
  const std::string where = what + ": external data file '" + location + "'";
  if (base_dir_.empty())
    return FailedPrecondition(where +
                              " cannot be read: no model folder was given");
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() ||
      relative.has_root_directory())
    return InvalidArgument(where + " is an absolute path; external data must "
                                   "lie in the model's folder");
  for (const fs::path& part : relative)
    if (part == "..")
      return InvalidArgument(where + " contains '..'; external data must lie "
                                     "in the model's folder");

  std::error_code ec;
  if (!canonical_base_) {
    fs::path base = fs::canonical(base_dir_, ec);
    if (ec)
      return NotFound(where + ": model folder '" + base_dir_ +
                      "' cannot be resolved: " + ec.message());
    canonical_base_ = base.string();
  }
  const fs::path full = fs::canonical(fs::path(*canonical_base_) / relative, ec);
  if (ec) return NotFound(where + " cannot be opened: " + ec.message());
  // A symlink inside the folder may still point outside it.
  if (!IsWithin(full, fs::path(*canonical_base_)))
    return InvalidArgument(where + " resolves to '" + full.string() +
                           "', outside the model's folder");
  if (!fs::is_regular_file(full, ec))
    return InvalidArgument(where + " is not a regular file");
  const uintmax_t file_size = fs::file_size(full, ec);
  if (ec) return NotFound(where + " cannot be read: " + ec.message());

  const auto begin = static_cast<uintmax_t>(offset);
  if (begin > file_size)
    return OutOfRange(where + ": offset " + std::to_string(offset) +
                      " is past the end of the file (" +
                      std::to_string(file_size) + " bytes)");
  const uintmax_t available = file_size - begin;
  const uintmax_t size = length ? static_cast<uintmax_t>(*length) : available;
  if (size > available)
    return OutOfRange(where + ": offset " + std::to_string(offset) +
                      " + length " + std::to_string(size) +
                      " is past the end of the file (" +
                      std::to_string(file_size) + " bytes)");
  if (size != expected_bytes)
    return InvalidArgument(where + " holds " + std::to_string(size) +
                           " bytes for the tensor, expected " +
                           std::to_string(expected_bytes));

  std::ifstream in(full, std::ios::binary);
  if (!in) return NotFound(where + " cannot be opened");
  TensorData data = TensorData::Allocate(expected_bytes);
  in.seekg(static_cast<std::streamoff>(begin));
  in.read(reinterpret_cast<char*>(data.mutable_data()),
          static_cast<std::streamsize>(expected_bytes));
  if (!in) return DataLoss(where + ": short read");
  return data;
}

}  // namespace braid::onnx_import
