"""Checks the per-rank trace files of a run: each parses as trace-event JSON, carries its rank as pid,
holds the training phases, and on every thread the events nest (two events either do not overlap or
one contains the other) with each phase inside the phase it belongs to.

usage: trace_check.py TRACE.rank0.json [TRACE.rank1.json ...]   (file i must be rank i)
"""
import json
import sys

PARENT = {  # phase -> the phase it must lie inside
    "step": "epoch", "data": "epoch", "validation": "epoch", "checkpoint": "epoch",
    "forward_backward": "step", "allreduce": "step", "optimizer": "step",
}
REQUIRED = set(PARENT) | {"epoch"}


def to_ns(us):
    return round(us * 1000)  # the files print whole nanoseconds: no rounding left to disagree on


def check(path, rank):
    with open(path) as f:
        trace = json.load(f)
    failures = []
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    names = {e["name"] for e in events}
    if not REQUIRED <= names:
        failures.append(f"phases missing: {sorted(REQUIRED - names)}")
    if any(e["pid"] != rank for e in trace["traceEvents"]):
        failures.append(f"an event's pid is not the rank {rank}")
    by_thread = {}
    for e in events:
        if e["dur"] < 0:
            failures.append(f"{e['name']} has a negative duration")
        by_thread.setdefault(e["tid"], []).append((to_ns(e["ts"]), to_ns(e["ts"] + e["dur"]), e["name"]))
    for tid, spans in by_thread.items():
        # Sorted by start, longest first: a stack of open spans is the chain of enclosing phases.
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for begin, end, name in spans:
            while stack and stack[-1][1] <= begin:
                stack.pop()
            if stack and end > stack[-1][1]:
                failures.append(f"tid {tid}: {name} [{begin}, {end}) overlaps {stack[-1][2]} "
                                f"[{stack[-1][0]}, {stack[-1][1]}) without lying inside it")
            want = PARENT.get(name)
            if want and not any(s[2] == want for s in stack):
                failures.append(f"tid {tid}: {name} at {begin} ns is not inside a {want}")
            stack.append((begin, end, name))
    for f in failures[:20]:
        print(f"FAIL: {path}: {f}")
    if not failures:
        print(f"{path}: {len(events)} events, phases {sorted(names)}")
    return not failures


def main(paths):
    ok = all([check(p, rank) for rank, p in enumerate(paths)])
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
