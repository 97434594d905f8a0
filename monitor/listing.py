"""Plain-text lines of the command line's reports: replay's summary, flags, sessions, intake.

Pure functions of the report dicts the store and the replay build (``--json`` prints those
dicts as they are), so what a person reads and what a script parses never disagree.
"""

from __future__ import annotations

from typing import Any


def cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def where(source: dict[str, Any] | None) -> str:
    """``file:line`` or ``topic[partition]@offset`` of a flag's source."""
    if not source:
        return "source not recorded"
    if "file" in source:
        return f"{source['file']}:{source.get('line')}"
    return f"{source.get('topic')}[{source.get('partition')}]@{source.get('offset')}"


def flag_lines(row: dict[str, Any], chars: int) -> list[str]:
    """Two lines per flag: what and when, then the evidence and where it was read."""
    ev = row.get("evidence") or {}
    compaction = row.get("compaction_turn")
    head = (
        f"{row['session_id']}  turn {row['turn']}  {row['signal']}  original {row['original_turn']}"
        f"  compaction {compaction if compaction is not None else '-'}"
        f"  {ev.get('compactor') or ''}".rstrip()
    )
    if "tool" in ev:
        what = f"{ev['tool']} {ev.get('arguments', '')}"
    elif "later" in ev:
        later, earlier = ev.get("later", ""), ev.get("earlier", "")
        what = f"{later!r} restates turn {row['original_turn']}: {earlier!r}"
    elif "verdict" in ev:
        what = f"{ev.get('class')} {ev.get('literal', '')!r} {ev['verdict']} in the summary"
        if ev.get("reason"):
            what += f" ({str(ev['reason']).replace('_', ' ')})"
        if ev.get("sentence"):
            what += f": {ev['sentence']!r}"
    else:
        what = ", ".join(f"{k}={v}" for k, v in ev.items() if k != "compactor")
    return [head, f"    {cut(what, chars)}", f"    at {where(row.get('source'))}"]


def session_line(row: dict[str, Any]) -> str:
    lost = row.get("dropped_flags", 0) + row.get("inverted_flags", 0)
    survival = (
        f", dropped {row.get('dropped_flags', 0)}, inverted {row.get('inverted_flags', 0)}"
        if lost
        else ""
    )
    return (
        f"{row['session_id']}  flags {row['flags']} (repeat {row['repeat_flags']}, restate "
        f"{row['restate_flags']}{survival})  compactions {row['compactions']}  turns {row['turns']}"
        f"  {row.get('agent') or '-'}  {row.get('compactor') or '-'}"
        f"{'  INCIDENT' if row['incident'] else ''}"
    )


def intake_header() -> str:
    return "rank  id     week      status     session  score  reviewer"


def intake_line(item: dict[str, Any]) -> str:
    who = item["resolved_by"] or item["claimed_by"] or ""
    return (
        f"{item['rank'] or '-':>4}  #{item['id']:<5} {item['week']}  {item['status']:<9}  "
        f"{item['session_id']}  {item['score']:.2f}  {who}"
    ).rstrip()


def summary_lines(summary: dict[str, Any], inserted: int | None) -> list[str]:
    """``monitor replay``'s text summary (problems are reported separately, on stderr)."""
    flags = summary["flags_by_signal"]
    counts = "  ".join(f"{signal} {n}" for signal, n in flags.items())
    out = [
        f"sessions {summary['sessions']}  events {summary['events']}  "
        f"compactions {summary['compactions']}  flagged sessions {summary['flagged_sessions']}",
        f"flags: {counts}" + (f"  (new in store: {inserted})" if inserted is not None else ""),
    ]
    if summary["top_sessions"]:
        out.append("top flagged sessions:")
        for s in summary["top_sessions"]:
            out.append(
                f"  {s['session_id']}  flags {s['flags']} (repeat {s['repeated_tool_call']}, "
                f"restate {s['restated_instruction']})  compactions {s['compactions']}  "
                f"turns {s['turns']}"
            )
    return out
