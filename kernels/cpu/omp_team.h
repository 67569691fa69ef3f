// The calling thread's OpenMP team size for a scope (oneDNN's OpenMP runtime
// and braid's CPU kernels read omp_get_max_threads()), given back at its end:
// Prepare tunes primitives for the count they run with, and a Run does not
// change the embedding program's OpenMP settings.
//
//   braid::ScopedOmpThreads team(4);   // until the end of the scope
#ifndef BRAID_KERNELS_CPU_OMP_TEAM_H_
#define BRAID_KERNELS_CPU_OMP_TEAM_H_

namespace braid {

class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int num_threads);  // < 1 counts as 1
  ~ScopedOmpThreads();
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace braid

#endif  // BRAID_KERNELS_CPU_OMP_TEAM_H_
