#pragma once

#include <boost/container/small_vector.hpp>

namespace weft {

// One value per simulated peer of a pipeline stage: a single one when folded, so kept inline.
template <class T>
using PerPeer = boost::container::small_vector<T, 1>;

}  // namespace weft
