#include "simulator/planner/dip/dip_plan_simulation.hpp"

#include "simulator/engine/simulation.hpp"
#include "simulator/planner/dip/dip_execution_plan.hpp"

namespace weft::dip {

SimulatedDipPlan simulate_dip_plan(const TrainingScenario& scenario, const DipPlan& plan) {
  SimulatedDipPlan out{dip_execution_plan(scenario, plan), {}, {}};
  out.graph = plan_graph(out.execution, scenario.cluster);
  out.graph.cost_model->set_ideal_network(scenario.options.ideal_network);
  out.graph.cost_model->set_host_issue(scenario.options.host_issue);
  out.graph.cost_model->set_kernel_gap(scenario.options.kernel_gap);
  out.graph.cost_model->force_algorithm(scenario.options.collective_algorithm);
  out.result = simulate(out.graph.graph, *out.graph.cost_model);
  return out;
}

}  // namespace weft::dip
