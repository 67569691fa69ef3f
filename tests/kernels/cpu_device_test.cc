// The cpu device's description from /proc/cpuinfo, on x86 and on aarch64
// (whose kernels print no "model name").
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/cpu/cpu_device.h"

namespace braid {
namespace {

std::string NameOf(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  return CpuModelNameFromCpuinfo(in);
}

TEST(CpuModelName, X86ModelName) {
  EXPECT_EQ(NameOf("processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                   "model name\t: AMD EPYC 7B13\nflags\t\t: fpu\n"),
            "AMD EPYC 7B13");
}

TEST(CpuModelName, JetsonOrinCoreFromIds) {
  // As an Orin's kernel prints it: no model name, the first core's ids.
  EXPECT_EQ(NameOf("processor\t: 0\nBogoMIPS\t: 62.50\nFeatures\t: fp asimd\n"
                   "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\n"
                   "CPU part\t: 0xd42\nCPU revision\t: 1\n\nprocessor\t: 1\n"
                   "CPU implementer\t: 0x41\nCPU part\t: 0xd42\n"),
            "ARM Cortex-A78AE");
  EXPECT_EQ(NameOf("CPU implementer\t: 0x4e\nCPU part\t: 0x004\n"), "NVIDIA Carmel");
}

TEST(CpuModelName, UnknownCoreKeepsItsIdsAndNothingIsHostCpu) {
  EXPECT_EQ(NameOf("CPU implementer\t: 0x61\nCPU part\t: 0x032\n"),
            "aarch64 CPU (implementer 0x61, part 0x032)");
  EXPECT_EQ(NameOf(""), "host CPU");
  EXPECT_EQ(NameOf("processor\t: 0\n"), "host CPU");
}

}  // namespace
}  // namespace braid
