"""Detector settings: a small frozen value the shells build once and pass to ``detect.step``."""

from __future__ import annotations

from typing import Final

import msgspec

#: Tools whose identical repeats are normal (polling, status checks). Users extend this in config.
DEFAULT_IGNORED_TOOLS: Final = frozenset({"TodoWrite", "TodoRead", "todo_write", "update_plan"})


class DetectConfig(msgspec.Struct, frozen=True):
    """Knobs of the pure core. Every cap bounds per-session state; see schemas/README.md."""

    #: A repeat counts when it comes at most this many turns after the latest compaction.
    window: int = 5
    #: Tool names never flagged as repeats.
    ignored_tools: frozenset[str] = DEFAULT_IGNORED_TOOLS
    #: Distinct call fingerprints remembered per session (oldest dropped first).
    max_calls: int = 256
    #: Instructions remembered per session for restatement matching (oldest dropped first).
    max_instructions: int = 64
    #: Event ids remembered per session to recognise redelivered copies.
    max_seen_ids: int = 32
    #: Argument bytes fingerprinted; longer canonical arguments are hashed on a prefix + length.
    max_argument_bytes: int = 65_536
    #: Characters of a user message examined for instructions.
    max_text_chars: int = 4_000
    #: Characters of arguments / sentences copied into evidence.
    evidence_chars: int = 300
    #: Minimum restatement score (100 P(same)) to flag; None: the model's own threshold,
    #: chosen on its validation split.
    restate_threshold: float | None = None
    #: Turns an event may arrive late by (events are held and processed in turn order; 0: off).
    reorder_turns: int = 0
    #: Mask secrets (API keys, tokens, passwords) in evidence excerpts.
    redact: bool = True
    #: Sessions idle longer than this (seconds, by the shell's clock) are dropped from state.
    idle_expiry_s: float = 7 * 24 * 3600.0
