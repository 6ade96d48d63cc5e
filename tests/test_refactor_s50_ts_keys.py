"""QA37 (5, 6): TypeScript keys a member rename left behind though the syntax ties them to the member, each result
judged by ``tsc`` (strict): a typed literal's method shorthand ``now() {}``, a pattern destructuring ``this`` in a
class of the family, and the preview's summary line, which counted medium keys among the lows."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.types import CallToolResult

from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server
from tests.refactor_builders import assert_tsc_passes, refactor_env, run_node

TSCONFIG = ('{ "compilerOptions": { "strict": true, "target": "es2018", "module": "esnext", '
            '"moduleResolution": "node", "noEmit": true, "types": [], "lib": ["es2018"] }, '
            '"include": ["src/**/*.ts"] }\n')

CLOCKS = {
    "package.json": "{\"name\": \"clocks\"}\n",
    "tsconfig.json": TSCONFIG,
    "src/clock.ts": ("export interface Clock {\n  now(): number;\n}\n"
                     "interface DelegatingClock extends Clock {\n  delegate: Clock | undefined;\n}\n"
                     "export const direct: Clock = {\n  now() {\n    return 1;\n  },\n};\n"
                     "export const derived: DelegatingClock = {\n  now() {\n    return 2;\n  },\n"
                     "  delegate: undefined,\n};\n"
                     "export const arrow: Clock = {\n  now: () => 3,\n};\n"
                     "export const loose = {\n  now() {\n    return 4;\n  },\n};\n"),
    "src/use.ts": ("import { Clock, direct } from './clock';\n"
                   "export function elapsed(c: Clock): number {\n  return c.now() - direct.now();\n}\n"
                   "export function tick({ now }: Clock, { now: later }: Clock): number {\n"
                   "  return now() + later();\n}\n"),
}


def test_a_typed_literals_method_shorthand_key_is_renamed_like_a_key_value_one(tmp_path: Path) -> None:
    # ``now() {}`` in ``const direct: Clock = {...}`` stayed low while ``now: () => 3`` was medium: tsc then said
    # "'now' does not exist in type 'Clock'" (TS2353). A typed parameter pattern is the same key.
    with refactor_env(tmp_path / "repo", CLOCKS) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("Clock.now", "tick")
        found = {(e.path, e.line, e.certainty, e.reason, e.new_text) for e in preview.edits}
        assert {("src/clock.ts", 8, "medium", "typed_object_key", "tick"),
                ("src/clock.ts", 13, "medium", "typed_object_key", "tick"),
                ("src/clock.ts", 19, "medium", "typed_object_key", "tick")} <= found, found
        # A shorthand pattern key splits, so the parameter keeps its name; ``{ now: later }`` renames the key.
        assert {e.new_text for e in preview.edits if (e.path, e.line) == ("src/use.ts", 5)} == {"tick: now", "tick"}
        # An untyped literal's method is another object's: listed, not renamed.
        assert {(e.certainty, e.reason) for e in preview.edits if (e.path, e.line) == ("src/clock.ts", 22)} == {
            ("low", "other_binding")}
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        clock = env.read("src/clock.ts")
        assert clock.count("  tick() {") == 2 and "  tick: () => 3," in clock and "  now() {\n    return 4;" in clock
        assert "tick({ tick: now }: Clock, { tick: later }: Clock)" in env.read("src/use.ts")


SUBSCRIPTIONS = {
    "package.json": "{\"name\": \"subs\"}\n",
    "tsconfig.json": TSCONFIG,
    "src/base.ts": "export class Base {\n  closed = false;\n  static made = 0;\n}\n",
    "src/child.ts": ("import { Base } from './base';\n\n"
                     "export class Child extends Base {\n"
                     "  finish(): boolean {\n"
                     "    const { closed } = this;\n"
                     "    const { closed: was = true } = this;\n"
                     "    let again = false;\n"
                     "    const later = (): boolean => {\n"
                     "      ({ closed: again } = this);\n      return again;\n    };\n"
                     "    return !closed && was && later();\n"
                     "  }\n"
                     "  check = (): boolean => {\n    const { closed } = this;\n    return closed;\n  };\n"
                     "  static count(): number {\n    const { made } = this;\n    return made;\n  }\n"
                     "  foreign(): boolean {\n"
                     "    const g = function (this: { closed: boolean }): boolean {\n"
                     "      const { closed } = this;\n      return closed;\n    };\n"
                     "    const o = {\n      closed: 2,\n      m(): number {\n        const { closed } = this;\n"
                     "        return closed;\n      },\n    };\n"
                     "    return g.call({ closed: true }) && o.m() > 0;\n"
                     "  }\n"
                     "}\n\n"
                     "export class Other {\n  closed = 'x';\n  read(): string {\n    const { closed } = this;\n"
                     "    return closed;\n  }\n}\n"),
}


def test_destructuring_this_in_a_subclass_is_as_certain_as_this_dot_member(tmp_path: Path) -> None:
    # ``const { closed } = this;`` in a subclass was ``low other_binding``; after applying, tsc said "Property
    # 'closed' does not exist on type 'Child'" (rxjs's OperatorSubscriber).
    with refactor_env(tmp_path / "repo", SUBSCRIPTIONS) as env:
        assert_tsc_passes(env)
        preview = env.service.rename("Base.closed", "isClosed")
        edits = {(e.line, e.column): (e.certainty, e.reason, e.new_text) for e in preview.edits
                 if e.path == "src/child.ts"}
        mine = {(5, 12): "isClosed: closed", (6, 12): "isClosed", (9, 9): "isClosed", (15, 12): "isClosed: closed"}
        assert {at: edits.get(at) for at in mine} == {at: ("high", "self_member", new) for at, new in mine.items()}
        # The locals these declare keep their names; a plain function's ``this`` (its caller's), an object literal
        # method's (the literal) and an unrelated class's are not the member.
        assert edits[(12, 12)][0] == edits[(16, 11)][0] == "low"
        assert edits[(24, 14)][0] == edits[(30, 16)][0] == edits[(41, 12)][0] == "low", edits
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)
        child = env.read("src/child.ts")
        assert "const { closed: was = true } = this;" not in child and "{ isClosed: was = true }" in child
        assert "({ isClosed: again } = this);" in child
        assert "const { closed } = this;\n    return closed;\n  }\n}" in child  # ``Other``'s


def test_a_static_members_this_destructuring_reaches_the_static_member(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", SUBSCRIPTIONS) as env:
        preview = env.service.rename("Base.made", "built")
        assert {(e.line, e.certainty, e.new_text) for e in preview.edits if e.path == "src/child.ts"} == {
            (19, "high", "built: made"), (20, "low", "built")}, preview.edits  # (the local ``made`` stays)
        env.service.apply(preview.refactor_id)
        assert_tsc_passes(env)


def test_javascript_destructuring_this_in_a_subclass_is_renamed(tmp_path: Path) -> None:
    files = {"package.json": "{\"name\": \"js\"}\n",
             "lib/index.js": ("class Base {\n  constructor() {\n    this.closed = true;\n  }\n}\n"
                              "class Child extends Base {\n  state() {\n    const { closed } = this;\n"
                              "    return closed;\n  }\n}\n"
                              "console.log(new Child().state());\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Base.closed", "done")
        assert {(e.line, e.certainty, e.new_text) for e in preview.edits if e.line == 8} == {
            (8, "high", "done: closed")}, preview.edits
        env.service.apply(preview.refactor_id)
        assert run_node(env) == "true\n"



@pytest.mark.anyio
async def test_the_summary_counts_medium_keys_as_covered_not_among_the_lows(tmp_path: Path) -> None:
    # The text said "covers 8/12 occurrences, 3 low (builtin_receiver 1, other_binding 2, typed_object_key 2)":
    # the two medium keys were neither covered nor low, but listed among the lows' reasons.
    files = dict(CLOCKS)
    files["src/stamp.ts"] = "export function stamp(): number {\n  return Date.now();\n}\n"
    with running_server(make_repo(tmp_path / "repo", files)) as server:
        async with mcp_client(server) as client:
            res: CallToolResult = await client.call_tool("refactor_rename", {"symbol": "Clock.now",
                                                                             "new_name": "tick"})
            assert not res.is_error, answer_text(res)
            coverage = envelope(res)["result"]["coverage"]
            text = answer_text(res)
    assert "typed_object_key" not in coverage.get("by_reason", {}), coverage
    lows = {"builtin_receiver": 1, "other_binding": 2}  # ``Date.now()``, the untyped literal's, the local ``now``
    assert (coverage["lexical_occurrences"], coverage["in_plan"], coverage["low_candidates"], coverage["by_reason"]) \
        == (11, 9, 3, lows), coverage
    assert "covers 9/11 occurrences, 3 low (builtin_receiver 1, other_binding 2)" in text, text
