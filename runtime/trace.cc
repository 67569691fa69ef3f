#include "runtime/trace.h"

#include <fstream>
#include <map>
#include <sstream>

#include "graph/json.h"

namespace braid {

TraceEvent& TraceEvent::Arg(std::string key, const std::string& value) {
  args.emplace_back(std::move(key), JsonString(value));
  return *this;
}

TraceEvent& TraceEvent::Arg(std::string key, double value) {
  args.emplace_back(std::move(key), JsonNumber(value));
  return *this;
}

TraceEvent& TraceWriter::Add(TraceEvent event) {
  events_.push_back(std::move(event));
  return events_.back();
}

std::string TraceWriter::ToJson() const {
  std::map<std::string, int> tids;
  std::vector<const std::string*> order;
  for (const TraceEvent& e : events_) {
    if (tids.emplace(e.track, static_cast<int>(tids.size()) + 1).second)
      order.push_back(&e.track);
  }
  std::ostringstream out;
  out << "{\"traceEvents\":[";
  bool first = true;
  auto sep = [&] {
    out << (first ? "\n" : ",\n");
    first = false;
  };
  for (const std::string* track : order) {
    sep();
    out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << tids[*track]
        << ",\"args\":{\"name\":" << JsonString(*track) << "}}";
    sep();
    out << "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":" << tids[*track]
        << ",\"args\":{\"sort_index\":" << tids[*track] << "}}";
  }
  for (const TraceEvent& e : events_) {
    sep();
    out << "{\"name\":" << JsonString(e.name) << ",\"cat\":" << JsonString(e.category)
        << ",\"ph\":\"X\",\"pid\":1,\"tid\":" << tids[e.track]
        << ",\"ts\":" << JsonNumber(e.start_us) << ",\"dur\":" << JsonNumber(e.dur_us)
        << ",\"args\":{";
    for (size_t i = 0; i < e.args.size(); ++i)
      out << (i ? "," : "") << JsonString(e.args[i].first) << ":" << e.args[i].second;
    out << "}}";
  }
  out << "\n],\"displayTimeUnit\":\"ms\"}\n";
  return out.str();
}

Status TraceWriter::WriteFile(const std::string& path) const {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return NotFound("trace: cannot open '" + path + "' for writing");
  file << ToJson();
  file.close();
  if (!file) return Internal("trace: writing '" + path + "' failed");
  return Status::Ok();
}

}  // namespace braid
