"""TypeScript member renames leave the standard global objects alone (QA 37 item 4): ``performance.now()`` and
``(override || Date).now()`` were ``medium anchored`` and renamed by default (tsc: ``Property 'tick' does not exist
on type 'Performance'``); they are ``low builtin_receiver`` like ``Date.now()``."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import assert_tsc_passes, refactor_env

FILES = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020", '
                     '"lib": ["es2020", "dom"]}, "include": ["src"]}\n',
    "src/clock.ts": "export interface Clock {\n  now(): number;\n}\n\n"
                    "export class Fixed implements Clock {\n  now(): number {\n    return 3;\n  }\n}\n",
    "src/perf.ts": "export const t = (): number => performance.now();\n"
                   "export const id = (): string => crypto.randomUUID() + location.href + navigator.language;\n",
    "src/stamp.ts": "import { Fixed } from './clock';\n\n"
                    "export function stamp(): number {\n  return Date.now() + new Fixed().now();\n}\n",
}


def test_standard_global_receivers_are_low_and_the_rename_type_checks(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("Clock.now", "tick")
        at = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert at[("src/perf.ts", 1, 43)] == ("low", "builtin_receiver"), at
        assert at[("src/stamp.ts", 4, 34)][0] == "high", at
        env.service.apply(preview.refactor_id)
        assert "performance.now()" in env.read("src/perf.ts")
        assert "Date.now() + new Fixed().tick()" in env.read("src/stamp.ts")
        assert_tsc_passes(env)


def test_a_parenthesised_receiver_that_may_be_a_global_object_is_low(tmp_path: Path) -> None:
    """``(override || Date).now()`` has no one receiver name; ``Date`` is one of its values, so renaming ``now``
    there is a proposal only (tsc rejects the union either way: the code needs a hand)."""
    files = {**FILES, "src/stamp.ts": "import { Clock } from './clock';\n\nlet override: Clock | undefined;\n\n"
                                      "export function stamp(): number {\n  return (override || Date).now();\n}\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Clock.now", "tick")
        at = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert at[("src/stamp.ts", 6, 28)] == ("low", "builtin_receiver"), at
