// netra/kernels/moe/split_k_down.hpp — the kernels of the M768 split-K contracts
// (contracts/moe/split_k_down.hpp): the producer is moe_grouped_down_kernel (KParts 2), the
// reducer moe_grouped_reduce_kernel (KParts 2); their mappings are in those headers.
#pragma once
#include "netra/contracts/moe/split_k_down.hpp"
#include "netra/kernels/moe/grouped_down.hpp"
#include "netra/kernels/moe/grouped_reduce.hpp"

namespace netra::kernels {

template <class Target, u32 Tokens> struct kernels_of<contracts::moe_split_k_down<Target, Tokens>> {
  using type = type_list<moe_grouped_down_kernel<contracts::moe_split_k_down<Target, Tokens>>>;
};
template <class Target, u32 Tokens> struct kernels_of<contracts::moe_split_k_reduce<Target, Tokens>> {
  using type = type_list<moe_grouped_reduce_kernel<contracts::moe_split_k_reduce<Target, Tokens>>>;
};

}  // namespace netra::kernels
