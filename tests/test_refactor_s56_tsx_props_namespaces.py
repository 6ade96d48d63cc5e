"""QA59 F5: two TypeScript renames the plan left ``low`` though the syntax and the index settle them, each applied
result judged by ``tsc`` (strict).

- A TSX attribute on a repository component typed by the renamed field's interface (``<Badge label="new" />`` with
  ``function Badge({ label }: BadgeProps)``) was ``low unresolved``: tsc then said TS2322 on the attribute.
- A member reached through a barrel's ``export * as moneyNs from "./money/math"`` was ``low unresolved_receiver``
  while the same member through ``import * as core`` was ``high``: tsc then said TS2339.
"""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import assert_tsc_passes, refactor_env

TSCONFIG = ('{ "compilerOptions": { "strict": true, "noEmit": true, "types": [], "jsx": "react", "jsxFactory": "h", '
            '"target": "ES2020", "module": "ESNext", "moduleResolution": "Bundler" }, "include": ["src"] }\n')
H = ("export function h(tag: any, props: any, ...children: any[]): any {\n  return { tag, props, children }\n}\n"
     "declare global {\n  namespace JSX {\n    interface IntrinsicElements { [tag: string]: any }\n  }\n}\n")

BADGES = {
    "tsconfig.json": TSCONFIG,
    "src/h.ts": H,
    "src/Badge.tsx": ('import { h } from "./h"\n\nexport interface BadgeProps {\n  label: string\n}\n\n'
                      "export function Badge({ label }: BadgeProps) {\n  return <b>{label}</b>\n}\n"
                      "export const Chip = (props: BadgeProps) => <i>{props.label}</i>\n"),
    "src/Other.tsx": ('import { h } from "./h"\n\n'
                      "export function Tag({ label }: { label: string }) {\n  return <u>{label}</u>\n}\n"),
    "src/App.tsx": ('import { h } from "./h"\nimport { Badge, Chip } from "./Badge"\nimport { Tag } from "./Other"\n\n'
                    'export const app = <Badge label="new" />\n'
                    'export const chip = <Chip label="x">{1}</Chip>\n'
                    'export const tag = <Tag label="same name, other props" />\n'),
}


def test_a_jsx_attribute_of_a_component_typed_by_the_interface_is_renamed(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", BADGES) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("BadgeProps.label", "text")
        found = {(e.path, e.line, e.certainty, e.reason) for e in preview.edits if e.path == "src/App.tsx"}
        # ``Tag``'s props are another type: its attribute is not the field's, and stays a low candidate.
        assert found == {("src/App.tsx", 5, "medium", "typed_object_key"),
                         ("src/App.tsx", 6, "medium", "typed_object_key"),
                         ("src/App.tsx", 7, "low", "unresolved")}, found
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        app = env.read("src/App.tsx")
        assert '<Badge text="new" />' in app and '<Chip text="x">' in app and '<Tag label="same' in app, app


MONEY = {
    "tsconfig.json": TSCONFIG,
    "src/money/math.ts": "export function sum(xs: number[]): number {\n  return xs.reduce((a, b) => a + b, 0)\n}\n",
    "src/money/index.ts": 'export * from "./math"\n',
    "src/index.ts": 'export * as moneyNs from "./money/math"\nexport * as allMoney from "./money"\n',
    "src/barrel.ts": 'export { moneyNs as cash } from "./index"\n',
    "src/stats.ts": ('import { moneyNs, allMoney } from "./index"\nimport { cash } from "./barrel"\n'
                     'import * as core from "./money/math"\n\n'
                     "export function t(xs: number[]): number {\n"
                     "  return moneyNs.sum(xs) + core.sum(xs) + allMoney.sum(xs) + cash.sum(xs)\n}\n"),
    "src/other.ts": ('export * as moneyNs from "./unrelated"\n'),
    "src/unrelated.ts": "export function sum(): number {\n  return 0\n}\n",
    "src/far.ts": ('import { moneyNs } from "./other"\n\nexport const zero = moneyNs.sum()\n'),
}


def test_a_member_through_an_export_star_as_namespace_is_renamed_like_import_star_as(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", MONEY) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("src/money/math.sum", "total")
        found = {(e.path, e.column, e.certainty) for e in preview.edits if e.path in ("src/stats.ts", "src/far.ts")}
        # ``moneyNs``, ``allMoney`` (``export *`` of the module) and ``cash`` (a renamed re-export of it) are the
        # namespace of math.ts, as ``core`` is; far.ts's ``moneyNs`` is another module's.
        assert found == {("src/stats.ts", 17, "high"), ("src/stats.ts", 32, "high"), ("src/stats.ts", 51, "high"),
                         ("src/stats.ts", 66, "high"), ("src/far.ts", 28, "low")}, found
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        assert "moneyNs.total(xs) + core.total(xs) + allMoney.total(xs) + cash.total(xs)" in env.read("src/stats.ts")
        assert env.read("src/far.ts") == MONEY["src/far.ts"]
