// netra/kernels/all.hpp — every kernel family (host tools that walk the whole catalog).
#pragma once
#include "netra/kernels/sampling/argmax.hpp"
#include "netra/kernels/moe/act_quant.hpp"
#include "netra/kernels/moe/router_cluster.hpp"
#include "netra/kernels/moe/shared_gate.hpp"
#include "netra/kernels/moe/experts_gate_up.hpp"
#include "netra/kernels/moe/experts_down.hpp"
#include "netra/kernels/norm/rms_norm.hpp"
#include "netra/kernels/gdn/conv.hpp"
#include "netra/kernels/gdn/precompute.hpp"
#include "netra/kernels/gdn/recurrent.hpp"
#include "netra/kernels/attention/gqa8.hpp"
