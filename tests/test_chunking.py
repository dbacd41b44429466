"""Chunkers of spec §2: exact values, OpenClaw's overlap defect, and Hypothesis properties."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.chunking import (
    Chunk,
    ChunkerConfig,
    chunk_headings,
    chunk_lines,
    chunk_markdown,
    estimate_chars,
)

PROPS = settings(max_examples=200, deadline=None)
FEW = settings(max_examples=100, deadline=None)

CJK_RANGES = [
    (0x2E80, 0x9FFF),
    (0xA000, 0xA4FF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2FA1F),
]


def reference_weight(text: str) -> int:
    """Per-character weight written independently of the module's regex counting."""
    total = 0
    for ch in text:
        if any(lo <= ord(ch) <= hi for lo, hi in CJK_RANGES):
            total += 4
        else:
            total += len(ch.encode("utf-16-le")) // 2
    return total


def cost(lines: list[str]) -> int:
    return sum(estimate_chars(line) + 1 for line in lines)


def sizes(tokens: int, overlap: int) -> tuple[int, int]:
    return max(32, 4 * tokens), 4 * max(0, min(overlap, tokens - 1))


def has_lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


# ---------------------------------------------------------------- strategies

WORDS = st.text(alphabet="abcdefg hijk", max_size=30)
CJK_TEXT = st.text(
    alphabet="你好世界こんにちは한국어\U00020000\U0002a6d6 a", min_size=1, max_size=80
)
EMOJI_TEXT = st.text(alphabet="😀🎉ab 世", min_size=1, max_size=60)
LONG_LINE = st.builds(
    lambda unit, n: unit * n,
    st.sampled_from(["x", "你", "😀", "\U00020000", "a😀", "b\U00020000", "ab "]),
    st.integers(20, 400),
)
HEADING = st.builds(
    lambda level, title: "#" * level + " " + title,
    st.integers(1, 6),
    st.text(alphabet="abcXYZ ", min_size=1, max_size=12),
)
MARKUP = st.sampled_from(
    ["", " ", "\t", "```", "```py", "~~~", "---", "* * *", "- item", "1. one", "  more", "> q"]
)
LINE = st.one_of(WORDS, CJK_TEXT, EMOJI_TEXT, LONG_LINE, HEADING, MARKUP)
TEXT = st.lists(LINE, max_size=30).map("\n".join)
TOKENS = st.integers(1, 60)
OVERLAP = st.integers(0, 70)


@st.composite
def plain_doc(draw: st.DrawFn) -> tuple[str, int, int]:
    """Non-blank lines that are never cut into pieces (weight + 1 <= maxChars), no markup."""
    tokens = draw(st.integers(8, 60))
    overlap = draw(st.integers(0, 70))
    body = st.text(alphabet="ab c你😀\U00020000", max_size=tokens - 2)
    lines = draw(st.lists(body.map(lambda s: "w" + s), min_size=1, max_size=30))
    return "\n".join(lines), tokens, overlap


# ---------------------------------------------------------------- shared checks


def check_common(chunks: list[Chunk], text: str) -> list[str]:
    """Line ranges valid and ordered, every contentful line covered, hash and text sane."""
    lines = text.split("\n")
    for chunk in chunks:
        assert 1 <= chunk.start_line <= chunk.end_line <= len(lines)
        assert chunk.hash == hashlib.sha256(chunk.text.encode("utf-8")).hexdigest()
        assert chunk.text.strip()
        assert not has_lone_surrogate(chunk.text)
    starts = [c.start_line for c in chunks]
    ends = [c.end_line for c in chunks]
    assert starts == sorted(starts)
    assert ends == sorted(ends)
    for number, line in enumerate(lines, start=1):
        if line.strip():
            assert any(c.start_line <= number <= c.end_line for c in chunks), number
    return lines


def single_piece(lines: list[str], max_chars: int) -> bool:
    return all(len(ln.encode("utf-16-le")) // 2 <= max_chars for ln in lines) and all(
        estimate_chars(ln) <= max_chars for ln in lines
    )


# ---------------------------------------------------------------- estimate_chars


@pytest.mark.parametrize(
    ("text", "weight"),
    [
        ("你好", 8),
        ("こんにちは", 20),
        ("hello 世界", 14),
        ("😀", 2),
        ("", 0),
        ("abc", 3),
        ("\U00020000", 4),
        ("\u2e7f\u2e80", 1 + 4),
        ("\u9fff\ua000\ua4ff\ua500", 4 + 4 + 4 + 1),
        ("\uabff\uac00\ud7af\ud7b0", 1 + 4 + 4 + 1),
        ("\uf8ff\uf900\ufaff\ufb00", 1 + 4 + 4 + 1),
        ("\U0001ffff\U0002fa1f\U0002fa20", 2 + 4 + 2),
    ],
)
def test_estimate_chars_spec_examples_and_range_edges(text: str, weight: int) -> None:
    assert estimate_chars(text) == weight


@PROPS
@given(st.text())
def test_estimate_chars_matches_per_character_reference(text: str) -> None:
    assert estimate_chars(text) == reference_weight(text)


# ---------------------------------------------------------------- OpenClaw chunker, exact values


@pytest.mark.parametrize("bounded", [True, False])
def test_trailing_newline_is_one_chunk_of_three_lines(bounded: bool) -> None:
    (chunk,) = chunk_markdown("a\nb\n", bounded=bounded)
    assert (chunk.text, chunk.start_line, chunk.end_line) == ("a\nb\n", 1, 3)
    assert chunk.hash == hashlib.sha256(b"a\nb\n").hexdigest()
    assert chunk.heading == ""


ALL_CHUNKERS: list[Callable[[str], list[Chunk]]] = [
    lambda t: chunk_markdown(t),
    lambda t: chunk_markdown(t, bounded=False),
    lambda t: chunk_headings(t),
    chunk_lines,
]


@pytest.mark.parametrize("chunker", ALL_CHUNKERS)
@pytest.mark.parametrize("text", ["", "\n", "   \n\t\n  ", "\n\n\n"])
def test_empty_and_whitespace_only_give_no_chunks(
    chunker: Callable[[str], list[Chunk]], text: str
) -> None:
    assert chunker(text) == []


def test_exact_mode_reproduces_overlap_defect_1500_200_200() -> None:
    # 1500 costs 1501; +201 > 1600 → emit [1500]; carry 1500 (1501 >= 320) → 1500+\n+200
    # = 1701; next +201 → emit, carry 200 then 1500 (201 < 320, 1702 >= 320) → 1902.
    text = "\n".join(["a" * 1500, "b" * 200, "c" * 200])
    chunks = chunk_markdown(text, 400, 80, bounded=False)
    assert [len(c.text) for c in chunks] == [1500, 1701, 1902]
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1), (1, 2), (1, 3)]
    assert chunks[2].text == text


def test_exact_mode_reproduces_overlap_defect_3000_char_line() -> None:
    chunks = chunk_markdown("z" * 3000, 400, 80, bounded=False)
    assert [len(c.text) for c in chunks] == [1600, 3001]
    assert chunks[1].text == "z" * 1600 + "\n" + "z" * 1400
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1), (1, 1)]


def test_bounded_mode_drops_overlap_that_cannot_fit() -> None:
    text = "\n".join(["a" * 1500, "b" * 200, "c" * 200])
    chunks = chunk_markdown(text, 400, 80)
    # the 1500-char line (cost 1501) exceeds the 320 overlap budget, so nothing is carried
    assert [len(c.text) for c in chunks] == [1500, 401]
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1), (2, 3)]
    assert [len(c.text) for c in chunk_markdown("z" * 3000)] == [1600, 1400]


def test_overlap_carry_exact_versus_bounded_by_hand() -> None:
    # tokens 100 → maxChars 400; overlap 30 → 120. Lines of 99 chars cost 100: four per chunk.
    text = "\n".join(chr(ord("a") + i) * 99 for i in range(10))
    exact = chunk_markdown(text, 100, 30, bounded=False)
    bounded = chunk_markdown(text, 100, 30)
    # exact carries lines until the cost reaches 120: two lines (200)
    assert [(c.start_line, c.end_line) for c in exact] == [(1, 4), (3, 6), (5, 8), (7, 10)]
    # bounded carries only what stays within 120: one line (100)
    assert [(c.start_line, c.end_line) for c in bounded] == [(1, 4), (4, 7), (7, 10)]
    assert bounded[1].text == "\n".join(chr(ord("a") + i) * 99 for i in range(3, 7))
    # lines of cost 60: the carried cost reaches exactly 120 after two lines, and exactly
    # 120 is still within the bounded budget, so both modes carry two lines
    text = "\n".join(chr(ord("a") + i) * 59 for i in range(12))
    for mode in (True, False):
        chunks = chunk_markdown(text, 100, 30, bounded=mode)
        assert [(c.start_line, c.end_line) for c in chunks] == [(1, 6), (5, 10), (9, 12)]


def test_overlap_is_clamped_to_tokens_minus_one() -> None:
    text = "\n".join(f"line {i} " * 5 for i in range(60))
    assert chunk_markdown(text, 10, 1000) == chunk_markdown(text, 10, 9)
    assert chunk_markdown(text, 10, -4, bounded=False) == chunk_markdown(text, 10, 0, bounded=False)
    assert chunk_markdown(text, 10, 9, bounded=False) != chunk_markdown(text, 10, 0, bounded=False)


@pytest.mark.parametrize("bounded", [True, False])
def test_astral_cjk_line_is_recut_without_splitting_pairs(bounded: bool) -> None:
    # tokens 31 → maxChars 124 units: 62 astral chars per slice, weight 248 > 124 → re-cut
    # at 31 units, which falls inside a pair → 32 units (16 chars). Pieces per slice
    # 16/16/16/14, tail slice 26 chars (weight 104, kept). Costs 65/65/65/57: the 14-char
    # piece (57) joins the 16 before it (122 <= 124).
    line = "\U00020000" * 150
    chunks = chunk_markdown(line, 31, 0, bounded=bounded)
    assert [len(c.text.replace("\n", "")) for c in chunks] == [16, 16, 30, 16, 16, 30, 26]
    assert [c.text.count("\n") for c in chunks] == [0, 0, 1, 0, 0, 1, 0]
    assert "".join(c.text.replace("\n", "") for c in chunks) == line
    assert all(not has_lone_surrogate(c.text) for c in chunks)
    assert all(estimate_chars(c.text) <= 124 for c in chunks)


def test_maxchars_slice_never_splits_an_emoji() -> None:
    # tokens 8 → maxChars 32 units. "a" + 15 emoji = 31 units; the 16th emoji would straddle
    # unit 32, so the slice ends before it; then 16-emoji slices (32 units), tail of 5.
    line = "a" + "😀" * 100
    chunks = chunk_markdown(line, 8, 0)
    assert [len(c.text) for c in chunks] == [16, 16, 16, 16, 16, 16, 5]
    assert chunks[0].text == "a" + "😀" * 15
    assert "".join(c.text for c in chunks) == line


def test_tokens_must_be_positive() -> None:
    with pytest.raises(ValueError, match="tokens must be >= 1, got 0"):
        chunk_markdown("x", 0)
    with pytest.raises(ValueError, match="tokens must be >= 1"):
        chunk_headings("x", -3)
    with pytest.raises(ValueError, match="window must be an integer >= 1"):
        chunk_headings("x", window=0)


# ---------------------------------------------------------------- OpenClaw chunker, properties


@PROPS
@given(TEXT, TOKENS, OVERLAP, st.booleans())
def test_openclaw_chunks_cover_order_and_match_source(
    text: str, tokens: int, overlap: int, bounded: bool
) -> None:
    chunks = chunk_markdown(text, tokens, overlap, bounded=bounded)
    lines = check_common(chunks, text)
    max_chars, _ = sizes(tokens, overlap)
    for chunk in chunks:
        span = lines[chunk.start_line - 1 : chunk.end_line]
        # pieces are contiguous in the source; OpenClaw joins them with "\n"
        assert chunk.text.replace("\n", "") in "".join(span)
        if single_piece(span, max_chars):
            assert chunk.text == "\n".join(span)
        if bounded:
            assert estimate_chars(chunk.text) <= max_chars
    assert chunk_markdown(text, tokens, overlap, bounded=bounded) == chunks


@PROPS
@given(plain_doc())
def test_bounded_overlap_is_the_largest_suffix_within_budget(doc: tuple[str, int, int]) -> None:
    text, tokens, overlap = doc
    max_chars, overlap_chars = sizes(tokens, overlap)
    lines = text.split("\n")
    chunks = chunk_markdown(text, tokens, overlap)
    check_common(chunks, text)
    for a, b in itertools.pairwise(chunks):
        assert a.start_line < b.start_line <= a.end_line + 1 and b.end_line > a.end_line
        carried = lines[b.start_line - 1 : a.end_line]
        assert cost(carried) <= overlap_chars
        assert a.text.endswith("\n".join(carried)) and b.text.startswith("\n".join(carried))
        assert estimate_chars(b.text) <= max_chars
        # one more line would break the budget or crowd out the first new line
        longer = lines[b.start_line - 2 : a.end_line]
        if b.start_line - 1 > a.start_line - 1:
            assert (
                cost(longer) > overlap_chars or cost(longer) + cost([lines[a.end_line]]) > max_chars
            )


@PROPS
@given(plain_doc())
def test_exact_overlap_is_the_shortest_suffix_reaching_overlap_chars(
    doc: tuple[str, int, int],
) -> None:
    text, tokens, overlap = doc
    _, overlap_chars = sizes(tokens, overlap)
    lines = text.split("\n")
    chunks = chunk_markdown(text, tokens, overlap, bounded=False)
    check_common(chunks, text)
    for a, b in itertools.pairwise(chunks):
        carried = lines[b.start_line - 1 : a.end_line]
        assert b.end_line > a.end_line and b.start_line <= a.end_line + 1
        if overlap_chars == 0:
            assert carried == []
            continue
        # walking back stops at the first line that makes the cost reach overlapChars
        assert carried and cost(carried[1:]) < overlap_chars
        if b.start_line > a.start_line:
            assert cost(carried) >= overlap_chars


# ---------------------------------------------------------------- heading chunker, exact values


def plain(i: int) -> str:
    return f"{i:02d}" + "p" * 17  # 19 chars, cost 20


def test_heading_cut_prefers_h3_and_carries_no_overlap_into_it() -> None:
    # tokens 50 → 200; "### One"(8) + 6×20 + "### Two"(8) + 3×20 = 196, the 4th line overflows.
    # "### Two" at distance 68: 80·(1 − (68/800)²·0.7) ≈ 79.6 beats any newline (≤ 1).
    lines = ["### One", *[plain(i) for i in range(6)], "### Two", *[plain(i) for i in range(6)]]
    chunks = chunk_headings("\n".join(lines), 50, 10)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 7), (8, 14)]
    assert [c.heading for c in chunks] == ["One", "Two"]
    assert chunks[1].text == "\n".join(lines[7:])


def test_heading_blank_line_break_depends_on_window() -> None:
    # 5×20 + blank(1) + 6×20: lines 1–10 fill 181, line 11 overflows. Cutting after the
    # blank (before line 7) scores 20·(1 − (80/W)²·0.7): 11.04 with W = 100 (window 25),
    # out of reach with W = 40 (window 10), where the cut at the target (score 1) wins.
    lines = [plain(i) for i in range(5)] + [""] + [plain(i) for i in range(5, 11)]
    text = "\n".join(lines)
    near = chunk_headings(text, 50, 0, window=25)
    far = chunk_headings(text, 50, 0, window=10)
    assert [(c.start_line, c.end_line) for c in near] == [(1, 6), (7, 12)]
    assert [(c.start_line, c.end_line) for c in far] == [(1, 10), (11, 12)]


def test_heading_discount_trades_score_for_distance() -> None:
    # maxChars 200; line 13 overflows at 199. "### B" is 93 chars back, "#### C" 47 back.
    # W = 100: 80·(1 − 0.93²·0.7) ≈ 31.6 < 70·(1 − 0.47²·0.7) ≈ 59.2 → cut before C.
    # W = 800: 79.2 > 69.9 → cut before B.
    lines = ["### A", *[plain(i) for i in range(5)], "### B", plain(5), plain(6), "#### C"]
    lines += [plain(7), plain(8), plain(9)]
    text = "\n".join(lines)
    near = chunk_headings(text, 50, 0, window=25)
    wide = chunk_headings(text, 50, 0, window=200)
    assert [(c.start_line, c.end_line, c.heading) for c in near] == [
        (1, 9, "A"),
        (10, 13, "B > C"),
    ]
    assert [(c.start_line, c.end_line, c.heading) for c in wide] == [(1, 6, "A"), (7, 13, "B")]


def test_heading_overlap_stops_at_a_heading() -> None:
    # window 10 keeps "### S" (86 chars back) out of reach, so the cut falls before line 11;
    # walking back, the overlap takes lines 10..7 and the heading (86 <= 120), then stops
    # rather than reaching into line 5 above the heading.
    lines = [plain(i) for i in range(5)] + ["### S"] + [plain(i) for i in range(5, 12)]
    chunks = chunk_headings("\n".join(lines), 50, 30, window=10)
    assert [(c.start_line, c.end_line) for c in chunks][:2] == [(1, 10), (6, 13)]
    assert chunks[1].text.startswith("### S\n") and chunks[1].heading == "S"


def test_heading_long_line_pieces_leave_room_for_the_newline() -> None:
    # maxChars 32: each piece weighs at most 31 so that piece + newline fits
    chunks = chunk_headings("x" * 100, 8, 0)
    assert [len(c.text) for c in chunks] == [31, 31, 31, 7]
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)
    assert "".join(c.text for c in chunks) == "x" * 100


def test_heading_overlap_whole_lines_within_budget() -> None:
    # 15 lines of cost 20, maxChars 200: ten lines, then carry 40 chars = two lines.
    lines = [plain(i) for i in range(15)]
    chunks = chunk_headings("\n".join(lines), 50, 10)
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 10), (9, 15)]
    assert chunks[1].text == "\n".join(lines[8:])


def test_heading_never_cuts_inside_a_fence_that_fits() -> None:
    # 6 text lines (120), fence opener (4): code lines would overflow inside the fence, so the
    # cut goes before the opener; the next chunk keeps the whole block (108) plus an overlap
    # of two lines (40) that still leaves room for it.
    code = [c.ljust(19) for c in ("x = 1 + 2", "# not a heading", "y = 3", "z = 4", "w = 5")]
    lines = [plain(i) for i in range(6)] + ["```", *code, "```", plain(7), plain(8)]
    for window in (200, 10):  # with window 10 the opener (64 chars back) is out of reach
        chunks = chunk_headings("\n".join(lines), 50, 10, window=window)
        assert [(c.start_line, c.end_line) for c in chunks] == [(1, 6), (5, 15)]
    assert all("not a heading" not in c.heading for c in chunks)


def test_heading_oversized_fence_falls_back_to_line_cuts() -> None:
    lines = ["intro", "~~~", *[plain(i) for i in range(20)], "~~~", "outro"]
    text = "\n".join(lines)
    chunks = chunk_headings(text, 50, 0)
    check_common(chunks, text)
    assert all(estimate_chars(c.text) <= 200 for c in chunks)
    assert any(3 <= c.start_line <= 23 for c in chunks[1:])  # a cut inside the fence


def test_heading_paths_follow_the_heading_stack() -> None:
    text = "\n".join(
        [
            "# Project X",
            "## Decisions",
            "- use sqlite",
            "### Later",
            "- revisit ~~~",
            "## People ##",
            "Alice likes tea",
            "# Other",
            "#not-a-heading",
        ]
    )
    chunks = chunk_headings(text, 400, 0)
    assert [(c.start_line, c.end_line, c.heading) for c in chunks] == [
        (1, 5, "Project X > Decisions"),
        (6, 7, "Project X > People"),
        (8, 9, "Other"),
    ]


def test_two_people_are_not_blended() -> None:
    alice = ["## Alice", "- likes green tea", "- lives in Lyon"]
    bob = ["## Bob", "- likes espresso", "- lives in Oslo"]
    chunks = chunk_headings("\n".join(["# People", "", *alice, "", *bob]), 400, 60)
    assert [(c.start_line, c.end_line, c.heading) for c in chunks] == [
        (1, 6, "People > Alice"),
        (7, 9, "People > Bob"),
    ]


# ---------------------------------------------------------------- heading chunker, properties


@PROPS
@given(TEXT, TOKENS, OVERLAP, st.integers(1, 80))
def test_heading_chunks_cover_order_bound_and_match_source(
    text: str, tokens: int, overlap: int, window: int
) -> None:
    chunks = chunk_headings(text, tokens, overlap, window=window)
    lines = check_common(chunks, text)
    max_chars, _ = sizes(tokens, overlap)
    for chunk in chunks:
        span = lines[chunk.start_line - 1 : chunk.end_line]
        assert chunk.text in "\n".join(span)
        parts = chunk.text.split("\n")
        assert len(parts) == len(span)
        if len(parts) > 1:  # inner lines whole; only the ends may be pieces of a long line
            assert span[0].endswith(parts[0]) and span[-1].startswith(parts[-1])
            assert parts[1:-1] == span[1:-1]
        if all(estimate_chars(line) < max_chars for line in span):
            assert chunk.text == "\n".join(span)
        assert estimate_chars(chunk.text) <= max_chars
    assert chunk_headings(text, tokens, overlap, window=window) == chunks


@PROPS
@given(plain_doc())
def test_heading_overlap_within_budget(doc: tuple[str, int, int]) -> None:
    text, tokens, overlap = doc
    max_chars, overlap_chars = sizes(tokens, overlap)
    lines = text.split("\n")
    chunks = chunk_headings(text, tokens, overlap)
    check_common(chunks, text)
    for a, b in itertools.pairwise(chunks):
        assert a.start_line < b.start_line <= a.end_line + 1 and b.end_line > a.end_line
        carried = lines[b.start_line - 1 : a.end_line]
        assert cost(carried) <= overlap_chars
        assert a.text.endswith("\n".join(carried)) and b.text.startswith("\n".join(carried))
        assert estimate_chars(b.text) <= max_chars


PERSON_LINE = st.text(alphabet="abcdefgh 你😀", max_size=60)


@FEW
@given(
    st.lists(PERSON_LINE, min_size=1, max_size=25),
    st.lists(PERSON_LINE, max_size=25),
    st.booleans(),
    st.integers(8, 120),
    st.integers(0, 80),
)
def test_two_sections_never_share_a_chunk(
    alice: list[str], bob: list[str], titled: bool, tokens: int, overlap: int
) -> None:
    head = ["# People", ""] if titled else []
    lines = [*head, "## Alice", *[f"A {t}" for t in alice], "## Bob", *[f"B {t}" for t in bob]]
    text = "\n".join(lines)
    chunks = chunk_headings(text, tokens, overlap)
    check_common(chunks, text)
    bob_line = lines.index("## Bob") + 1
    prefix = "People > " if titled else ""
    for chunk in chunks:
        assert chunk.end_line < bob_line or chunk.start_line >= bob_line
        expected = "Bob" if chunk.start_line >= bob_line else "Alice"
        if chunk.start_line > len(head):
            assert chunk.heading == prefix + expected


@st.composite
def fenced_doc(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """Paragraph lines and fenced blocks; returns the text and each block's 1-based lines."""
    lines: list[str] = []
    blocks: list[tuple[int, int]] = []
    code_line = st.sampled_from(["x = 1", "# comment", "- not a list", "", "return y", "😀你"])
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            lines.extend(draw(st.lists(st.one_of(WORDS, HEADING, CJK_TEXT), max_size=6)))
        else:
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            start = len(lines) + 1
            lines.append(fence + draw(st.sampled_from(["", "py"])))
            lines.extend(draw(st.lists(code_line, max_size=12)))
            lines.append(fence)
            blocks.append((start, len(lines)))
    return "\n".join(lines), blocks


@FEW
@given(fenced_doc(), st.integers(8, 60), st.integers(0, 40), st.integers(1, 100))
def test_heading_never_cuts_a_fitting_fence(
    doc: tuple[str, list[tuple[int, int]]], tokens: int, overlap: int, window: int
) -> None:
    text, blocks = doc
    max_chars, _ = sizes(tokens, overlap)
    lines = text.split("\n")
    chunks = chunk_headings(text, tokens, overlap, window=window)
    check_common(chunks, text)
    for start, end in blocks:
        if cost(lines[start - 1 : end]) > max_chars:
            continue
        for chunk in chunks:
            holds = chunk.start_line <= start and end <= chunk.end_line
            apart = chunk.end_line < start or chunk.start_line > end
            assert holds or apart, (chunk, start, end)
    assert all("comment" not in c.heading for c in chunks)


# ---------------------------------------------------------------- line chunker


def test_line_chunker_keeps_list_continuations() -> None:
    text = "intro\n\n- item one\n  continued\n  - nested\n- item two\nplain\n   \n  indented\n1. x\n\ty"
    text += "\n* z\n \n  w"
    got = [(c.start_line, c.end_line, c.text) for c in chunk_lines(text)]
    assert got == [
        (1, 1, "intro"),
        (3, 5, "- item one\n  continued\n  - nested"),
        (6, 6, "- item two"),
        (7, 7, "plain"),
        (9, 9, "  indented"),
        (10, 11, "1. x\n\ty"),
        (12, 12, "* z"),  # a whitespace-only line ends the item
        (14, 14, "  w"),
    ]


@FEW
@given(TEXT)
def test_line_chunks_are_disjoint_exact_and_maximal(text: str) -> None:
    chunks = chunk_lines(text)
    lines = check_common(chunks, text)
    for a, b in itertools.pairwise(chunks):
        assert b.start_line > a.end_line
    for chunk in chunks:
        span = lines[chunk.start_line - 1 : chunk.end_line]
        assert chunk.text == "\n".join(span) and chunk.heading == ""
        is_item = re.match(r"\s*([-*+]|\d+[.)])(\s|$)", span[0]) is not None
        if len(span) > 1:
            assert all(ln[:1].isspace() and ln.strip() for ln in span[1:])
        nxt = chunk.end_line  # 0-based index of the following line
        if is_item and nxt < len(lines):
            assert not (lines[nxt][:1].isspace() and lines[nxt].strip())


# ---------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (ChunkerConfig(), lambda t: chunk_markdown(t, 400, 80)),
        (ChunkerConfig("openclaw-exact", 20, 5), lambda t: chunk_markdown(t, 20, 5, bounded=False)),
        (ChunkerConfig("heading", 20, 5), lambda t: chunk_headings(t, 20, 5)),
        (ChunkerConfig("line"), chunk_lines),
    ],
)
def test_config_dispatches_to_its_chunker(
    config: ChunkerConfig, expected: Callable[[str], list[Chunk]]
) -> None:
    text = "# T\n" + "\n".join("z" * 150 + f" {i}" for i in range(20)) + "\n- a\n  b\n"
    assert config.chunk(text) == expected(text)
    assert config.chunk(text)


def test_config_defaults_fingerprint_and_validation() -> None:
    config = ChunkerConfig()
    assert (config.kind, config.tokens, config.overlap) == ("openclaw", 400, 80)
    prints = {
        ChunkerConfig(kind, tokens, overlap).fingerprint()
        for kind in ("openclaw", "openclaw-exact", "heading")
        for tokens, overlap in ((400, 80), (400, 60), (300, 80))
    }
    assert len(prints) == 9
    assert ChunkerConfig("heading").fingerprint() == ChunkerConfig("heading").fingerprint()
    assert ChunkerConfig("line", 10, 1).fingerprint() == ChunkerConfig("line").fingerprint()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.tokens = 3  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"kind must be one of .*got 'qmd'"):
        ChunkerConfig("qmd")
    with pytest.raises(ValueError, match="tokens must be >= 1, got 0"):
        ChunkerConfig(tokens=0)
    with pytest.raises(ValueError, match="overlap must be >= 0, got -1"):
        ChunkerConfig(overlap=-1)
    with pytest.raises(ValueError, match="tokens must be an integer"):
        ChunkerConfig(tokens=4.5)  # type: ignore[arg-type]
