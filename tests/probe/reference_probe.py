# The reference lifecycle probe, kept as the oracle of the parity test
# (tests/test_probe_parity.cpp): for every valid input, `oomsim probe` prints
# the same bytes as this script. It is test data: never edit it to match oomsim.
from pathlib import Path
import json
import sys

if len(sys.argv) != 2:
    raise SystemExit("usage: lifecycle_probe.py events.json")
path = Path(sys.argv[1]).resolve()
if not path.is_file():
    raise SystemExit("event file does not exist")
events = json.loads(path.read_text(encoding="utf-8"))
if not isinstance(events, list) or not events:
    raise SystemExit("events must be a nonempty list")

stages = {"download", "load", "runtime_prepare", "delegate_prepare",
          "inference", "cache", "exit"}
reasons = {"none", "low_memory", "anr", "native_crash",
           "java_crash", "system_reclaim", "unknown"}
previous_time = -1
peak = None
over_budget = []

for index, event in enumerate(events):
    timestamp = event.get("time_ms")
    stage = event.get("stage")
    rss = event.get("rss_mb")
    budget = event.get("budget_mb")
    sessions = event.get("sessions")
    reason = event.get("exit_reason", "none")
    if not isinstance(timestamp, int) or timestamp < previous_time:
        raise SystemExit(f"invalid event time at index {index}")
    if stage not in stages or reason not in reasons:
        raise SystemExit(f"invalid stage or reason at index {index}")
    if not isinstance(rss, int) or not isinstance(budget, int) or budget < 1:
        raise SystemExit(f"invalid memory sample at index {index}")
    if not isinstance(sessions, int) or sessions < 0:
        raise SystemExit(f"invalid session count at index {index}")
    previous_time = timestamp
    if peak is None or rss > peak["rss_mb"]:
        peak = {"stage": stage, "rss_mb": rss, "sessions": sessions}
    if rss > budget:
        over_budget.append({"index": index, "stage": stage, "rss_mb": rss})

last = events[-1]
reason = last.get("exit_reason", "none")
if reason == "low_memory":
    recovery = "stop new inference and isolate the candidate"
elif reason == "anr":
    recovery = "inspect main-thread and lock evidence"
elif reason == "native_crash":
    recovery = "preserve native evidence and isolate the execution path"
else:
    recovery = "keep the cause unconfirmed and collect more evidence"

report = {"peak": peak, "over_budget": over_budget,
          "exit_reason": reason, "recovery": recovery}
print(json.dumps(report, ensure_ascii=False, indent=2))
