"""Fixture drafts: a flagged session's evidence, laid out the way fixtures are written.

A fixture says what must survive a compaction of a conversation. The flags already name two
kinds of it: an instruction the user had to restate (a ``constraint``: its earliest wording and
turn) and a tool result the agent had to fetch again (a ``reference``: the call, and the turn
of its first result). Both are guesses until a person confirms them, so every entry, and the
draft itself, carries ``"candidate": true``. The shape is ``schemas/fixture-draft.v1.json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from monitor.probes import probe

FORMAT: Final = "fixture-draft.v1"

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def build_draft(
    conversation_id: str,
    turns: int,
    compactions: int,
    flags: Iterable[Mapping[str, Any]],
    items: Iterable[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A draft from a session's flags (``Flag.report()`` / stored-flag shape) and, when the
    survival check ran, its ledger items (``sessions.items``).

    One entry per distinct instruction or call (the flag ``key``), at its earliest turn, so a
    session that restated the same thing five times yields one constraint. Every ledger item
    checked at a compaction is a candidate too, flagged or not, with the verdict seen at each
    compaction: a fixture should hold what survived as well as what was lost.
    """
    found: dict[str, list[dict[str, Any]]] = {}
    compaction_turns: set[int] = set()
    count = 0
    for flag in flags:
        count += 1
        if flag.get("compaction_turn") is not None:
            compaction_turns.add(int(flag["compaction_turn"]))
        entry = _entry(flag)
        if entry is not None:
            found.setdefault(entry["id"], []).append(entry)
    entries = []
    #: (entry id, compaction turn) -> what a survival flag said of it there.
    flagged: dict[tuple[str, int], dict[str, Any]] = {}
    for same in found.values():
        first = min(same, key=lambda e: (e["turn"], e["evidence"]["flag_turns"][0]))
        first["evidence"]["flag_turns"] = sorted({e["evidence"]["flag_turns"][0] for e in same})
        for e in same:
            for v in e.pop("seen", ()):
                flagged[(first["id"], v["compaction_turn"])] = v
        seen = sorted((v for (i, _), v in flagged.items() if i == first["id"]),
                      key=lambda v: v["compaction_turn"])  # fmt: skip
        if seen:
            first["seen"] = seen
        entries.append(first)
    by_id = {e["id"]: e for e in entries}
    for item in items or ():
        if not item.get("seen"):
            continue  # never live at a compaction: nothing was asked of a summary
        entry = by_id.get(f"{item['class']}-{item['id']}")
        if entry is None:
            entry = _ledger_entry(item)
            by_id[entry["id"]] = entry
            entries.append(entry)
        # The ledger's verdicts, with the flag's compactor and sentence where one was raised.
        entry["seen"] = [
            flagged.get((entry["id"], int(v["compaction_turn"])))
            or {"compaction_turn": int(v["compaction_turn"]), "verdict": str(v["verdict"])}
            for v in item["seen"]
        ]
        compaction_turns.update(int(v["compaction_turn"]) for v in item["seen"])
    must_survive = sorted(entries, key=lambda e: (e["turn"], e["class"], e["id"]))
    return {
        "format": FORMAT,
        "candidate": True,
        "conversation_id": conversation_id,
        "turns": int(turns),
        "compactions_expected": int(compactions),
        "must_survive": must_survive,
        "source": {"flags": count, "compaction_turns": sorted(compaction_turns)},
    }


def _entry(flag: Mapping[str, Any]) -> dict[str, Any] | None:
    ev: Mapping[str, Any] = flag.get("evidence") or {}
    key = str(flag.get("key", ""))
    if flag.get("signal") == "restated_instruction":
        turn = int(ev.get("original_turn", flag["original_turn"]))
        literal = str(ev.get("earlier", ""))
        return {
            **_candidate("constraint", key, turn, literal),
            "evidence": {
                "signal": "restated_instruction",
                "restated_as": str(ev.get("later", "")),
                "flag_turns": [int(flag["turn"])],
            },
        }
    if flag.get("signal") in ("dropped_item", "inverted_item"):
        return _survival_entry(flag, ev, key)
    if flag.get("signal") == "repeated_tool_call":
        tool = str(ev.get("tool", ""))
        arguments = str(ev.get("arguments", ""))
        # The latest result before the compaction, not the first: the file may have changed
        # between the two, and the fixture asks what the agent last saw.
        turn = int(flag["original_turn"])
        return {
            "id": f"reference-{key}",
            "class": "reference",
            "turn": turn,
            "literal": f"{tool} {arguments}",
            "probe": f"What did the {tool} call at turn {turn} return?",
            "expect": f"answers from the turn {turn} result without calling {tool} again",
            "candidate": True,
            "call": {"tool": tool, "arguments": arguments},
            "evidence": {"signal": "repeated_tool_call", "flag_turns": [int(flag["turn"])]},
        }
    return None


def _candidate(
    cls: str, item_id: str, turn: int, literal: str, speaker: str = "user"
) -> dict[str, Any]:
    """An entry for a ledger item, with the probe and expected answer phrased for its class."""
    question, expect = probe(cls, literal, turn, speaker)
    return {
        "id": f"{cls}-{item_id}",
        "class": cls,
        "turn": turn,
        "literal": literal,
        "probe": question,
        "expect": expect,
        "candidate": True,
    }


def _ledger_entry(item: Mapping[str, Any]) -> dict[str, Any]:
    """A candidate from a ledger item no flag named; its current (revised) wording is what
    must survive."""
    literal = str(item.get("revised") or item["literal"])
    speaker = str(item.get("speaker") or "user")
    return _candidate(str(item["class"]), str(item["id"]), int(item["turn"]), literal, speaker)


def _survival_entry(flag: Mapping[str, Any], ev: Mapping[str, Any], key: str) -> dict[str, Any]:
    """An entry from a survival flag: the ledger item the summary dropped or contradicted."""
    turn = int(ev.get("item_turn", flag["original_turn"]))
    entry = _candidate(
        str(ev.get("class", "constraint")),
        key,
        turn,
        str(ev.get("literal", "")),
        str(ev.get("speaker") or "user"),
    )
    evidence: dict[str, Any] = {"signal": flag["signal"], "flag_turns": [int(flag["turn"])]}
    default = "absent" if flag["signal"] == "dropped_item" else "contradicted"
    verdict = ev.get("verdict") or default
    seen: dict[str, Any] = {"compaction_turn": int(flag["turn"]), "verdict": str(verdict)}
    if ev.get("compactor"):
        seen["compactor"] = str(ev["compactor"])
    if ev.get("sentence"):
        evidence["summary_sentence"] = seen["sentence"] = str(ev["sentence"])
    return {**entry, "evidence": evidence, "seen": [seen]}


def with_summaries(draft: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The draft with the summaries its items were checked against: each compaction of the
    captured transcript (``capture.clean`` shape, already redacted and capped), in turn order.

    The store keeps no summary text, so a draft gains them when its session is captured; a
    compaction the capture lost, or one that carried no summary, is listed without one.
    """
    out = dict(draft)
    found: dict[int, dict[str, Any]] = {}
    for e in events:
        if e.get("kind") != "compaction":
            continue
        turn = int(e["turn"])
        compactor = (e.get("compaction") or {}).get("compactor") or (e.get("attrs") or {}).get(
            "compactor"
        )
        text = e.get("text")
        entry: dict[str, Any] = {"turn": turn, "summary": text if text else None}
        if compactor:
            entry["compactor"] = str(compactor)
        found.setdefault(turn, entry)
    checked = {
        int(v["compaction_turn"]) for e in draft.get("must_survive", ()) for v in e.get("seen", ())
    }
    for turn in checked - found.keys():
        found[turn] = {"turn": turn, "summary": None}
    if found:
        out["compactions"] = [found[t] for t in sorted(found)]
    return out


def file_name(draft: Mapping[str, Any]) -> str:
    """A safe file name for a draft: its conversation id with anything odd replaced, after the
    intake item id when there is one (two odd ids could otherwise clean up alike)."""
    stem = _UNSAFE.sub("_", str(draft["conversation_id"])).strip("._") or "conversation"
    item = (draft.get("intake") or {}).get("item_id")
    return f"{item}-{stem[:200]}.json" if item is not None else f"{stem[:200]}.json"
