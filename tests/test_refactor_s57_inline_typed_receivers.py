"""QA59 leftover: ``props.label`` on a parameter annotated with an object type written in place
(``(props: { label: string })``) was renamed ``medium anchored`` with ``BadgeProps.label``, and tsc then failed
(TS2339): that parameter's members are its own type's keys, as an untyped object literal's are."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import assert_tsc_passes, refactor_env
from tests.test_refactor_s56_tsx_props_namespaces import BADGES

INLINE = {**BADGES, "src/Other.tsx": BADGES["src/Other.tsx"] + (
    "export const Pill = (props: { label: string }) => <s>{props.label}</s>\n"
    "export function plain(p?: { label: string }, q: { label: string } = { label: '' }) {\n"
    "  return (p ? p.label : '') + q.label\n}\n")}


def test_members_of_an_inline_object_type_are_not_the_interfaces(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", INLINE) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("BadgeProps.label", "text")
        other = {(e.line, e.column, e.certainty) for e in preview.edits if e.path == "src/Other.tsx"}
        assert {c for _, _, c in other} == {"low"}, other
        # ``Chip``'s ``props: BadgeProps`` is the interface's: still renamed.
        assert ("src/Badge.tsx", 10, "medium") in {(e.path, e.line, e.certainty) for e in preview.edits}
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        assert env.read("src/Other.tsx") == INLINE["src/Other.tsx"]
        assert "<i>{props.text}</i>" in env.read("src/Badge.tsx")
