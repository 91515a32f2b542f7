// netra/runtime/tactic.hpp — what a dispatch list holds: a contract type, or a contract marked
// strict inside its promoted domain (host only).
//
// strict<Contract, Domain>: Domain::contains(signature) is the set of calls the contract has been
// promoted to serve (the article's state-replay rule: "a mismatched ABI inside the promoted
// domain raises an error instead of silently falling back"). Inside it, a call the contract
// refuses is an error, not a fallback; outside it, the tactic behaves like a plain contract.
#pragma once

namespace netra {

template <class Contract, class Domain> struct strict {
  using contract = Contract;
  using domain = Domain;
};

template <class Tactic> struct tactic_traits {
  using contract = Tactic;
  static constexpr bool is_strict = false;
  template <class Signature> static bool in_promoted_domain(const Signature&) { return false; }
};

template <class Contract, class Domain> struct tactic_traits<strict<Contract, Domain>> {
  using contract = Contract;
  static constexpr bool is_strict = true;
  template <class Signature> static bool in_promoted_domain(const Signature& s) { return Domain::contains(s); }
};

/// The contract of a tactic (the tactic itself unless it is strict<...>).
template <class Tactic> using contract_of = typename tactic_traits<Tactic>::contract;

}  // namespace netra
