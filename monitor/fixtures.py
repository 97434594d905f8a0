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

FORMAT: Final = "fixture-draft.v1"

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def build_draft(
    conversation_id: str,
    turns: int,
    compactions: int,
    flags: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    """A draft from a session's flags (``Flag.report()`` / stored-flag shape).

    One entry per distinct instruction or call (the flag ``key``), at its earliest turn, so a
    session that restated the same thing five times yields one constraint.
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
    for same in found.values():
        first = min(same, key=lambda e: (e["turn"], e["evidence"]["flag_turns"][0]))
        first["evidence"]["flag_turns"] = sorted({e["evidence"]["flag_turns"][0] for e in same})
        entries.append(first)
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
            "id": f"constraint-{key}",
            "class": "constraint",
            "turn": turn,
            "literal": literal,
            "probe": "What instructions from the user still apply to this work?",
            "expect": f"keeps the instruction given at turn {turn}: {literal}",
            "candidate": True,
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
        turn = int(ev.get("first_turn", flag["original_turn"]))
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


#: Per ledger class: the question a fixture asks after the compaction, and what a good answer
#: keeps (``{turn}`` and ``{literal}`` filled from the item).
_PROBES: Final[dict[str, tuple[str, str]]] = {
    "constraint": (
        "What instructions from the user still apply to this work?",
        "keeps the instruction given at turn {turn}: {literal}",
    ),
    "commitment": (
        "What have you undertaken to do that is not done yet?",
        "still owes what it undertook at turn {turn}: {literal}",
    ),
    "open_question": (
        "Which questions in this work are still unanswered?",
        "still treats as open the question asked at turn {turn}: {literal}",
    ),
    "reference": (
        "Which names, versions and values has this work settled on?",
        "uses what turn {turn} settled: {literal}",
    ),
}


def _survival_entry(flag: Mapping[str, Any], ev: Mapping[str, Any], key: str) -> dict[str, Any]:
    """An entry from a survival flag: the ledger item the summary dropped or contradicted."""
    cls = str(ev.get("class", "constraint"))
    probe, expect = _PROBES.get(cls, _PROBES["constraint"])
    turn = int(ev.get("item_turn", flag["original_turn"]))
    literal = str(ev.get("literal", ""))
    evidence: dict[str, Any] = {"signal": flag["signal"], "flag_turns": [int(flag["turn"])]}
    if ev.get("sentence"):
        evidence["summary_sentence"] = str(ev["sentence"])
    return {
        "id": f"{cls}-{key}",
        "class": cls,
        "turn": turn,
        "literal": literal,
        "probe": probe,
        "expect": expect.format(turn=turn, literal=literal),
        "candidate": True,
        "evidence": evidence,
    }


def file_name(draft: Mapping[str, Any]) -> str:
    """A safe file name for a draft: its conversation id with anything odd replaced, after the
    intake item id when there is one (two odd ids could otherwise clean up alike)."""
    stem = _UNSAFE.sub("_", str(draft["conversation_id"])).strip("._") or "conversation"
    item = (draft.get("intake") or {}).get("item_id")
    return f"{item}-{stem[:200]}.json" if item is not None else f"{stem[:200]}.json"
