"""Conversation shape and speaker roles, read from the lines (memlab.stages.shape)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memlab.stages.shape import (
    ROLE_ASSISTANT,
    ROLE_NAMED,
    ROLE_NONE,
    ROLE_USER,
    chunk_roles,
    file_shapes,
    speaker_role,
    user_assistant_files,
)
from tests.conftest import line_index


class FakeTable:
    def __init__(self, paths: list[str], segments: list[int] | None = None) -> None:
        self.paths = np.array(paths, dtype=object)
        self.segments = None if segments is None else np.array(segments)
        self.derived_cache: dict[Any, Any] = {}

    def __len__(self) -> int:
        return len(self.paths)

    def derived(self, key: Any, compute: Any) -> Any:
        if key not in self.derived_cache:
            self.derived_cache[key] = compute(self)
        return self.derived_cache[key]


class FakeCandidates:
    def __init__(self, texts: list[str], paths: list[str], segments: list[int] | None = None):
        self.table = FakeTable(paths, segments)
        self._texts = texts
        self.reads = 0

    def texts(self, positions: Any) -> list[str]:
        self.reads += 1
        return [self._texts[int(p)] for p in positions]


@pytest.mark.parametrize(
    "text,role",
    [
        ("[m57] User: can you check the budget", ROLE_USER),
        ("[m58] assistant: Sure: here it is", ROLE_ASSISTANT),
        ("ASSISTANT: plain label", ROLE_ASSISTANT),
        ("[D1:3] Caroline: I went to a support group", ROLE_NAMED),
        ("Melanie: hi", ROLE_NAMED),
        ("## Session 3 — 1:56 pm on 8 May, 2023", ROLE_NONE),
        ("a note without a label", ROLE_NONE),
        ("\n\n[m1] User: after blank lines", ROLE_USER),
        ("", ROLE_NONE),
        ("User:no space after the colon", ROLE_NONE),
    ],
)
def test_speaker_role(text: str, role: int) -> None:
    assert speaker_role(text) == role


# A user–assistant batch (a.md) and a session between named people (b.md).
TWO_CHATS = [
    "## Batch 1 — March-15-2024",
    "[m1] User: hi",
    "[m2] Assistant: hello",
    "## Session 1",
    "[D1:1] Caroline: hey",
    "[D1:2] Melanie: hi",
]


def test_user_assistant_files_from_the_lines_only() -> None:
    texts = [*TWO_CHATS, "[m3] User: only users here", "just prose"]
    paths = ["a.md", "a.md", "a.md", "b.md", "b.md", "b.md", "c.md", "d.md"]
    cs = FakeCandidates(texts, paths)
    roles = chunk_roles(cs)
    assert roles.tolist() == [0, 1, 2, 0, 3, 3, 1, 0]
    assert user_assistant_files(cs).tolist() == [True] * 3 + [False] * 3 + [True, False]
    user_assistant_files(cs)
    assert cs.reads == 1  # texts read once per table


def test_a_named_speaker_makes_the_file_named_and_segments_separate_files() -> None:
    texts = ["[m1] User: a", "[m2] Bob: b", "[m1] User: a", "[m2] Assistant: b"]
    # Same path, two segments (two indexes merged): only the first has a named speaker.
    cs = FakeCandidates(texts, ["x.md"] * 4, segments=[0, 0, 1, 1])
    assert user_assistant_files(cs).tolist() == [False, False, True, True]


def test_file_shapes_counts_each_file_once_by_what_the_stages_see() -> None:
    texts = [
        *TWO_CHATS,
        "- Hana: backend lead",  # a note: a list item is no speaker line
        "- Ivo: frontend",
        "just prose",
        "[m9] User: one request",  # e.md: user–assistant (role rule) but mostly prose,
        "more prose",  # so not a conversation (no file context)
        "and more",
    ]
    paths = ["a.md"] * 3 + ["b.md"] * 3 + ["c.md"] * 2 + ["d.md"] + ["e.md"] * 3
    got = file_shapes(FakeCandidates(texts, paths))
    # Conversations a, b; user–assistant a, e (the two tests do not nest).
    assert got == {"files": 5, "conversations": 2, "user_assistant": 2}
    assert file_shapes(FakeCandidates([], [])) == {
        "files": 0,
        "conversations": 0,
        "user_assistant": 0,
    }


# ----------------------------------------------------------- the neighbour rule by shape
CHAT = [
    "[m1] User: my gateway keeps crashing after the upgrade",
    "[m2] Assistant: check the systemd unit and the journal for the gateway service",
    "[m3] User: the budget tracker needs a monthly chart",
    "[m4] Assistant: use a bar chart grouped by month for the budget tracker",
]
NAMED = [
    "[D1:1] Ana: the gateway at the office crashed again",
    "[D1:2] Ben: did you restart it after the upgrade",
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ws = tmp_path_factory.mktemp("ws")
    return line_index(
        ws,
        {
            "memory/2024-03-15.md": "\n".join(CHAT) + "\n",
            "memory/2024-03-16.md": "\n".join(NAMED) + "\n",
        },
    )


def test_roles_rule_by_hand(index: Any) -> None:
    from memlab.pipeline.presets import TURN_CONTEXT_OFF, memlab_best
    from memlab.stages.context import neighbor_positions

    plain = memlab_best(neighbor_prev=0.0, neighbor_next=0.0, **TURN_CONTEXT_OFF)
    roles = memlab_best(
        neighbor_shape="roles",
        neighbor_user_next=0.8,
        neighbor_assistant_prev=0.2,
        neighbor_prev=0.5,
        neighbor_next=0.3,
        **TURN_CONTEXT_OFF,
    )
    cs = roles.retrieve(index, ["gateway crashing upgrade"], depth=50)
    f0 = plain.scores(cs)["final"][0]
    got = roles.scores(cs)["final"][0]
    prev, nxt = neighbor_positions(cs.table)
    at = {int(p): j for j, p in enumerate(cs.pos[0]) if p >= 0}
    texts = dict(zip(at, cs.texts(list(at)), strict=True))
    checked = set()
    for p, j in at.items():
        fp = f0[at[prev[p]]] if prev[p] in at else 0.0
        fn = f0[at[nxt[p]]] if nxt[p] in at else 0.0
        t = texts[p]
        if "User:" in t:
            want = f0[j] + max(0.8 * fn, 0.0)
        elif "Assistant:" in t:
            want = f0[j] + max(0.2 * fp, 0.0)
        else:  # a named speaker's file keeps the prev / next rule (0.5 / 0.3 here)
            want = f0[j] + max(0.5 * fp, 0.3 * fn, 0.0)
        assert got[j] == pytest.approx(want)
        checked.add(speaker_role(t))
    assert checked == {ROLE_USER, ROLE_ASSISTANT, ROLE_NAMED}


def test_roles_off_is_the_plain_rule_bit_for_bit(index: Any) -> None:
    from memlab.pipeline.presets import memlab_best

    assert memlab_best().neighbor_shape == "roles"  # the preset reads the shape
    best = memlab_best(neighbor_shape="off")
    assert "neighbor_shape" not in best.stage_params  # a default is never stored
    cs = best.retrieve(index, ["budget chart"], depth=50)
    # Role weights change nothing while the rule is off.
    other = best.replace(neighbor_user_next=0.1, neighbor_assistant_prev=0.9)
    a, b = best.scores(cs), other.scores(cs)
    assert np.array_equal(a["final"], b["final"], equal_nan=True)
    on = best.replace(neighbor_shape="roles")
    assert not np.array_equal(a["final"], on.scores(cs)["final"], equal_nan=True)


def test_roles_parameters_validated() -> None:
    from memlab.pipeline.presets import memlab_best

    with pytest.raises(ValueError, match="neighbor_shape"):
        memlab_best(neighbor_shape="pairs")
    with pytest.raises(ValueError, match="neighbor_user_next"):
        memlab_best(neighbor_user_next=1.5)
    p = memlab_best(neighbor_prev=0.0, neighbor_next=0.0, neighbor_shape="roles")
    assert "neighbor" in p.active_stages()
