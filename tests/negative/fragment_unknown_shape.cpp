#include <netra/dsl/matrix_fragment.hpp>
struct not_a_shape {};
template struct netra::fragment_mma<not_a_shape>;
