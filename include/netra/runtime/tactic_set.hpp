// netra/runtime/tactic_set.hpp — the tactics of one operation, loaded for one device.
//
// Construction loads every tactic built for the device's target: from the code objects embedded
// in libnetra when the instance is there, else through the startup JIT (and its disk cache).
// A tactic that cannot be JIT-compiled here (no compiler, ...) stays unloaded with the reason:
// dispatch then refuses it at the field "code object" and explain() says why. A tactic for
// another target is refused at "target" by its contract. After construction, select() and
// visit() allocate nothing, look nothing up and do not synchronise.
// Code using this header links libnetra (embedded_objects.hpp).
#pragma once
#include <boost/hana.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "netra/runtime/dispatch.hpp"
#include "netra/runtime/embedded_objects.hpp"
#include "netra/runtime/handle.hpp"
#include "netra/runtime/jit/compile.hpp"

namespace netra {

/// What select() returns: the index of the tactic that takes the call (or `fallback`) and the
/// signature its contract admitted (bound to that tactic's resources).
template <class Signature> struct selection {
  int tactic = fallback;
  Signature signature;
};

template <class... Tactics> class tactic_set {
 public:
  static constexpr auto tactics = boost::hana::tuple_t<Tactics...>;
  static constexpr std::size_t size = sizeof...(Tactics);

  tactic_set(const device_info& device, const jit::options& jit) : device_(device) {
    load(jit, std::index_sequence_for<Tactics...>{});
  }

  const device_info& device() const { return device_; }
  bool loaded(std::size_t i) const { return unavailable_[i].empty(); }
  /// Why tactic i is not loaded (empty when it is).
  const std::string& unavailable(std::size_t i) const { return unavailable_[i]; }

  /// The tactic that takes the call (or `fallback`) and the signature it admitted: bind(signature,
  /// handle) returns the signature with that tactic's resources (its workspace). The launch uses
  /// both as they are — the call is admitted once. Throws for a strict refusal.
  template <class Signature, class Bind> selection<Signature> select(const Signature& s, Bind&& bind) const {
    selection<Signature> chosen{select_tactic(tactics, s, decider(s, bind)), s};
    if (chosen.tactic != fallback) visit(chosen.tactic, [&](const auto& h) { chosen.signature = bind(s, h); });
    return chosen;
  }
  template <class Signature, class Bind> explanation explain(const Signature& s, Bind&& bind) const {
    return netra::explain(tactics, s, decider(s, bind));
  }

  /// Calls f(handle) with the handle of tactic i (a loaded one, as select() returns).
  template <class F> void visit(int i, F&& f) const { visit(i, f, std::index_sequence_for<Tactics...>{}); }

 private:
  template <class Signature, class Bind> auto decider(const Signature& s, Bind& bind) const {
    return [this, &s, &bind](auto tactic, auto index) -> decision {
      using T = typename decltype(tactic)::type;
      using contract = contract_of<T>;
      constexpr std::size_t i = decltype(index)::value;
      if (const decision d = tactic_traits<T>::condition(s); !d.admitted()) return d;
      if (const auto& h = std::get<i>(handles_)) return contract::admits(bind(s, *h));
      const decision d = contract::admits(s);
      if (!d.admitted() && std::string_view(d.field) == "target") return d;
      return refuse("code object", unavailable_[i].c_str(), 0);
    };
  }

  template <std::size_t... I> void load(const jit::options& jit, std::index_sequence<I...>) { (load_one<I>(jit), ...); }

  template <std::size_t I> void load_one(const jit::options& jit) {
    using contract = contract_of<std::tuple_element_t<I, std::tuple<Tactics...>>>;
    if (contract::target::id != device_.target) {
      unavailable_[I] = std::string("a code object for this device: the tactic is for ") + contract::target::name;
      return;
    }
    if (const auto embedded = find_embedded_code_object(instance_name<contract>())) {
      std::get<I>(handles_).emplace(*embedded, device_);
      return;
    }
    try {
      const jit::result compiled = jit::compile<contract>(jit);
      std::get<I>(handles_).emplace(std::span<const std::byte>(compiled.code_object), device_);
    } catch (const error& e) {
      unavailable_[I] = "a code object loaded on this device; the JIT failed: " + std::string(e.what());
      if (jit.log) jit.log("netra: tactic " + contract_spelling<contract>() + " is unavailable: " + e.what());
    }
  }

  template <class F, std::size_t... I> void visit(int i, F& f, std::index_sequence<I...>) const {
    ((static_cast<int>(I) == i ? (f(*std::get<I>(handles_)), 0) : 0), ...);
  }

  device_info device_;
  std::tuple<std::optional<handle<contract_of<Tactics>>>...> handles_;
  std::array<std::string, size> unavailable_{};
};

/// tactic_set_of<decltype(list)>: the tactic_set of a hana::tuple_t<...> list.
template <class List> struct tactic_set_for;
template <class... Types> struct tactic_set_for<boost::hana::tuple<Types...>> {
  using type = tactic_set<typename Types::type...>;
};
template <class List> using tactic_set_of = typename tactic_set_for<std::remove_cvref_t<List>>::type;

}  // namespace netra
