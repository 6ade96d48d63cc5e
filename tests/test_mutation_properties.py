"""Property tests for the pure core of the mutation engine: span application, re-anchoring, merging and
byte-exact round trips."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeplane.core.errors import CodePlaneError
from codeplane.mutation.document import Document, TextFormat
from codeplane.mutation.spans import (
    Replacement,
    anchor_span,
    apply_replacements,
    check_disjoint,
    find_block,
    span_replacement,
)

LINE = st.text(alphabet="ab =()", max_size=6)
ENDING = st.sampled_from(["LF", "CRLF"])


@st.composite
def documents(draw: st.DrawFn) -> tuple[list[str], Document]:
    lines = draw(st.lists(LINE, max_size=12))
    ending = draw(ENDING)
    newline = "\r\n" if ending == "CRLF" else "\n"
    text = newline.join(lines)
    # An empty last line only exists when it is terminated.
    if lines and (lines[-1] == "" or draw(st.booleans())):
        text += newline
    doc = Document.decode(text.encode(), "f.txt", default_ending=ending)  # type: ignore[arg-type]
    return lines, doc


@settings(max_examples=300, deadline=None)
@given(documents(), st.data())
def test_span_application_replaces_exactly_the_span(case: tuple[list[str], Document], data: st.DataObject) -> None:
    lines, doc = case
    assert doc.lines() == lines
    n = len(lines)
    start = data.draw(st.integers(1, n + 1), label="start")
    end = data.draw(st.integers(start - 1, n), label="end")
    new_lines = data.draw(st.lists(LINE, max_size=4), label="new")
    content = "\n".join(new_lines) + ("\n" if new_lines else "")
    rep = span_replacement(doc, start, end, content, 0)
    result = apply_replacements(doc.text, [rep])
    # Bytes outside the span are untouched.
    assert result.startswith(doc.text[:doc.offset(start)])
    assert result.endswith(doc.text[doc.offset(end + 1):])
    after = Document.from_text(result, doc.fmt)
    assert after.lines() == lines[:start - 1] + new_lines + lines[end:]
    if doc.fmt.line_ending == "CRLF":
        assert result.count("\n") == result.count("\r\n")
    else:
        assert "\r" not in result
    # Encoding the result gives back the original bytes outside the span too.
    assert doc.encode(result, "f.txt").startswith(doc.encode(doc.text[:doc.offset(start)], "f.txt"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=15), st.data())
def test_reanchoring_agrees_with_a_brute_force_search(lines: list[str], data: st.DataObject) -> None:
    n = len(lines)
    start = data.draw(st.integers(1, n), label="start")
    end = data.draw(st.integers(start, min(n, start + 2)), label="end")
    block = lines[start - 1:end]
    drift = data.draw(st.integers(-3, 3), label="drift")
    drifted = list(lines)
    if drift > 0:  # lines inserted above the span since the caller read the file
        at = data.draw(st.integers(0, start - 1), label="at")
        drifted[at:at] = [f"new{i}" for i in range(drift)]
    elif drift < 0:  # lines removed above it
        cut = min(-drift, start - 1)
        del drifted[:cut]
    window = data.draw(st.integers(0, 6), label="window")
    doc = Document.from_text("\n".join(drifted) + "\n", TextFormat())
    expected = "\n".join(block) + "\n"
    in_place = drifted[start - 1:end] == block
    matches = [i for i in range(len(drifted) - len(block) + 1)
               if drifted[i:i + len(block)] == block and abs(i - (start - 1)) <= window]
    if in_place:
        assert anchor_span(doc, "f", 0, start, end, expected=expected, window=window) == (start, end, None)
    elif len(matches) == 1:
        s, e, fix = anchor_span(doc, "f", 0, start, end, expected=expected, window=window)
        assert (s, e) == (matches[0] + 1, matches[0] + len(block))
        assert fix is not None and fix.original == (start, end) and fix.corrected == (s, e)
        assert drifted[s - 1:e] == block
    else:
        with pytest.raises(CodePlaneError) as info:
            anchor_span(doc, "f", 0, start, end, expected=expected, window=window)
        assert info.value.code == 5002
        # No match: no candidates field (a refusal carries no empty list).
        assert [c - 1 for c in info.value.details.get("candidates", [])] == matches


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abc\n", max_size=30), st.data())
def test_one_pass_merge_equals_applying_disjoint_edits_back_to_front(text: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8), label="cuts"))
    reps = [Replacement(a, b, data.draw(st.text(alphabet="XY\n", max_size=3)), i)
            for i, (a, b) in enumerate(zip(cuts[::2], cuts[1::2], strict=False))]
    try:
        ordered = check_disjoint("f", reps)
    except CodePlaneError as exc:
        assert exc.code == 5006
        return
    expected = text
    for rep in sorted(ordered, key=lambda r: (r.start, r.end), reverse=True):
        expected = expected[:rep.start] + rep.new + expected[rep.end:]
    assert apply_replacements(text, ordered) == expected


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64).filter(lambda b: b"\x00" not in b))
def test_any_nul_free_bytes_round_trip_exactly_or_are_refused_whole(data: bytes) -> None:
    marks = {codecs.BOM_UTF8: "utf-8", codecs.BOM_UTF16_LE: "utf-16-le", codecs.BOM_UTF16_BE: "utf-16-be"}
    try:
        doc = Document.decode(data, "f")
    except CodePlaneError as refused:
        # Only a UTF-16 mark over an odd number of bytes (b"\xfe\xff\x01") is refused: 5008,
        # nothing decoded a different way and written back changed.
        mark = next(m for m in sorted(marks, key=len, reverse=True) if data.startswith(m))
        assert refused.code == 5008
        with pytest.raises(UnicodeDecodeError):
            data[len(mark):].decode(marks[mark])
        return
    assert doc.encode(doc.raw, "f") == data  # raw: undecodable bytes held as lone surrogates


@given(st.lists(st.sampled_from(["p", "q"]), max_size=10), st.lists(st.sampled_from(["p", "q"]), max_size=3))
def test_find_block_finds_every_occurrence(lines: list[str], block: list[str]) -> None:
    expected = [i for i in range(len(lines) - len(block) + 1) if block and lines[i:i + len(block)] == block]
    assert find_block(lines, block, 0, len(lines)) == expected
