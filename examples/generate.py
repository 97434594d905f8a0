"""Generate the example event log: realistic agent sessions with known injected failures.

Deterministic for a seed. Writes the events (our JSONL schema, gzip) and a truth file listing every
injected failure, so tests can check the detectors find each one and nothing in the clean
sessions. Besides clean sessions and the two failure kinds it plants decoys that must *not* be
flagged: repeats with no compaction in between, repeats after the window, repeats of ignored
polling tools, negation flips and updated values.

    python examples/generate.py --out examples/sessions.jsonl.gz --sessions 300 --seed 7
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

AGENTS = [("claude-code", "2.0.31"), ("codex-cli", "0.58.0"), ("pi", "0.12.1")]
MODELS = ["model-large-2026-09", "model-medium-2026-10"]
COMPACTORS = ["sum-v1.3", "sum-v1.4", "sum-v2.0-rc1"]
TENANTS = ["acme", "globex", "initech"]
MODULES = ["billing", "auth", "search", "ingest", "reports", "notifications", "scheduler", "export"]
FILES = [
    "models.py",
    "views.py",
    "service.py",
    "handlers.py",
    "schema.sql",
    "config.yaml",
    "utils.py",
]
BRANCHES = ["feature/rate-limits", "fix/token-refresh", "topic/geofence-alerts", "release/4.2"]

#: An instruction, the restatements a user says once the agent stops honouring it, and a
#: flip or an update (decoys that must not be flagged).
INSTRUCTIONS: list[dict[str, Any]] = [
    {
        "say": "Never modify anything under {dir}/migrations.",
        "again": [
            "As I said, never modify anything under {dir}/migrations.",
            "Again: do not modify anything under {dir}/migrations.",
            "I already told you: never modify anything under {dir}/migrations!",
        ],
        "flip": "OK, now you can modify the files under {dir}/migrations.",
    },
    {
        "say": "Run the tests with `pytest -q tests/{mod}` before every commit.",
        "again": [
            "Reminder: run the tests with pytest -q tests/{mod} before every commit.",
            "Please run `pytest -q tests/{mod}` before every commit, like I said earlier.",
        ],
        "update": "Actually, run the whole suite with `pytest -q` instead of tests/{mod}.",
    },
    {
        "say": "Stay on the {branch} branch; I will merge it myself.",
        "again": [
            "Stay on {branch}, I'll merge it myself.",
            "Again, stay on the {branch} branch and let me do the merge myself.",
        ],
        "flip": "Don't stay on {branch}; switch to main.",
    },
    {
        "say": "Use port {port} for the local dev server.",
        "again": [
            "As I said before, use port {port} for the local dev server.",
            "Use port {port} for the local dev server, please, as I asked.",
        ],
        "update": "Switch the local dev server to port {port2} instead.",
    },
    {
        "say": "Do not push to main.",
        "again": ["I said do not push to main!", "Again: do not push to main."],
        "flip": "Push to main now.",
    },
    {
        "say": "Keep every function in {mod}/{file} under 40 lines.",
        "again": [
            "Remember to keep every function in {mod}/{file} under 40 lines.",
            "Keep the functions in {mod}/{file} under 40 lines, as I told you.",
        ],
        "update": "Keep functions in {mod}/{file} under 60 lines now.",
    },
]

CHATTER = [
    "Looks good, carry on.",
    "Thanks, that output makes sense.",
    "What does the retry helper in this module do?",
    "Can you explain why the test failed?",
    "ok",
    "Nice. What's next on the list?",
    "Is the cache invalidated on logout?",
]

NEW_TASKS = [
    "Now add pagination to the {mod} list endpoint.",
    "Next, write a unit test for the {mod} serializer.",
    "Please add type hints to {mod}/{file}.",
    "Rename the helper in {mod}/{file} to something clearer.",
]

POLL_TOOL = "TodoWrite"


@dataclass
class Truth:
    session_id: str
    signal: str
    turn: int
    original_turn: int
    compaction_turn: int | None


@dataclass
class Builder:
    session_id: str
    rng: random.Random
    start: datetime
    attrs: dict[str, str]
    compactor: str
    events: list[dict[str, Any]] = field(default_factory=list)
    turn: int = 0
    n: int = 0
    clock: datetime = field(init=False)
    calls: dict[str, int] = field(default_factory=dict)  # canonical call -> last turn
    compactions: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.clock = self.start

    def _emit(self, kind: str, **body: Any) -> None:
        self.clock += timedelta(seconds=self.rng.randint(2, 40))
        self.n += 1
        event = {
            "event_id": f"{self.session_id}-{self.n:05d}",
            "session_id": self.session_id,
            "turn": self.turn,
            "ts": self.clock.isoformat().replace("+00:00", "Z"),
            "kind": kind,
            **body,
        }
        if self.n == 1:
            event["attrs"] = self.attrs
        self.events.append(event)

    def user(self, text: str) -> int:
        self.turn += 1
        self._emit("user_message", text=text)
        return self.turn

    def step(self, calls: list[tuple[str, dict[str, Any]]], spelling: int = 0) -> int:
        """One model step issuing ``calls``; each gets its result in the same turn."""
        self.turn += 1
        for i, (name, args) in enumerate(calls):
            call_id = f"call_{self.session_id[-6:]}_{self.turn}_{i}"
            wire = respell(args, spelling) if spelling else args
            self._emit("tool_call", tool={"name": name, "arguments": wire, "call_id": call_id})
            self._emit("tool_result", tool={"name": name, "call_id": call_id}, text="(output)")
            self.calls[canon(name, args)] = self.turn
        return self.turn

    def say(self, text: str) -> None:
        self.turn += 1
        self._emit("assistant_message", text=text)

    def compact(self) -> int:
        self.turn += 1
        before = self.rng.randint(150_000, 190_000)
        self._emit(
            "compaction",
            compaction={
                "trigger": "auto" if self.rng.random() < 0.85 else "manual",
                "tokens_before": before,
                "tokens_after": self.rng.randint(9_000, 30_000),
                "compactor": self.compactor,
            },
        )
        self.compactions.append(self.turn)
        return self.turn


def canon(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True)


def respell(args: dict[str, Any], spelling: int) -> dict[str, Any]:
    """The same arguments spelled differently: reversed key order, integral numbers as floats."""
    items = list(args.items())[::-1]
    return {
        k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in items
    }


def fresh_call(b: Builder, avoid: set[str]) -> tuple[str, dict[str, Any]]:
    """A call that repeats nothing issued before (so clean sessions stay clean)."""
    rng = b.rng
    for _ in range(1000):
        mod, f = rng.choice(MODULES), rng.choice(FILES)
        choice = rng.random()
        if choice < 0.45:
            call = ("Read", {"file_path": f"/repo/{mod}/{f}", "offset": rng.randint(1, 400)})
        elif choice < 0.7:
            call = (
                "Grep",
                {
                    "pattern": rng.choice(["TODO", "def ", "retry", "token"])
                    + str(rng.randint(0, 99999)),
                    "path": f"/repo/{mod}",
                },
            )
        elif choice < 0.9:
            call = ("Bash", {"command": f"pytest -q tests/{mod} -k case{rng.randint(0, 99999)}"})
        else:
            call = (
                "Edit",
                {"file_path": f"/repo/{mod}/{f}", "old": f"x{rng.randint(0, 10**6)}", "new": "y"},
            )
        if canon(*call) not in avoid and canon(*call) not in b.calls:
            return call
    raise RuntimeError("could not draw a fresh call")


def fill(b: Builder, slots: dict[str, Any], text: str) -> str:
    return text.format(**slots)


def build_session(
    index: int, rng: random.Random, base: datetime
) -> tuple[list[dict[str, Any]], list[Truth], str]:
    kind = rng.choices(
        ["clean", "repeat", "restate", "both", "decoy"], weights=[40, 20, 15, 8, 17]
    )[0]
    agent, version = rng.choice(AGENTS)
    compactor = rng.choices(COMPACTORS, weights=[50, 35, 15])[0]
    sid = f"ex-{index:04d}-{rng.getrandbits(32):08x}"
    attrs = {
        "agent": agent,
        "agent_version": version,
        "model": rng.choice(MODELS),
        "compactor": compactor,
        "tenant": rng.choice(TENANTS),
    }
    b = Builder(sid, rng, base + timedelta(minutes=rng.randint(0, 60 * 24 * 12)), attrs, compactor)
    slots = {
        "dir": "/repo/" + rng.choice(MODULES),
        "mod": rng.choice(MODULES),
        "file": rng.choice(FILES),
        "branch": rng.choice(BRANCHES),
        "port": rng.choice([3000, 5173, 8080, 8000]),
        "port2": rng.choice([9090, 4000, 8443]),
    }
    truth: list[Truth] = []
    chosen = rng.sample(INSTRUCTIONS, k=rng.randint(1, 3))
    opening_task = rng.choice(NEW_TASKS)
    tasks_used = {opening_task}
    first = b.user(
        " ".join(fill(b, slots, ins["say"]) for ins in chosen) + " " + fill(b, slots, opening_task)
    )
    said_at = {id(ins): first for ins in chosen}
    length = rng.randint(60, 240)
    next_compaction = rng.randint(35, 90)
    pending_repeat = kind in ("repeat", "both")
    pending_restate = kind in ("restate", "both")
    decoy = (
        rng.choice(["same_epoch", "after_window", "poll", "flip_or_update"])
        if kind == "decoy"
        else None
    )
    while b.turn < length:
        if b.turn >= next_compaction:
            c = b.compact()
            next_compaction = c + rng.randint(50, 120)
            after = b.turn
            pre_calls = [k for k, t in b.calls.items() if t < c and not k.startswith(POLL_TOOL)]
            if pending_repeat and pre_calls:
                gap = rng.randint(1, 3)
                for _ in range(gap - 1):
                    b.step([fresh_call(b, set())])
                key = rng.choice(pre_calls)
                name, args = key[: key.index("{")], json.loads(key[key.index("{") :])
                original = b.calls[key]
                t = b.step([(name, args)], spelling=rng.randint(0, 1))
                truth.append(Truth(sid, "repeated_tool_call", t, original, c))
                pending_repeat = False
                if kind == "both" or rng.random() < 0.3:
                    b._emit("incident", text="user reported lost context")
            elif pending_restate and b.turn > first + 1:
                b.step([fresh_call(b, set())])
                ins = rng.choice(chosen)
                t = b.user(fill(b, slots, rng.choice(ins["again"])))
                truth.append(Truth(sid, "restated_instruction", t, said_at[id(ins)], c))
                pending_restate = False
            elif decoy == "after_window" and pre_calls:
                for _ in range(7):
                    b.step([fresh_call(b, set())])
                key = rng.choice(pre_calls)
                b.step([(key[: key.index("{")], json.loads(key[key.index("{") :]))])
                decoy = None
            elif decoy == "poll":
                b.step([(POLL_TOOL, {"todos": [{"content": "ship it", "status": "in_progress"}]})])
                decoy = None
            assert b.turn >= after
            continue
        roll = rng.random()
        if roll < 0.06:
            b.user(rng.choice(CHATTER))
        elif roll < 0.08:
            unused = [t for t in NEW_TASKS if t not in tasks_used]
            task = rng.choice(unused) if unused else None
            b.user(fill(b, slots, task) if task else rng.choice(CHATTER))
            if task:
                tasks_used.add(task)
        elif roll < 0.12:
            b.say("Done with that part; moving on.")
        else:
            n_calls = 1 if rng.random() < 0.8 else 2
            b.step([fresh_call(b, set()) for _ in range(n_calls)])
            since = b.compactions[-1] if b.compactions else -1
            recent = [k for k, t in b.calls.items() if t > since]
            if decoy == "same_epoch" and recent and b.turn > 10 and rng.random() < 0.2:
                # Re-issued with no compaction in between: the agent still holds the result.
                k = rng.choice(recent)
                b.step([(k[: k.index("{")], json.loads(k[k.index("{") :]))])
                decoy = None
            if b.turn == 12 and rng.random() < 0.5:
                b.step([(POLL_TOOL, {"todos": [{"content": "ship it", "status": "in_progress"}]})])
        if decoy == "flip_or_update" and b.compactions and b.turn > b.compactions[-1] + 1:
            ins = rng.choice(chosen)
            text = ins.get("flip") or ins.get("update")
            b.user(fill(b, slots, text))
            decoy = None
    b._emit("session_end")
    return b.events, truth, kind


def generate(sessions: int, seed: int) -> tuple[list[dict[str, Any]], list[Truth], dict[str, str]]:
    rng = random.Random(seed)
    base = datetime(2026, 11, 23, tzinfo=UTC)
    per_session = [build_session(i, rng, base) for i in range(sessions)]
    # Interleave sessions by time, as a production log would; per session the order is kept.
    events = sorted(
        (e for evs, _, _ in per_session for e in evs), key=lambda e: (e["ts"], e["event_id"])
    )
    truth = [t for _, ts, _ in per_session for t in ts]
    kinds = {evs[0]["session_id"]: kind for evs, _, kind in per_session}
    return events, truth, kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="examples/sessions.jsonl.gz")
    parser.add_argument("--truth", default="examples/truth.json")
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    events, truth, kinds = generate(args.sessions, args.seed)
    out = Path(args.out)
    body = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    # Two malformed lines show how replay reports bad input (file:line, reason) and goes on.
    body += '{"event_id": "broken-1", "session_id": "ex-x", "turn": -1}\n' + "not json at all\n"
    data = body.encode()
    if out.suffix == ".gz":
        data = gzip.compress(data, mtime=0)  # mtime 0: the same seed gives the same bytes
    out.write_bytes(data)
    Path(args.truth).write_text(
        json.dumps(
            {
                "seed": args.seed,
                "sessions": args.sessions,
                "kinds": kinds,
                "injected": [t.__dict__ for t in truth],
            },
            indent=1,
        )
        + "\n"
    )
    print(
        f"{len(events)} events, {args.sessions} sessions, {len(truth)} injected failures -> {out}"
    )


if __name__ == "__main__":
    main()
