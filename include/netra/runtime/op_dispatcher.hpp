// netra/runtime/op_dispatcher.hpp — the one dispatch path of an operation (host only): its
// tactics loaded for one device, and run() that builds nothing and admits once:
//
//   signature = Op::signature_of(device, tensors...)     the call as its contract sees it
//   selection = tactics.select(signature, Op::bind)      first admitting tactic + bound signature
//   Op::launch(handle, stream, selection.signature)      records the launch, checks nothing again
//
// An operation `Op` (runtime/ops/<family>_dispatch.hpp) provides:
//   using signature = ...;                 its contract's signature struct
//   static constexpr auto tactics = ...;   its dispatch list (runtime/tactics/<family>.hpp)
//   static constexpr const char* name;     "argmax" (messages)
//   static constexpr std::array tensor_names{"logits", "out"};   its tensor arguments, in order
//   static signature signature_of(const device_info&, const tensor_arg&...);   one per name
//   static signature bind(signature, const handle<C>&);   the tactic's resources (its workspace;
//                                          binds_workspace / binds_nothing below)
//   static void launch(const handle<C>&, stream_handle, const signature&);   no checks, no allocation
// run() allocates nothing, looks nothing up and never synchronises. Code using this header links
// libnetra.
#pragma once
#include "netra/runtime/tactic_set.hpp"
#include "netra/runtime/tensor.hpp"

namespace netra {

/// Op::bind for operations whose tactics need no resources of their handle.
struct binds_nothing {
  template <class Signature, class Handle> static Signature bind(Signature s, const Handle&) { return s; }
};
/// Op::bind for operations whose signature has `workspace` and `workspace_bytes`: the handle's.
struct binds_workspace {
  template <class Signature, class Handle> static Signature bind(Signature s, const Handle& h) {
    s.workspace = h.workspace();
    s.workspace_bytes = h.workspace_bytes();
    return s;
  }
};

template <class Op> class op_dispatcher {
 public:
  using op = Op;
  using signature = typename Op::signature;

  op_dispatcher(const device_info& device, const jit::options& jit) : tactics_(device, jit) {}

  /// The call's signature from its tensors, in Op::tensor_names order.
  template <class... Tensors> signature signature_of(const Tensors&... tensors) const {
    static_assert(sizeof...(Tensors) == Op::tensor_names.size(), "netra::op_dispatcher: one tensor per Op::tensor_names entry");
    return Op::signature_of(tactics_.device(), tensors...);
  }

  /// The first tactic that admits the call and the signature it admitted (tactic `fallback`:
  /// none does). Throws status::invalid_argument when a strict tactic refuses a call inside its
  /// promoted domain.
  selection<signature> select(const signature& s) const { return tactics_.select(s, bind); }

  /// Records a selected call on `stream` as select() admitted it (nothing is checked again).
  void launch(stream_handle stream, const selection<signature>& chosen) const {
    tactics_.visit(chosen.tactic, [&](const auto& h) { Op::launch(h, stream, chosen.signature); });
  }

  /// select() then launch(): true when launched; false when no tactic admits the call (nothing
  /// launched: the caller runs its own implementation).
  bool run(stream_handle stream, const signature& s) const {
    const selection<signature> chosen = select(s);
    if (chosen.tactic == fallback) return false;
    launch(stream, chosen);
    return true;
  }

  explanation explain(const signature& s) const { return tactics_.explain(s, bind); }

  const tactic_set_of<decltype(Op::tactics)>& tactics() const { return tactics_; }

 private:
  static constexpr auto bind = [](const signature& s, const auto& h) { return Op::bind(s, h); };
  tactic_set_of<decltype(Op::tactics)> tactics_;
};

}  // namespace netra
