// A small JSON reader and the two writer helpers braid's files and CLI use
// (plans, device profiles, traces, --json output). No dependency beyond the
// standard library; numbers are doubles, objects keep their key order.
//
//   ASSIGN_OR_RETURN(braid::JsonValue doc, braid::ParseJson(text));
//   const braid::JsonValue* nodes = doc.Find("nodes");
//   if (nodes == nullptr || !nodes->is_array()) return braid::InvalidArgument("no nodes");
//   for (const braid::JsonValue& n : nodes->array()) std::cout << n.GetString("device", "cpu");
//   std::cout << "{\"name\":" << braid::JsonString("a\"b") << "}";
#ifndef BRAID_GRAPH_JSON_H_
#define BRAID_GRAPH_JSON_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/status.h"

namespace braid {

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  using Member = std::pair<std::string, JsonValue>;

  JsonValue() = default;
  static JsonValue Bool(bool b);
  static JsonValue Number(double d);
  static JsonValue String(std::string s);
  static JsonValue Array(std::vector<JsonValue> items);
  static JsonValue Object(std::vector<Member> members);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_number() const { return kind_ == Kind::kNumber; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_array() const { return kind_ == Kind::kArray; }
  bool is_object() const { return kind_ == Kind::kObject; }

  bool boolean() const { return bool_; }
  double number() const { return number_; }
  const std::string& string() const { return string_; }
  const std::vector<JsonValue>& array() const { return items_; }
  const std::vector<Member>& object() const { return members_; }

  // Object member `key`, or nullptr (also when this is not an object).
  const JsonValue* Find(std::string_view key) const;
  // Typed member lookups with a default when the key is absent. A present
  // key of the wrong type is an error, so typos in files are not ignored.
  StatusOr<double> GetNumber(std::string_view key, double fallback) const;
  StatusOr<std::string> GetString(std::string_view key, std::string fallback) const;
  StatusOr<bool> GetBool(std::string_view key, bool fallback) const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<Member> members_;
};

// Parses one JSON document (RFC 8259; nesting limited to 256 levels). Errors
// are InvalidArgument with the line and column.
StatusOr<JsonValue> ParseJson(std::string_view text);

// `s` as a quoted JSON string with escapes.
std::string JsonString(std::string_view s);
// `v` as a JSON number; NaN and infinities become null.
std::string JsonNumber(double v);

}  // namespace braid

#endif  // BRAID_GRAPH_JSON_H_
