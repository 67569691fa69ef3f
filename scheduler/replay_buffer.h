// A fixed-capacity experience replay buffer: appends until full, then
// overwrites the oldest entry. Shared by SparOA's discrete SAC and WORL-RTGS's
// double DQN.
//
//   braid::ReplayBuffer<SacTransition> replay(50'000);
//   replay.Add(std::move(t));
//   const SacTransition& sample = replay[rng() % replay.size()];
#ifndef BRAID_SCHEDULER_REPLAY_BUFFER_H_
#define BRAID_SCHEDULER_REPLAY_BUFFER_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace braid {

template <typename Transition>
class ReplayBuffer {
 public:
  explicit ReplayBuffer(size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

  void Add(Transition t) {
    if (items_.size() < capacity_) {
      items_.push_back(std::move(t));
    } else {
      items_[next_] = std::move(t);
      next_ = (next_ + 1) % items_.size();
    }
  }
  size_t size() const { return items_.size(); }
  const Transition& operator[](size_t i) const { return items_[i]; }

 private:
  size_t capacity_;
  std::vector<Transition> items_;
  size_t next_ = 0;  // the oldest entry once full
};

}  // namespace braid

#endif  // BRAID_SCHEDULER_REPLAY_BUFFER_H_
