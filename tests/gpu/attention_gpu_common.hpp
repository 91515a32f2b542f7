// tests/gpu/attention_gpu_common.hpp — what the paged attention GPU tests (GQA8 and GQA4 extend,
// through their handles and through the C ABI) share:
//   c_handle_guard<Handle, Create, Destroy>  a C ABI handle for one test case (creation REQUIREd).
//   refusal_check(launch)                     f(call, slices, field): launch(call, slices) must
//                                             throw netra::error naming `field`.
//   refuse_batch_and_mirror(f, call, c, n)    a batch past MaxBatch (65) and a host mirror with an
//                                             entry outside the pool are refused at their fields.
//   require_untouched(out, poison)            every element of `out` still holds `poison`.
#pragma once
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "netra/c/netra.h"
#include "netra/dsl/config.hpp"
#include "netra/runtime/error.hpp"

namespace netra::testing {

inline std::string last_error() { return netra_last_error(); }

template <class Handle, netra_status (*Create)(Handle**), void (*Destroy)(Handle*)> struct c_handle_guard {
  Handle* h = nullptr;
  c_handle_guard() { REQUIRE_MESSAGE(Create(&h) == NETRA_STATUS_OK, last_error()); }
  ~c_handle_guard() { Destroy(h); }
  c_handle_guard(const c_handle_guard&) = delete;
  c_handle_guard& operator=(const c_handle_guard&) = delete;
};

template <class Launch> auto refusal_check(Launch launch) {
  return [launch](const auto& call, i64 slices, const char* field) {
    try {
      launch(call, slices);
      FAIL("the call was not refused");
    } catch (const error& e) {
      CHECK(std::string(e.what()).find(field) != std::string::npos);
    }
  };
}

template <class Refused, class Call, class Case> void refuse_batch_and_mirror(const Refused& refused, const Call& a, const Case& c, i64 slices) {
  auto big_batch = a;
  big_batch.batch = 65;
  refused(big_batch, slices, "'batch'");
  std::vector<i64> mirror = c.kv_indices;
  mirror[7] = c.slots;
  auto with_mirror = a;
  with_mirror.kv_indices_host = mirror.data();
  refused(with_mirror, slices, "'kv_indices'");
}

template <class Buffer, class T> void require_untouched(const Buffer& out, T poison) {
  for (auto x : out.download()) REQUIRE(x == poison);
}

}  // namespace netra::testing
