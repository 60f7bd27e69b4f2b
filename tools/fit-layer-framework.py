#!/usr/bin/env python3
"""Fits each software stack's framework time per layer pass on the public suite, and prints its held-out error.

Usage: tools/fit-layer-framework.py [--grid MAX_US STEP_US]    (weft on the PATH; tools/docs.py runs it so)

`layer_framework_us` (docs/stacks.md) is one figure per stack. For each value of the grid, a copy of
scenarios/ with that value in every stack runs `weft suite --json` (WEFT_SCENARIOS points weft at
the copy); a run's error depends on its own stack's value only, so one pass over the grid serves
every fit. A stack's fit is the grid value of least mean |error| over the throughput runs of the
sources it may use that run the stack. A stack with no such source, or whose best value is the
grid's largest (the error falls on as the value grows: not the shape of a time per layer), gets 0.

- The half fit: the suite's sources sorted by name, those at odd positions (1st, 3rd, ...) fitted,
  the others held out. Its values are the ones the bundled stacks state.
- Leave one source out: each source's runs at their stack's value fitted on the other sources.

The grid stops at 1,000 us, about five times what the host takes to issue a layer pass's ops (11 - 17
in weft's GPT layers, at 14.3 us each: docs/host-issue.md, 0.16 - 0.24 ms): a judgement,
beyond which a figure is not plausibly a framework's time per layer.
"""
import argparse
import glob
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from weft_runs import weft_json  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = os.path.join(ROOT, "scenarios")


def suite_errors(scenarios, value_us):
    """Per case (source, error) of `weft suite` with every stack at `value_us`."""
    for path in glob.glob(os.path.join(scenarios, "stacks", "*.json")):
        with open(path) as f:
            stack = json.load(f)
        stack["layer_framework_us"] = value_us
        with open(path, "w") as f:
            json.dump(stack, f, indent=2)
    cases = weft_json(["suite"], env=dict(os.environ, WEFT_SCENARIOS=scenarios))["cases"]
    return {c["case"]: (c["source_group"], c["error"]) for c in cases if c.get("error") is not None}


def stack_of_cases():
    """The stack each case of scenarios/validation/ runs."""
    stacks = {}
    for path in glob.glob(os.path.join(SCENARIOS, "validation", "*.json")):
        with open(path) as f:
            stack = json.load(f)["scenario"].get("stack", "megatron-core")
        stacks[os.path.basename(path)[:-len(".json")]] = stack if isinstance(stack, str) else stack["base"]
    return stacks


def mean_abs(errors):
    return sum(abs(e) for e in errors) / len(errors)


class Fit:
    def __init__(self, table, source_of, stack_of):
        self.table, self.source_of, self.stack_of = table, source_of, stack_of
        self.values = sorted(table)

    def value(self, stack, sources):
        """The stack's fitted value on the runs of `sources`, or 0 (see the module's doc)."""
        cases = [c for c in self.source_of if self.source_of[c] in sources and self.stack_of[c] == stack]
        if not cases:
            return 0.0
        best = min(self.values, key=lambda v: mean_abs([self.table[v][c][1] for c in cases]))
        return 0.0 if best == self.values[-1] else best

    def errors(self, cases, values):
        """The cases' errors with each stack at `values[stack]`."""
        return [self.table[values.get(self.stack_of[c], 0.0)][c][1] for c in cases]


def summary(errors):
    return f"mean |error| {100 * mean_abs(errors):4.1f}%, worst {100 * max(abs(e) for e in errors):4.1f}%, " \
           f"mean signed {100 * sum(errors) / len(errors):+5.1f}%"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", nargs=2, type=float, default=[1000.0, 50.0], metavar=("MAX_US", "STEP_US"))
    args = parser.parse_args()
    maximum, step = args.grid
    values = [round(i * step, 6) for i in range(int(maximum / step + 1e-9) + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = os.path.join(tmp, "scenarios")
        shutil.copytree(SCENARIOS, scenarios)
        table = {value: suite_errors(scenarios, value) for value in values}
    source_of = {case: source for case, (source, _) in table[0.0].items()}
    stack_of = stack_of_cases()
    fit = Fit(table, source_of, stack_of)
    cases = sorted(source_of)
    sources = sorted(set(source_of.values()))
    stacks = sorted({stack_of[c] for c in cases})

    fitted_sources, held_sources = sources[0::2], sources[1::2]
    half = {stack: fit.value(stack, fitted_sources) for stack in stacks}
    print(f"Framework time per layer pass, per stack, grid 0 - {maximum:g} us by {step:g} us")
    print(f"Half fit on {', '.join(fitted_sources)}:")
    for stack in stacks:
        with open(os.path.join(SCENARIOS, "stacks", stack + ".json")) as f:
            bundled = json.load(f).get("layer_framework_us", 0)
        differs = f"  (scenarios/stacks/{stack}.json states {bundled:g} us)" if bundled != half[stack] else ""
        print(f"  {stack:<20} {half[stack]:>5g} us{differs}")
    for name, group in (("fitted half", fitted_sources), ("held-out half", held_sources), ("every run", sources)):
        runs = [c for c in cases if source_of[c] in group]
        print(f"  {name} ({len(runs)} runs): without it {summary(fit.errors(runs, {}))}")
        print(f"  {'':<{len(name) + len(str(len(runs))) + 8}}with it    {summary(fit.errors(runs, half))}")
    print(f"  held out: {', '.join(held_sources)}")

    print("Leave one source out (each source's runs at their stack's value fitted on the other sources):")
    print(f"  {'source':<22}{'runs':>5}  {'stack':<20}{'value':>7}  {'without':>8}  {'held out':>9}  {'signed':>7}")
    held_out = []
    for source in sources:
        own = [c for c in cases if source_of[c] == source]
        others = [s for s in sources if s != source]
        loso = {stack: fit.value(stack, others) for stack in stacks}
        errors = fit.errors(own, loso)
        held_out += errors
        for stack in sorted({stack_of[c] for c in own}):
            runs = [c for c in own if stack_of[c] == stack]
            stack_errors = fit.errors(runs, loso)
            print(f"  {source:<22}{len(runs):>5}  {stack:<20}{loso[stack]:>4g} us  "
                  f"{100 * mean_abs(fit.errors(runs, {})):>7.1f}%  {100 * mean_abs(stack_errors):>8.1f}%  "
                  f"{100 * sum(stack_errors) / len(stack_errors):>+6.1f}%")
    print(f"  every run held out: {summary(held_out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
