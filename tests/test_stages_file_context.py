"""File context (memlab.stages.file_context) and the neighbour window (prev2 / next2, sum)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.pipeline.presets import TURN_CONTEXT_OFF, memlab_best, memlab_best_chunk
from memlab.stages.file_context import file_best
from tests.conftest import line_index

# Two named-speaker files (a chat of 6 turns, one of 3) and a user–assistant file.
CHAT = [
    "## Session 1 — gateway crashed after the upgrade, watcher",
    "[D1:1] Ana: the gateway at the office crashed again",
    "[D1:2] Ben: did you restart it after the upgrade",
    "[D1:3] Ana: yes and the watcher kept flapping",
    "[D1:4] Ben: then roll the gateway back to the old build",
    "[D1:5] Ana: done, the office gateway is stable now",
    "[D1:6] Ben: great, note it in the log",
]
OTHER = [
    "[D2:1] Ana: the coffee roast number 12 was bitter",
    "[D2:2] Ben: try the gateway cafe next time",
    "[D2:3] Ana: the upgrade of the espresso machine is due",
]
UA = [
    "[m0] User: my gateway crashes after the upgrade",
    "[m1] Assistant: restart the gateway service and check the watcher",
    "[m2] User: the watcher flaps",
    "[m3] Assistant: pin the watcher version",
]
QUERY = ["gateway crashed after upgrade watcher"]


def test_file_best_by_hand() -> None:
    # Two rows over five chunks in files 0, 0, 1, 1, 2; row 1 lacks chunk 1 and pads.
    pos = np.array([[0, 1, 2, 3, 4], [0, 2, 3, 4, -1]])
    scores = np.array([[0.5, -1.0, 2.0, 0.25, -3.0], [-0.5, 1.5, 3.0, 7.0, np.nan]])
    valid = pos >= 0
    files = np.array([0, 0, 1, 1, 2])
    got = file_best(np.maximum(pos, 0), scores, valid, files)
    want = np.array([[0.5, 0.5, 2.0, 2.0, -3.0], [-0.5, 3.0, 3.0, 7.0, np.nan]])
    np.testing.assert_array_equal(got, want)
    # An invalid candidate neither receives nor lends a score.
    valid2 = valid.copy()
    valid2[0, 2] = False
    got2 = file_best(np.maximum(pos, 0), scores, valid2, files)
    assert np.isnan(got2[0, 2]) and got2[0, 3] == 0.25


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda q: st.integers(1, 7).flatmap(
            lambda c: st.tuples(
                st.just((q, c)),
                st.lists(st.floats(-5, 5), min_size=q * c, max_size=q * c),
                st.lists(st.booleans(), min_size=q * c, max_size=q * c),
                st.lists(st.integers(0, 2), min_size=c, max_size=c),
            )
        )
    )
)
def test_file_best_is_the_per_row_per_file_maximum(args: Any) -> None:
    (q, c), vals, ok, file_of = args
    scores = np.array(vals).reshape(q, c)
    valid = np.array(ok).reshape(q, c)
    pos = np.broadcast_to(np.arange(c), (q, c))
    files = np.array(file_of)
    got = file_best(pos, scores, valid, files)
    for i in range(q):
        for j in range(c):
            if not valid[i, j]:
                assert np.isnan(got[i, j])
                continue
            same = valid[i] & (files == files[j])
            assert got[i, j] == scores[i][same].max() >= scores[i, j]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ws = tmp_path_factory.mktemp("ws")
    return line_index(
        ws,
        {
            "memory/2024-03-15.md": "\n".join(CHAT) + "\n",
            "memory/2024-03-16.md": "\n".join(OTHER) + "\n",
            "memory/2024-03-17.md": "\n".join(UA) + "\n",
        },
    )


def by_position(cs: Any, row: np.ndarray) -> dict[int, float]:
    return {int(p): float(row[j]) for j, p in enumerate(cs.pos[0]) if p >= 0}


def test_file_context_stage_by_hand(index: Any) -> None:
    from memlab.pipeline.presets import memlab_best

    base = memlab_best(file_context=0.0, drop_headings=False, identifier_tier=False)
    on = base.replace(file_context=0.7)
    cs = on.retrieve(index, QUERY, depth=50)
    st0, st1 = base.scores(cs), on.scores(cs)
    f = by_position(cs, st0["final"][0] - np.nan_to_num(st0["neighbor"][0]))  # pre-neighbour F
    final0, final1 = by_position(cs, st0["final"][0]), by_position(cs, st1["final"][0])
    paths = cs.table.paths
    assert len({paths[p] for p in f}) == 3
    best_of = {}
    for p in f:
        best = max(v for q, v in f.items() if paths[q] == paths[p])
        best_of[paths[p]] = max((v, q) for q, v in f.items() if paths[q] == paths[p])[1]
        assert final1[p] == pytest.approx(final0[p] + 0.7 * best, abs=1e-12)
    # The session heading is its file's best chunk here: it lends its score, and the
    # heading filter after the stage still keeps it out of the results.
    heading = next(p for p, t in zip(f, cs.texts(list(f)), strict=True) if t.startswith("##"))
    assert best_of[paths[heading]] == heading
    dropped = by_position(cs, on.replace(drop_headings=True).scores(cs)["final"][0])
    assert np.isnan(dropped[heading])
    assert all(dropped[p] == final1[p] for p in f if p != heading)
    assert "file_context" not in base.active_stages()
    assert on.replace(drop_headings=True).active_stages()[-3:] == (
        "file_context",
        "headings",
        "selection",
    )


def test_neighbor_window_by_hand(index: Any) -> None:
    from memlab.pipeline.presets import memlab_best
    from memlab.stages.context import neighbor_positions, second_neighbors

    off = {**TURN_CONTEXT_OFF, "drop_headings": False}
    plain = memlab_best(neighbor_prev=0.0, neighbor_next=0.0, neighbor_shape="off", **off)
    kw = {**off, "neighbor_prev": 0.5, "neighbor_next": 0.3}
    kw |= {"neighbor_prev2": 0.4, "neighbor_next2": 0.2}
    wide_max = memlab_best(**kw)
    wide_sum = memlab_best(**{**kw, "neighbor_agg": "sum"})
    cs = wide_sum.retrieve(index, QUERY, depth=50)
    f0 = by_position(cs, plain.scores(cs)["final"][0])
    got_max = by_position(cs, wide_max.scores(cs)["final"][0])
    got_sum = by_position(cs, wide_sum.scores(cs)["final"][0])
    prev, nxt = neighbor_positions(cs.table)
    prev2, nxt2 = second_neighbors(prev), second_neighbors(nxt)
    texts = dict(zip(f0, cs.texts(list(f0)), strict=True))
    window = 0
    for p, f in f0.items():
        if "User:" in texts[p]:
            terms = [1.0 * f0.get(int(nxt[p]), 0.0)]  # roles: the reply only, no window
        elif "Assistant:" in texts[p]:
            terms = [0.0]
        else:
            nb = [(0.5, prev[p]), (0.3, nxt[p]), (0.4, prev2[p]), (0.2, nxt2[p])]
            terms = [w * f0.get(int(q), 0.0) if q >= 0 else 0.0 for w, q in nb]
            window += prev2[p] >= 0 or nxt2[p] >= 0
        assert got_max[p] == pytest.approx(f + max(*terms, 0.0), abs=1e-12)
        assert got_sum[p] == pytest.approx(f + sum(max(t, 0.0) for t in terms), abs=1e-12)
    assert window >= 5  # the named files have units two steps from another
    assert second_neighbors(np.array([1, 2, -1, 0])).tolist() == [2, -1, -1, 1]


def test_window_defaults_are_the_one_step_rule_bit_for_bit(index: Any) -> None:
    from memlab.pipeline.presets import memlab_best
    from memlab.stages.context import neighbor_positions, neighbor_scores

    one = memlab_best(
        neighbor_prev2=0.0,
        neighbor_next2=0.0,
        neighbor_agg="max",
        file_context=0,
        neighbor_prev=0.5,
        neighbor_next=0.3,
    )
    for k in ("neighbor_prev2", "neighbor_next2", "neighbor_agg", "file_context"):
        assert k not in one.stage_params  # a default is never stored
    named = one.replace(neighbor_shape="off")
    cs = named.retrieve(index, QUERY, depth=50)
    f = named.replace(neighbor_prev=0.0, neighbor_next=0.0, drop_headings=False).scores(cs)
    valid, final = f["valid"], f["final"]
    prev, nxt = neighbor_positions(cs.table)
    n = len(cs.table)
    fp = neighbor_scores(cs.pos, final, valid, prev, n)
    fn = neighbor_scores(cs.pos, final, valid, nxt, n)
    want = np.where(valid, final + np.maximum(np.maximum(0.5 * fp, 0.3 * fn), 0.0), np.nan)
    got = named.replace(drop_headings=False).scores(cs)["final"]
    np.testing.assert_array_equal(got, want)  # the formula of the one-step rule, bit for bit
    # Under roles a user–assistant line has one weight, so sum equals max there; and a
    # window weight changes no user–assistant line.
    roles_only = memlab_best(neighbor_prev=0.0, neighbor_next=0.0, **TURN_CONTEXT_OFF)
    a = roles_only.scores(cs)["final"]
    np.testing.assert_array_equal(a, roles_only.replace(neighbor_agg="sum").scores(cs)["final"])
    wide = roles_only.replace(neighbor_prev2=0.5, neighbor_next2=0.5).scores(cs)["final"]
    ua = np.array([str(cs.table.paths[p]).endswith("03-17.md") for p in cs.pos[0]])
    ok = cs.pos[0] >= 0
    np.testing.assert_array_equal(a[0][ua & ok], wide[0][ua & ok])
    assert not np.array_equal(a[0][~ua & ok], wide[0][~ua & ok])


def test_parameters_validated() -> None:
    from memlab.pipeline.presets import memlab_best

    with pytest.raises(ValueError, match="neighbor_agg"):
        memlab_best(neighbor_agg="mean")
    with pytest.raises(ValueError, match="neighbor_prev2"):
        memlab_best(neighbor_prev2=1.5)
    with pytest.raises(ValueError, match="file_context"):
        memlab_best(file_context=-0.1)
    with pytest.raises(ValueError, match="file_context"):
        memlab_best(file_context=True)
    p = memlab_best(neighbor_prev=0.0, neighbor_next=0.0, neighbor_shape="off", neighbor_next2=0.2)
    assert "neighbor" in p.active_stages()


def test_explain_adds_up_with_file_context_and_window(index: Any) -> None:
    from memlab.pipeline.explain import explain, ranking_frame
    from memlab.pipeline.presets import memlab_best
    from tests.test_stages import assert_explain_adds_up

    p = memlab_best(file_context=0.5, neighbor_prev2=0.3, neighbor_agg="sum")
    cs = p.retrieve(index, QUERY, qids=["q0"], depth=50)
    r = p.rank(cs)
    ex = explain(p, cs, r)
    assert "+ neighbor + file_context + id_tier" in ex.attrs["formula"]
    assert (ex["file_context"].dropna() != 0).any()
    assert_explain_adds_up(p, ex, ranking_frame(cs, r))


def test_fast_sweep_refuses_file_context(index: Any) -> None:
    from memlab.eval.fastsweep import fast_path_reason
    from memlab.pipeline.presets import memlab_best

    plain = memlab_best(
        neighbor_prev=0.0,
        neighbor_next=0.0,
        neighbor_shape="off",
        drop_headings=False,
        identifier_tier=False,
        **TURN_CONTEXT_OFF,
    )
    cs = plain.retrieve(index, QUERY, depth=50)
    assert fast_path_reason(cs, [plain]) is None
    reason = fast_path_reason(cs, [plain.replace(file_context=0.5)])
    assert reason is not None and "file_context" in reason


def test_the_presets_values() -> None:
    best = memlab_best()
    got = {k: getattr(best, k) for k in ("neighbor_prev", "neighbor_next", *TURN_CONTEXT_OFF)}
    want = {"neighbor_prev": 0.3, "neighbor_next": 0.3, "neighbor_prev2": 0.3}
    want |= {"neighbor_next2": 0.1, "neighbor_agg": "sum", "file_context": 1.0}
    assert got == want
    assert best.active_stages()[-5:] == (
        "neighbor",
        "file_context",
        "headings",
        "identifier_tier",
        "selection",
    )
    chunk = memlab_best_chunk()  # keeps the one-step rule and no file context
    assert all(getattr(chunk, k) == v for k, v in TURN_CONTEXT_OFF.items())
    assert "file_context" not in chunk.active_stages()
    assert "file_context" not in repr(chunk) and "file_context=1.0" in repr(best)


def test_file_ids_keep_segments_apart_and_ignore_nan() -> None:
    """Two indexes merged in one table (a lab's groups) share a path but not a file; a
    NaN score never erases its file's maximum."""
    from memlab.stages.file_context import file_best, file_ids
    from memlab.store.table import ChunkTable

    paths = np.array(
        ["memory/2024-01-01.md"] * 2 + ["memory/2024-01-02.md"] + ["memory/2024-01-01.md"]
    )
    n = len(paths)
    z = np.zeros(n)
    table = ChunkTable(
        rowids=np.arange(n), ids=np.array([str(i) for i in range(n)]), paths=paths,
        sources=np.array(["memory"] * n), start_lines=z.astype(int), end_lines=z.astype(int),
        mtimes=z, vectors=None, segments=np.array([0, 0, 0, 1]),
    )  # fmt: skip
    f = file_ids(table)
    assert f[0] == f[1] and len({f[0], f[2], f[3]}) == 3
    pos = np.arange(n)[None, :]
    best = file_best(pos, np.array([[np.nan, 0.4, 0.9, 0.7]]), np.ones((1, n), bool), f)
    np.testing.assert_array_equal(best, [[0.4, 0.4, 0.9, 0.7]])
    all_nan = file_best(pos, np.array([[np.nan, np.nan, 0.9, 0.7]]), np.ones((1, n), bool), f)
    assert np.isnan(all_nan[0, :2]).all() and all_nan[0, 2] == 0.9


def test_file_context_only_in_conversations(tmp_path: Any) -> None:
    """A curated MEMORY.md (its "- Hana: ..." list items are notes, not speaker lines) and a
    log of notes get no file context; a transcript (speaker labels on at least half of its
    lines) gets it. Without the rule every
    chunk of MEMORY.md would share its best chunk's score."""
    from memlab.pipeline.presets import memlab_best
    from memlab.stages.shape import conversation_files

    idx = line_index(
        tmp_path,
        {
            "MEMORY.md": "# Facts\n- Hana: owns the deploy key vault\n"
            "- Ben: rotates the deploy key\n- Lunch is at noon.\n",
            # One labelled line of three: a note that reads "Decision: ..." is not a chat.
            "memory/2024-03-15.md": "- rotated the deploy key\nDecision: keep the vault\n"
            "- lunch with Sam\n",
            "memory/2024-03-16.md": "## Session 1\n[D1:1] Ana: did you rotate the deploy key?\n"
            "[D1:2] Ben: yes, in the vault\n",
        },
    )
    on = memlab_best(drop_headings=False)
    cs = on.retrieve(idx, "deploy key vault", depth=50)
    conv = conversation_files(cs)
    paths = cs.table.paths
    assert {str(paths[i]) for i in np.flatnonzero(conv)} == {"memory/2024-03-16.md"}
    term = on.scores(cs)["file_context"][0]
    for j, p in enumerate(cs.pos[0]):
        if p < 0 or np.isnan(term[j]):
            continue
        assert (term[j] != 0.0) == (str(paths[p]) == "memory/2024-03-16.md"), paths[p]
