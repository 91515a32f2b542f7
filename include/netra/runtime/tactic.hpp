// netra/runtime/tactic.hpp — what a dispatch list holds: a contract type, or a contract marked
// strict inside its promoted domain (host only).
//
// strict<Contract, Domain>: Domain::contains(signature) is the set of calls the contract has been
// promoted to serve (the article's state-replay rule: "a mismatched ABI inside the promoted
// domain raises an error instead of silently falling back"). Inside it, a call the contract
// refuses is an error, not a fallback; outside it, the tactic behaves like a plain contract.
// when<Tactic, Condition>: the tactic is taken only where Condition admits the call (below);
// from_batch_range<Range> is the batch-range condition; strict_when<Contract, Domain, Condition>
// a strict tactic whose promoted domain is Domain's calls that Condition takes.
#pragma once
#include "netra/contracts/common.hpp"

namespace netra {

template <class Contract, class Domain> struct strict {
  using contract = Contract;
  using domain = Domain;
};

/// when<Tactic, Condition>: Tactic, taken only for calls Condition::decide(signature) admits — the
/// tactic list's own choice between contracts that would both admit a call (a threshold that a
/// measurement set, say), stated once in the list. Decided before the contract's admits().
template <class Tactic, class Condition> struct when {
  using tactic = Tactic;
  using condition = Condition;
};

template <class Tactic> struct tactic_traits {
  using contract = Tactic;
  static constexpr bool is_strict = false;
  template <class Signature> static bool in_promoted_domain(const Signature&) { return false; }
  template <class Signature> static decision condition(const Signature&) { return admit(); }
};

template <class Contract, class Domain> struct tactic_traits<strict<Contract, Domain>> {
  using contract = Contract;
  static constexpr bool is_strict = true;
  template <class Signature> static bool in_promoted_domain(const Signature& s) { return Domain::contains(s); }
  template <class Signature> static decision condition(const Signature&) { return admit(); }
};

template <class Tactic, class Condition> struct tactic_traits<when<Tactic, Condition>> : tactic_traits<Tactic> {
  template <class Signature> static decision condition(const Signature& s) {
    if (const decision d = Condition::decide(s); !d.admitted()) return d;
    return tactic_traits<Tactic>::condition(s);
  }
};

/// A `when` condition on the batch: Range::min <= B <= Range::max, a mapping's measured range
/// (`Range::rule` names it in the refusal), for any signature with batch() (attention, gdn conv).
template <class Range> struct from_batch_range {
  template <class Signature> static bool takes(const Signature& s) { return s.batch() >= Range::min && s.batch() <= Range::max; }
  template <class Signature> static decision decide(const Signature& s) {
    if (takes(s)) return admit();
    return refuse("batch", Range::rule, s.batch());
  }
};

/// A `when` tactic's promoted domain: the calls of Domain that Condition takes (the range is stated
/// once, in the condition); strict_when is that tactic.
template <class Domain, class Condition> struct domain_taken_by {
  template <class Signature> static bool contains(const Signature& s) { return Domain::contains(s) && Condition::takes(s); }
};
template <class Contract, class Domain, class Condition> using strict_when = when<strict<Contract, domain_taken_by<Domain, Condition>>, Condition>;

/// The contract of a tactic (the tactic itself unless it is strict<...>).
template <class Tactic> using contract_of = typename tactic_traits<Tactic>::contract;

}  // namespace netra
