"""QA59 leftover: a function component declared with its type (``const Pill: React.FC<BadgeProps> = ({ label }) =>
...``) left its props pattern and its tags' attributes ``low`` when ``BadgeProps.label`` was renamed, and tsc then
failed (TS2339 on the pattern, TS2322 on ``<Pill label="a" />``): the type argument types the props as an annotation
on the parameter does."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import assert_tsc_passes, refactor_env
from tests.test_refactor_s56_tsx_props_namespaces import BADGES

FC_FILE = ('import { h } from "./h"\nimport { BadgeProps } from "./Badge"\n\n'
           "type FC<P> = (props: P) => any\n"
           "declare namespace React {\n  type FunctionComponent<P> = (props: P) => any\n}\n"
           "export const Pill: FC<BadgeProps> = ({ label }) => <s>{label}</s>\n"
           "export const Pill2: React.FunctionComponent<BadgeProps> = function (props) {\n"
           "  return <s>{props.label}</s>\n}\n"
           "export const Other: FC<{ label: string }> = ({ label }) => <u>{label}</u>\n"
           'export const uses = [<Pill label="a" />, <Pill2 label="b" />, <Other label="c" />]\n')


def test_a_function_components_declared_props_type_its_pattern_and_attributes(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", {**BADGES, "src/Fc.tsx": FC_FILE}) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("BadgeProps.label", "text")
        found = {(e.line, e.certainty) for e in preview.edits if e.path == "src/Fc.tsx" and e.certainty != "low"}
        # Pill's pattern key (8), Pill2's ``props.label`` (10) and both tags' attributes (13); ``Other`` is its own.
        assert found == {(8, "medium"), (10, "medium"), (13, "medium")}, found
        assert sum(1 for e in preview.edits if e.path == "src/Fc.tsx" and e.line == 13 and e.certainty != "low") == 2
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        text = env.read("src/Fc.tsx")
        assert "({ text: label }) => <s>{label}</s>" in text and "{props.text}" in text, text
        assert '<Pill text="a" />, <Pill2 text="b" />, <Other label="c" />' in text, text
        assert "FC<{ label: string }> = ({ label })" in text


CLASS_FILE = ('import { h } from "./h"\nimport { BadgeProps } from "./Badge"\n\n'
              "declare namespace React {\n  class Component<P, S = {}> {\n    props: P\n  }\n}\n"
              "export class Card extends React.Component<BadgeProps> {\n  render() {\n    return <s>x</s>\n  }\n}\n"
              'export const card = <Card label="c" />\n')


def test_a_class_components_base_types_its_tags_attributes(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", {**BADGES, "src/Card.tsx": CLASS_FILE}) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("BadgeProps.label", "text")
        found = {(e.line, e.certainty, e.reason) for e in preview.edits if e.path == "src/Card.tsx"}
        assert found == {(14, "medium", "typed_object_key")}, found
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        assert '<Card text="c" />' in env.read("src/Card.tsx")
