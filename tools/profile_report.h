// The files `braid profile` writes: Chrome trace JSON (runtime/trace.h), an
// SVG with a timeline and a per-op bar chart, and a per-op CSV.
//
//   braid::cli::ProfileData data{&timings, &sim_graph, &sim_result, predicted_us};
//   RETURN_IF_ERROR(braid::cli::WriteProfileCsv(data, "ops.csv"));
#ifndef BRAID_TOOLS_PROFILE_REPORT_H_
#define BRAID_TOOLS_PROFILE_REPORT_H_

#include <string>
#include <vector>

#include "runtime/trace.h"
#include "scheduler/simulator.h"
#include "tools/op_timer.h"

namespace braid::cli {

struct ProfileData {
  const ModelTimings* timings = nullptr;  // measured (cpu)
  const SimGraph* sim_graph = nullptr;    // the simulated plan's graph
  const SimResult* simulated = nullptr;   // with a timeline
  std::vector<double> predicted_us;       // per node: the cost model on its device
  std::string device = "cpu";             // where the measurements ran
  std::string profile;                    // the profile predictions come from
};

// Measured medians laid end to end on "measured:cpu/stream0" (they were
// timed one op at a time), the simulated plan on "simulated:DEVICE/stream0"
// and "simulated:A->B" tracks. Op events carry op, class, flops, bytes,
// intensity, weight_sparsity, device, predicted_us and measured_us.
void AppendProfileTrace(const ProfileData& data, TraceWriter& trace);
std::string ProfileSvg(const ProfileData& data);
std::string ProfileCsv(const ProfileData& data);

Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace braid::cli

#endif  // BRAID_TOOLS_PROFILE_REPORT_H_
