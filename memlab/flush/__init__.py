"""Memory flush before compaction, simulated (openclaw-memory.md §9).

``config`` (the flush settings and OpenClaw's trigger rule, read from an openclaw.json),
``transcript`` (any conversation data set's workspace read back as sessions and turns),
``policies`` (what a flush writes: plain functions), ``lifecycle`` (the replay:
flushes, compactions, session resets) and ``workspaces`` (the notes, the transcripts — the
sessions corpus — and both, written as data sets whose relevance carries over to the notes
by provenance). ``flush_study`` runs the whole chain on a loaded data set. A lab package:
the engine never imports it.
"""

from __future__ import annotations

from memlab.flush.config import FlushConfig, flush_threshold, load_flush_config, should_flush
from memlab.flush.lifecycle import FlushRun, simulate
from memlab.flush.policies import POLICIES, FlushWindow, Note
from memlab.flush.study import flush_study
from memlab.flush.transcript import read_conversations
from memlab.flush.workspaces import FlushWorkspaces, write_flush_workspaces

__all__ = [
    "POLICIES",
    "FlushConfig",
    "FlushRun",
    "FlushWindow",
    "FlushWorkspaces",
    "Note",
    "flush_study",
    "flush_threshold",
    "load_flush_config",
    "read_conversations",
    "should_flush",
    "simulate",
    "write_flush_workspaces",
]
