// netra/runtime/decision_text.hpp — refusals as text and as the status a caller reports (host
// only). Values read as what they are: "got gfx950", "got float64", "got shape [9, 1000]",
// "got strides [1, 248320]", "got cpu", "got 0x7f0000000004" — never a bare enum number.
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

#include "netra/contracts/common.hpp"
#include "netra/runtime/error.hpp"

namespace netra {

/// A DLPack device as torch spells it: "cuda:0", "rocm:1", "cpu".
inline std::string device_text(i64 type, i64 id) {
  const char* name = nullptr;
  switch (type) {
    case 1: return "cpu";
    case 2: name = "cuda"; break;
    case 3: name = "cuda_host"; break;
    case 4: name = "opencl"; break;
    case 7: name = "vulkan"; break;
    case 8: name = "metal"; break;
    case 9: name = "vpi"; break;
    case 10: name = "rocm"; break;
    case 11: name = "rocm_host"; break;
    case 12: name = "ext_dev"; break;
    case 13: name = "cuda_managed"; break;
    case 14: name = "oneapi"; break;
    default: return "device type " + std::to_string(type) + ":" + std::to_string(id);
  }
  return std::string(name) + ":" + std::to_string(id);
}

/// A DLPack dtype netra has no name for, as its (code, bits, lanes).
inline std::string dlpack_dtype_text(u32 packed) {
  return "DLPack dtype (code " + std::to_string(packed & 0xFF) + ", bits " + std::to_string((packed >> 8) & 0xFF) + ", lanes " +
         std::to_string(packed >> 16) + ")";
}

inline std::string extents_text(const i64* v, i32 count) {
  std::string s = "[";
  for (i32 i = 0; i < count; ++i) s += (i ? ", " : "") + (v[i] < 0 ? std::string("*") : std::to_string(v[i]));
  return s + "]";
}

/// The value a refusal had, as it reads.
inline std::string value_text(const decision& d) {
  switch (d.kind) {
    case value_kind::target: return target_name(static_cast<target_id>(d.value()));
    case value_kind::dtype: {
      const auto t = static_cast<dtype>(d.value());
      return t == dtype::other && d.count > 1 ? dlpack_dtype_text(static_cast<u32>(d.values[1])) : std::string(dtype_name(t));
    }
    case value_kind::shape: return "shape " + extents_text(d.values, d.count);
    case value_kind::strides: return "strides " + extents_text(d.values, d.count);
    case value_kind::device: return device_text(d.values[0], d.values[1]);
    case value_kind::missing: return "NULL";
    case value_kind::named: return d.value_name != nullptr ? std::string(d.value_name) : std::to_string(d.value());
    case value_kind::address: {
      char text[24];
      std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(d.value()));
      return text;
    }
    case value_kind::number: break;
  }
  return std::to_string(d.value());
}

/// What the contract wanted: its requirement text, with the expected value where it has one.
inline std::string requirement_text(const decision& d) {
  if (d.kind == value_kind::shape) {
    std::string s = std::string("shape ") + d.requirement;
    const std::string wanted = extents_text(d.expected, d.expected_count);
    return wanted == d.requirement ? s : s + " = " + wanted;
  }
  if (d.kind == value_kind::device && d.expected_count == 2)
    return std::string(d.requirement) + " (" + device_text(d.expected[0], d.expected[1]) + ")";
  return d.requirement;
}

inline std::string to_string(const decision& d) {
  if (d.admitted()) return "admitted";
  return std::string("refused at field '") + d.field + "': requires " + requirement_text(d) + ", got " + value_text(d);
}

/// The status of a refused call: a workspace smaller than the call needs is
/// workspace_too_small, every other refusing field invalid_argument.
inline status refusal_status(const decision& d) {
  return std::string_view(d.field) == "workspace_bytes" ? status::workspace_too_small : status::invalid_argument;
}
/// The checked C++ entry points' guard: throws (refusal_status, "<function>: <refusal>") when
/// Contract refuses `s`; nothing has been launched then.
template <class Contract, class Signature> void require_admitted(const char* function, const Signature& s) {
  const decision d = Contract::admits(s);
  if (!d.admitted()) throw error(refusal_status(d), std::string(function) + ": " + to_string(d));
}
}  // namespace netra
