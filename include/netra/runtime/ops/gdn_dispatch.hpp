// netra/runtime/ops/gdn_dispatch.hpp — the gdn operations on the one dispatch path
// (runtime/op_dispatcher.hpp): their tensors in C ABI order, their tactics (tactics/gdn.hpp) and
// launches (ops/gdn.hpp). run() allocates nothing, looks nothing up and never synchronises. Code
// using this header links libnetra.
#pragma once
#include <array>

#include "netra/runtime/op_dispatcher.hpp"
#include "netra/runtime/ops/gdn.hpp"
#include "netra/runtime/tactics/gdn.hpp"

namespace netra {

struct gdn_conv_op {
  using signature = gdn_conv_signature;
  static constexpr auto tactics = netra::tactics::gdn_conv;
  static constexpr const char* name = "gdn_conv";
  static constexpr std::array<const char*, 6> tensor_names{"x", "weight", "y", "slots", "state", "windows"};
  static signature signature_of(const device_info& d, const tensor_arg& x, const tensor_arg& w, const tensor_arg& y, const tensor_arg& slots,
                                const tensor_arg& state, const tensor_arg& windows) {
    return gdn_conv_call(d, x, w, y, slots, state, windows);
  }
  template <class C> static signature bind(signature s, const handle<C>&) { return s; }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_gdn_conv(h, stream, s); }
};

struct gdn_precompute_op {
  using signature = gdn_precompute_signature;
  static constexpr auto tactics = netra::tactics::gdn_precompute;
  static constexpr const char* name = "gdn_precompute";
  static constexpr std::array<const char*, 9> tensor_names{"y", "a", "b", "A_log", "dt_bias", "q", "k", "decay", "beta"};
  static signature signature_of(const device_info& d, const tensor_arg& y, const tensor_arg& a, const tensor_arg& b, const tensor_arg& a_log,
                                const tensor_arg& dt_bias, const tensor_arg& q, const tensor_arg& k, const tensor_arg& decay, const tensor_arg& beta) {
    return gdn_precompute_call(d, y, a, b, a_log, dt_bias, q, k, decay, beta);
  }
  template <class C> static signature bind(signature s, const handle<C>&) { return s; }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_gdn_precompute(h, stream, s); }
};

/// K0 verify and M16: outputs of every token (M16 also commits the state).
template <const auto& Tactics, const char* Name> struct gdn_core_op {
  using signature = gdn_recurrent_signature;
  static constexpr auto tactics = Tactics;
  static constexpr const char* name = Name;
  static constexpr std::array<const char*, 8> tensor_names{"q", "k", "v", "decay", "beta", "state", "slots", "out"};
  static signature signature_of(const device_info& d, const tensor_arg& q, const tensor_arg& k, const tensor_arg& v, const tensor_arg& decay,
                                const tensor_arg& beta, const tensor_arg& state, const tensor_arg& slots, const tensor_arg& out) {
    return gdn_recurrent_call(d, q, k, v, decay, beta, state, slots, out, {}, {}, {});
  }
  template <class C> static signature bind(signature s, const handle<C>&) { return s; }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_gdn_recurrent(h, stream, s); }
};
inline constexpr char gdn_verify_name[] = "gdn_verify";
inline constexpr char gdn_m16_name[] = "gdn_m16";
using gdn_verify_op = gdn_core_op<netra::tactics::gdn_verify, gdn_verify_name>;
using gdn_m16_op = gdn_core_op<netra::tactics::gdn_m16, gdn_m16_name>;

struct gdn_replay_op {
  using signature = gdn_recurrent_signature;
  static constexpr auto tactics = netra::tactics::gdn_replay;
  static constexpr const char* name = "gdn_replay";
  static constexpr std::array<const char*, 10> tensor_names{"q", "k", "v", "decay", "beta", "state", "slots", "accepted", "conv_windows", "conv_state"};
  static signature signature_of(const device_info& d, const tensor_arg& q, const tensor_arg& k, const tensor_arg& v, const tensor_arg& decay,
                                const tensor_arg& beta, const tensor_arg& state, const tensor_arg& slots, const tensor_arg& accepted,
                                const tensor_arg& windows, const tensor_arg& conv_state) {
    return gdn_recurrent_call(d, q, k, v, decay, beta, state, slots, {}, accepted, windows, conv_state);
  }
  template <class C> static signature bind(signature s, const handle<C>&) { return s; }
  template <class C> static void launch(const handle<C>& h, stream_handle stream, const signature& s) { launch_gdn_recurrent(h, stream, s); }
};

/// Every gdn operation's tactics loaded for one device (the C ABI's handle).
struct gdn_dispatchers {
  op_dispatcher<gdn_conv_op> conv;
  op_dispatcher<gdn_precompute_op> precompute;
  op_dispatcher<gdn_verify_op> verify;
  op_dispatcher<gdn_m16_op> m16;
  op_dispatcher<gdn_replay_op> replay;
  gdn_dispatchers(const device_info& d, const jit::options& jit) : conv(d, jit), precompute(d, jit), verify(d, jit), m16(d, jit), replay(d, jit) {}
};

}  // namespace netra
