#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz harness (tests/fuzz/) from the bundled files, and from
outputs of WEFT (execution plans, traces) for the files weft writes and reads back.

usage: tools/fuzz-seeds.py --weft BUILD/tools/weft --out DIR
"""
import argparse
import json
import pathlib
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"


def write(out, harness, name, data):
    folder = out / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def spec_seeds(out):
    # The first byte picks the loader (tests/fuzz/spec_fuzz.cpp).
    for kind, folder in enumerate(["models", "clusters", "clusters/devices", "stacks"]):
        for path in sorted((SCENARIOS / folder).glob("*.json")):
            write(out, "spec", f"{kind}-{path.stem}", bytes([kind]) + path.read_bytes())


def data_seeds(out):
    for path in sorted(SCENARIOS.glob("experiments/*.json")):
        document = json.loads(path.read_text())
        if "data" in document:
            write(out, "data", f"0-{path.stem}", b"\0" + json.dumps(document["data"]).encode())
    for path in sorted((SCENARIOS / "datasets").glob("*.json")):
        spec = {"dataset": json.loads(path.read_text()), "seed": 1, "pad_to": 128}
        write(out, "data", f"0-dataset-{path.stem}", b"\0" + json.dumps(spec).encode())
    for path in sorted(SCENARIOS.rglob("*.jsonl")):
        write(out, "data", f"1-{path.stem}", b"\1" + path.read_bytes()[:4096])
    write(out, "data", "1-inline", b'\1{"text_tokens": 1200, "images": 2}\n{"text_tokens": 80, "video_seconds": 4.5}\n')


def resilience_seeds(out):
    # The first byte picks the reader (tests/fuzz/resilience_fuzz.cpp): 0 a resilience file, whose
    # traces the harness reads from the bundled folder, 1 a failure trace.
    for path in sorted((SCENARIOS / "resilience").glob("*.json")):
        write(out, "resilience", f"0-{path.stem}", b"\0" + path.read_bytes())
    for path in sorted((SCENARIOS / "resilience/traces").glob("*.csv")):
        write(out, "resilience", f"1-{path.stem}", b"\1" + path.read_bytes())
    # No bundled file has slowdowns or a checkpoint on notice: one that has both.
    slowed = {"failures": {"slowdowns": [{"name": "throttled", "mtbf_hours": 50, "per": "node", "hours": 3,
                                          "speed": 0.7}],
                           "causes": [{"name": "host", "mtbf_hours": 100, "per": "node", "blast_radius": "node",
                                       "repair_hours": 2}],
                           "notice_seconds": 30},
              "recovery": {"policy": "checkpoint-restart", "restart_minutes": 5,
                           "checkpoint": {"interval_minutes": 30, "write_GBps": 50, "read_GBps": 50,
                                          "on_notice": True}}}
    write(out, "resilience", "0-slowdowns", b"\0" + json.dumps(slowed).encode())
    # Nor is any Varuna file's morph onto repaired nodes switched off.
    kept = {"failures": {"causes": slowed["failures"]["causes"]},
            "recovery": {"policy": "varuna", "restart_minutes": 5, "morph_on_return": False,
                         "checkpoint": {"interval_iterations": 10, "write_GBps": 50, "read_GBps": 50}}}
    write(out, "resilience", "0-varuna-no-morph", b"\0" + json.dumps(kept).encode())
    # Nor are planned stops, here with failures that cut their checkpoints short.
    planned = {"failures": {"causes": slowed["failures"]["causes"],
                            "planned": [{"name": "firmware", "mtbf_hours": 20, "per": "node", "hours": 1}]},
               "recovery": {"policy": "checkpoint-restart", "restart_minutes": 5,
                            "checkpoint": {"interval_minutes": 30, "write_GBps": 1, "read_GBps": 50}}}
    write(out, "resilience", "0-planned-stops", b"\0" + json.dumps(planned).encode())


def sweep_journal_seeds(out):
    # The first byte picks what follows (tests/fuzz/sweep_journal_fuzz.cpp): 0 rows after the real
    # journal's header, 1 a whole file, 2 edits of the real journal (none: the journal as written).
    write(out, "sweep_journal", "0-no-rows", b"\0")
    write(out, "sweep_journal", "0-a-row", b'\0"tp1 cp1 pp1 dp8 mb1 zero1 1f1b recompute=none",ok,1,2\n')
    write(out, "sweep_journal", "1-header", b"\1# weft sweep journal: the plans simulated so far\n# scenario fuzz\n")
    write(out, "sweep_journal", "2-as-written", b"\2")
    write(out, "sweep_journal", "2-an-edit", b"\2\x01\x00,")


def measurement_seeds(out):
    for path in sorted((SCENARIOS / "measurements").glob("*.json")):
        document = json.loads(path.read_text())
        write(out, "measurements", path.stem, path.read_text())
        # Small files too: each input then runs in milliseconds.
        for kind in ["gemm", "attention", "layernorm", "allreduce", "optimizer"]:
            few = [m for m in document.get("measurements", []) if kind in json.dumps(m)][:6]
            if few:
                write(out, "measurements", f"{path.stem}-{kind}", json.dumps({**document, "measurements": few}))
        # A grouped-query attention shape (the optional kv_heads).
        grouped = [dict(m, shape=dict(m["shape"], kv_heads=1)) for m in document.get("measurements", [])
                   if m["op"].startswith("attention")][:2]
        if grouped:
            write(out, "measurements", f"{path.stem}-gqa", json.dumps({**document, "measurements": grouped}))
    for path in sorted((SCENARIOS / "profiles").glob("*.json")):
        write(out, "profile", path.stem, path.read_text())
    # Communication fits of one line and of several size regimes.
    profile = json.loads((SCENARIOS / "profiles" / "h100-sxm.json").read_text())
    profile["communication"] = [
        {"op": "allreduce", "group_size": 8, "ranks_per_node": 8, "latency_us": 20.0, "bandwidth_GBps": 200.0},
        {"op": "allgather", "group_size": 16, "ranks_per_node": 8,
         "regimes": [{"up_to_bytes": 131072, "latency_us": 9.8, "bandwidth_GBps": 21.0},
                     {"up_to_bytes": 8388608, "latency_us": 20.0, "bandwidth_GBps": 90.0},
                     {"latency_us": 41.0, "bandwidth_GBps": 176.0}]}]
    write(out, "profile", "h100-sxm-regimes", json.dumps(profile))


def scenario_seeds(out):
    for path in sorted(SCENARIOS.glob("experiments/*.json")) + sorted(SCENARIOS.glob("validation/*.json")):
        document = json.loads(path.read_text())
        write(out, "graph_scenario" if "ops" in document else "training_scenario", path.stem, path.read_text())


def output_seeds(out, weft):
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        runs = {
            name: ["simulate", str(SCENARIOS / f"experiments/{name}.json"), "--emit-plan", str(scratch / f"{name}.plan.json"),
                   "--trace", str(scratch / f"{name}.trace.json")]
            for name in ["cpu-gpt-dp2", "cpu-gpt-tp2-sp", "cpu-gpt-pp2-zb"]
        }
        # The DIP plan of a smaller copy of the bundled VLM: a plan of the full one is 0.8 MB, and
        # libFuzzer's mutations of an input that size run a few times a second under ASan.
        dip = json.loads((SCENARIOS / "experiments/cpu-vlm-pp2-dip.json").read_text())
        dip["model"]["modules"][0]["model"]["layers"] = 2
        dip["model"]["modules"][2]["model"] = {"base": dip["model"]["modules"][2]["model"], "layers": 2}
        dip["training"]["global_batch"] = 4
        (scratch / "cpu-vlm-pp2-dip.json").write_text(json.dumps(dip))
        runs["cpu-vlm-pp2-dip"] = ["plan", str(scratch / "cpu-vlm-pp2-dip.json"), "--iterations", "2",
                                  "--emit-plan", str(scratch / "cpu-vlm-pp2-dip.plan.json")]
        for name, arguments in runs.items():
            subprocess.run([weft, *arguments], check=True, stdout=subprocess.DEVNULL)
        for path in sorted(scratch.glob("*.plan.json")):
            write(out, "execution_plan", path.name, path.read_text())
        for path in sorted(scratch.glob("*.trace.json")):
            write(out, "trace", path.name, path.read_text())
    write(out, "trace", "tiny_trace.json", (ROOT / "tests/golden/tiny_trace.json").read_text())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weft", required=True, help="the weft binary")
    parser.add_argument("--out", required=True, help="the corpus folder (one subfolder per harness)")
    arguments = parser.parse_args()
    out = pathlib.Path(arguments.out)
    spec_seeds(out)
    data_seeds(out)
    measurement_seeds(out)
    resilience_seeds(out)
    sweep_journal_seeds(out)
    scenario_seeds(out)
    output_seeds(out, arguments.weft)


if __name__ == "__main__":
    main()
