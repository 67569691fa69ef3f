// braid calibrate's op suite and sparse-kernel probes: timed samples of every
// common op type at several sizes, so the profile fit (scheduler/profile_fit.h)
// has per-op-type factors and a cache tier to fit beyond the models checked.
//
//   braid::profiling::OpTimerOptions o;
//   ASSIGN_OR_RETURN(std::vector<braid::profiling::ModelTimings> suite,
//                    braid::profiling::MeasureCalibrationSuite(o));
//   std::vector<std::string> notes;
//   ASSIGN_OR_RETURN(std::vector<braid::SparseKernelSpeed> speeds,
//                    braid::profiling::MeasureSparseSpeeds(o, &notes));
//   braid::SparseCrossover table = braid::profiling::CrossoverOf(speeds);
#ifndef BRAID_PROFILING_CALIBRATION_SUITE_H_
#define BRAID_PROFILING_CALIBRATION_SUITE_H_

#include <string>
#include <vector>

#include "graph/ir.h"
#include "kernels/cpu/sparse/crossover.h"
#include "profiling/op_timer.h"
#include "scheduler/device_profile.h"

namespace braid::profiling {

// braid calibrate's op suite: ops of every common type (elementwise, Concat /
// Reshape / Transpose / Flatten / Gather, pooling, normalization, 3x3 /
// depthwise Conv, Gemm, MatMul) on feature maps of ~25 KB to ~5 MB and
// ViT-like token matrices. It gives every op type samples of several sizes,
// so per-op-type factors and the cache tier are fitted on it rather than on
// the models checked.
// `maps`: the 4-D part, timed as the steps of engine runs (one per section)
// (MeasureGraphInEngine) and built as inside a CNN: chains of ReLU 1x1
// convs, each timed op reading the conv just before it, nodes ordered depth
// first; else the token part (timed one op at a time, inputs warm as after
// their producer).
// `only_section` >= 0 (maps only): just that map section, of
// kCalibrationMapSections (each its own input, chain and samples).
inline constexpr int kCalibrationMapSections = 10;
StatusOr<Graph> CalibrationSuiteGraph(bool maps, int only_section = -1);
StatusOr<std::vector<ModelTimings>> MeasureCalibrationSuite(const OpTimerOptions& options);

// The sparse CPU kernels against the dense ones, per sparse class (conv1x1,
// conv3x3, gemm): a mid-network-sized op timed with the dense kernels and
// with the sparse kernel forced (crossover 0) at weight sparsities
// 0.5 ... 0.95; the time ratios are fitted (FitSparseKernelSpeed). `notes`
// gets one line per probe.
StatusOr<std::vector<SparseKernelSpeed>> MeasureSparseSpeeds(const OpTimerOptions& options,
                                                             std::vector<std::string>* notes);
// The crossover table (kernels/cpu/sparse) of measured speeds; classes not
// measured keep the kernels' defaults.
SparseCrossover CrossoverOf(const std::vector<SparseKernelSpeed>& speeds);

}  // namespace braid::profiling

#endif  // BRAID_PROFILING_CALIBRATION_SUITE_H_
