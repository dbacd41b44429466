"""``memlab harvest``: an OpenClaw agent's own queries, from its session transcripts, as a
folder-format dataset (docs/folder-format.md).

- ``codec``: transcripts read as entries (JSONL files; the release's agent database);
- ``link``: each ``memory_search`` call, its hits and its follow-ups (``memory_get``,
  ``Source:`` citations);
- ``anchor``: spans placed in the workspace as it is now, by their text;
- ``report``: the query log's health;
- ``writer``: where harvest may write, and the files it writes;
- ``build``: ``harvest`` itself.
"""

from __future__ import annotations

from memlab.datasets.harvest.build import HarvestResult, harvest
from memlab.datasets.harvest.writer import HarvestError

__all__ = ["HarvestError", "HarvestResult", "harvest"]
