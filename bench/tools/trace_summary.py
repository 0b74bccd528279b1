#!/usr/bin/env python3
"""Per-kernel GPU times from a clt-bench --trace file (Chrome trace JSON written by the profiler):
for each (op, kernel impl) the number of launches, the median duration and the median gap from the
end of the previous command to its start, in us. Shows where an op's wall time goes (kernels vs the
idle device between launches). usage: trace_summary.py TRACE.json [...]"""
import json
import statistics
import sys

for path in sys.argv[1:]:
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    cmds = sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["ts"])
    rows = {}
    prev_end = None
    for e in cmds:
        key = (e["name"], e.get("args", {}).get("impl", ""))
        gap = e["ts"] - prev_end if prev_end is not None else None
        prev_end = e["ts"] + e["dur"]
        r = rows.setdefault(key, ([], []))
        r[0].append(e["dur"])
        if gap is not None:
            r[1].append(gap)
    print(f"## {path}\n| op | kernel | launches | median us | median gap before, us |")
    print("| --- | --- | ---: | ---: | ---: |")
    for (name, impl), (durs, gaps) in rows.items():
        gap = f"{statistics.median(gaps):.2f}" if gaps else "-"
        print(f"| {name} | {impl} | {len(durs)} | {statistics.median(durs):.2f} | {gap} |")
