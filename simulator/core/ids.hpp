#pragma once

#include "simulator/core/strong_id.hpp"

namespace weft {

using OpId = StrongId<struct OpIdTag>;
using TensorId = StrongId<struct TensorIdTag>;
using DeviceId = StrongId<struct DeviceIdTag>;
using StreamId = StrongId<struct StreamIdTag>;
using CollectiveId = StrongId<struct CollectiveIdTag>;
using WorkId = StrongId<struct WorkIdTag>;  // index of an interned OpWork
using NameId = StrongId<struct NameIdTag>;  // index of an interned name
using DeviceSpecId = StrongId<struct DeviceSpecIdTag>;
using SubgraphId = StrongId<struct SubgraphIdTag>;    // a template a graph instantiates
using CompositeId = StrongId<struct CompositeIdTag>;  // one instance of a template (a composite op)

}  // namespace weft
