// A small Chrome trace writer (the "Trace Event Format" that chrome://tracing
// and https://ui.perfetto.dev open): complete events ("ph":"X") on named
// tracks, one track per device stream or copy direction, with arbitrary
// string / number arguments. The engine writes its per-step timeline with
// it; `braid profile` can reuse it for anything with a start and a duration.
//
//   braid::TraceWriter trace;
//   trace.Add({"conv1", "kernel", "vgpu/stream0", 12.0, 340.5})
//       .Arg("device", "vgpu").Arg("bytes", 4096.0);
//   trace.Add({"copy x->vgpu", "copy", "vgpu/h2d", 0.0, 11.2});
//   RETURN_IF_ERROR(trace.WriteFile("trace.json"));   // or trace.ToJson()
//
// Tracks become threads of one process ("pid":1), numbered in order of first
// use and named with "thread_name" metadata events, so viewers show one row
// per track in that order. Times are microseconds.
#ifndef BRAID_RUNTIME_TRACE_H_
#define BRAID_RUNTIME_TRACE_H_

#include <string>
#include <utility>
#include <vector>

#include "graph/status.h"

namespace braid {

struct TraceEvent {
  std::string name;
  std::string category;  // "kernel", "copy", ...
  std::string track;     // "cpu/stream0", "vgpu/h2d", ...
  double start_us = 0;
  double dur_us = 0;
  // key -> JSON text of the value (set through Arg).
  std::vector<std::pair<std::string, std::string>> args;

  TraceEvent& Arg(std::string key, const std::string& value);
  TraceEvent& Arg(std::string key, const char* value) { return Arg(std::move(key), std::string(value)); }
  TraceEvent& Arg(std::string key, double value);
};

class TraceWriter {
 public:
  // Returns the stored event so arguments can be chained on.
  TraceEvent& Add(TraceEvent event);
  const std::vector<TraceEvent>& events() const { return events_; }
  // {"traceEvents":[...],"displayTimeUnit":"ms"}
  std::string ToJson() const;
  // Errors name the file.
  Status WriteFile(const std::string& path) const;

 private:
  std::vector<TraceEvent> events_;
};

}  // namespace braid

#endif  // BRAID_RUNTIME_TRACE_H_
