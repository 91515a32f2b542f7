// netra/instantiate/gdn_replay.hpp — entry points of one gdn_recurrent contract instance with
// Commit accepted_prefix: the recurrent replay and the conv commit.
#pragma once
#include "netra/kernels/gdn/recurrent.hpp"

#define NETRA_INSTANTIATE(...)                                                           \
  using netra_contract = __VA_ARGS__;                                                    \
  NETRA_ENTRY_MIN_WORKGROUPS(netra_gdn_recurrent, ::netra::kernels::gdn_recurrent_core<netra_contract>) \
  NETRA_ENTRY(netra_gdn_conv_commit, ::netra::kernels::gdn_conv_commit<netra_contract>)
