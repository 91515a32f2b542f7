// Must not compile: argmax admits every netra target, so the refusal is shown on a type that is
// not one (a target-like struct with a wave size).
#include <netra/contracts/argmax.hpp>
struct not_a_netra_target {
  static constexpr netra::u32 wave_size = 64;
};
template struct netra::contracts::argmax<not_a_netra_target, 248320, 128, 128>;
