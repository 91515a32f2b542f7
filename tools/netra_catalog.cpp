// netra-catalog: prints the built-in catalog for the build system, one instance per line:
//   <instance name>|<target>|<family>|<contract spelling>
// CMake runs it at configure time and creates one code-object rule per line.
#include <cstdio>

#include "netra/runtime/builtin_catalog.hpp"
#include "netra/runtime/instance.hpp"

int main() {
  boost::hana::for_each(netra::catalog::all, [](auto t) {
    using contract = typename decltype(t)::type;
    std::printf("%s|%s|%s|%s\n", netra::instance_name<contract>().c_str(), contract::target::name,
                contract::family, netra::contract_spelling<contract>().c_str());
  });
  return 0;
}
