// netra/runtime/dispatch.hpp — bounded dispatch over a compile-time tactic list (Boost.Hana,
// host only).
//
//   select_tactic(tactics, signature, decide) walks the list in order and returns the index of
//   the first tactic whose decision admits the call, or `fallback` (-1): the caller then runs
//   its own implementation. A strict tactic (tactic.hpp) whose promoted domain contains the
//   signature and which refuses it raises error(status::invalid_argument) instead; the tactics
//   after it are not consulted, so a promoted call never drifts to another implementation.
//   explain(tactics, signature, decide) gives every tactic's decision and the outcome.
//
// decide(hana::type_c<Tactic>, hana::size_c<I>) returns the decision of tactic I for this call;
// the caller binds per-tactic resources (its workspace) there. The default asks
// contract_of<Tactic>::admits(signature). select_tactic allocates nothing unless it throws.
#pragma once
#include <boost/hana.hpp>

#include <string>
#include <vector>

#include "netra/runtime/decision_text.hpp"
#include "netra/runtime/error.hpp"
#include "netra/runtime/instance.hpp"
#include "netra/runtime/tactic.hpp"

namespace netra {

inline constexpr int fallback = -1;

/// Calls f(hana::type_c<Tactic>, hana::size_c<I>) for every tactic, in order.
template <class Tactics, class F> void for_each_tactic(Tactics tactics, F&& f) {
  namespace hana = boost::hana;
  hana::for_each(hana::make_range(hana::size_c<0>, hana::size(tactics)), [&](auto i) { f(hana::at(tactics, i), i); });
}

/// The decision of a tactic from its list condition (tactic.hpp `when`) and its contract alone.
template <class Signature> auto admits_of(const Signature& s) {
  return [&s](auto tactic, auto) {
    using T = typename decltype(tactic)::type;
    if (const decision d = tactic_traits<T>::condition(s); !d.admitted()) return d;
    return contract_of<T>::admits(s);
  };
}

template <class Tactic> error strict_refusal(int index, const decision& d) {
  return error(status::invalid_argument, "netra: tactic [" + std::to_string(index) + "] " + contract_spelling<contract_of<Tactic>>() +
                                             " is strict in its promoted domain and this call is inside it, but the call does "
                                             "not match its ABI: " + to_string(d));
}

template <class Tactics, class Signature, class Decide> int select_tactic(Tactics tactics, const Signature& s, Decide&& decide) {
  int chosen = fallback;
  bool done = false;
  for_each_tactic(tactics, [&](auto tactic, auto index) {
    using T = typename decltype(tactic)::type;
    if (done) return;
    const decision d = decide(tactic, index);
    if (d.admitted()) {
      chosen = static_cast<int>(decltype(index)::value);
      done = true;
    } else if (tactic_traits<T>::in_promoted_domain(s)) {
      throw strict_refusal<T>(static_cast<int>(decltype(index)::value), d);
    }
  });
  return chosen;
}
template <class Tactics, class Signature> int select_tactic(Tactics tactics, const Signature& s) {
  return select_tactic(tactics, s, admits_of(s));
}

struct tactic_verdict {
  std::string tactic;  // contract spelling
  decision verdict;
  bool strict = false;
  bool in_promoted_domain = false;
};

struct explanation {
  std::vector<tactic_verdict> tactics;
  int selected = fallback;    // what select_tactic returns, when it returns
  int strict_refusal = -1;    // the strict tactic select_tactic raises for, or -1

  /// One line per tactic, then the outcome.
  std::string text() const {
    std::string s;
    for (std::size_t i = 0; i < tactics.size(); ++i) {
      const auto& t = tactics[i];
      s += "[" + std::to_string(i) + "] " + t.tactic;
      if (t.strict) s += t.in_promoted_domain ? " (strict; this call is in its promoted domain)" : " (strict elsewhere)";
      s += ": " + to_string(t.verdict) + "\n";
    }
    if (strict_refusal >= 0) s += "=> error: strict tactic [" + std::to_string(strict_refusal) + "] refuses a call inside its promoted domain";
    else if (selected >= 0) s += "=> tactic [" + std::to_string(selected) + "]";
    else s += "=> fallback: no tactic admits the call; the caller runs its own implementation";
    return s;
  }
};

template <class Tactics, class Signature, class Decide> explanation explain(Tactics tactics, const Signature& s, Decide&& decide) {
  explanation e;
  for_each_tactic(tactics, [&](auto tactic, auto index) {
    using T = typename decltype(tactic)::type;
    tactic_verdict v{contract_spelling<contract_of<T>>(), decide(tactic, index), tactic_traits<T>::is_strict,
                     tactic_traits<T>::in_promoted_domain(s)};
    const int i = static_cast<int>(e.tactics.size());
    if (e.selected < 0 && e.strict_refusal < 0) {
      if (v.verdict.admitted()) e.selected = i;
      else if (v.in_promoted_domain) e.strict_refusal = i;
    }
    e.tactics.push_back(std::move(v));
  });
  return e;
}
template <class Tactics, class Signature> explanation explain(Tactics tactics, const Signature& s) {
  return explain(tactics, s, admits_of(s));
}

}  // namespace netra
