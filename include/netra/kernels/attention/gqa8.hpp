// netra/kernels/attention/gqa8.hpp — the kernels of contracts::attention_gqa8 (both stages).
#pragma once
#include "netra/kernels/attention/gqa8_stage_one.hpp"
#include "netra/kernels/attention/gqa8_stage_two.hpp"
