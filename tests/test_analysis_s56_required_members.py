"""QA59 F6: a required member added to a type breaks every use of the type. ``semantic_diff`` said
``+ field Options.verbose: boolean  added [symbol_added] risk:low  refs: 0`` while tsc reported TS2741 on the object
literal typed ``Options``. Such an addition is now breaking, with the type's references as its blast radius; an
optional member (``verbose?: boolean``), a Go struct field or a dataclass field with a default stays a low-risk
addition, and an optional TypeScript parameter no longer reads as a breaking signature change."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeplane.analysis import report
from codeplane.analysis.compare import Version, compare
from codeplane.analysis.facts import file_defs
from codeplane.analysis.members import REQUIRED_MEMBER
from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

OPTIONS = "export interface Options {\n  name: string\n}\n"
TS: dict[str, str] = {
    ".gitignore": ".codeplane/\n",
    "src/options.ts": OPTIONS,
    "src/main.ts": 'import type { Options } from "./options"\n\nexport function run(opts: Options): string {\n'
                   '  return opts.name\n}\n\nexport const defaults: Options = { name: "app" }\n',
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path_factory.mktemp("qa59_f6") / "repo", TS)) as handle:
        yield handle


def _member(result: dict[str, object]) -> dict[str, object]:
    changes = result["structural_changes"]
    assert isinstance(changes, list) and len(changes) == 1, result
    found: dict[str, object] = changes[0]
    return found


async def test_a_required_interface_member_is_breaking_with_the_interfaces_uses_as_its_radius(
        server: ServerHandle) -> None:
    (server.root / "src/options.ts").write_text(OPTIONS.replace("  name: string\n", "  name: string\n"
                                                                "  verbose: boolean\n"))
    async with mcp_client(server) as client:
        res = await client.call_tool("semantic_diff", {})
    result = envelope(res)["result"]
    change = _member(result)
    assert change["qualified_name"] == "Options.verbose", result
    assert change["structural_severity"] == "breaking" and change["behavior_change_risk"] == "high", result
    assert REQUIRED_MEMBER in change["delta_tags"], result  # type: ignore[operator]
    impact = change["impact"]
    assert isinstance(impact, dict) and impact["reference_basis"] == "ref_facts_resolved", result
    # ``run(opts: Options)`` and ``defaults: Options``: the interface's references, not the new field's (none).
    tiers = impact["ref_tiers"]
    assert tiers.get("proven", 0) + tiers.get("strong", 0) == 2, result
    assert result["breaking_summary"] == "1 breaking change: Options.verbose", result
    text = answer_text(res)
    assert ("1. supply 1 new required member wherever its type is built or implemented (one without it no longer "
            "compiles): Options.verbose (Options: ") in text, text
    assert "risk:low" not in text, text


async def test_an_optional_interface_member_stays_a_low_risk_addition(server: ServerHandle) -> None:
    (server.root / "src/options.ts").write_text(OPTIONS.replace("  name: string\n", "  name: string\n"
                                                                "  verbose?: boolean\n"))
    async with mcp_client(server) as client:
        res = await client.call_tool("semantic_diff", {})
    result = envelope(res)["result"]
    change = _member(result)
    assert change["structural_severity"] == "non_breaking" and change["behavior_change_risk"] == "low", result
    assert change["delta_tags"] == ["symbol_added"], result
    assert "breaking_summary" not in result, result


def _assessed(path: str, before: str, after: str) -> dict[str, tuple[str, str, bool]]:
    """Each change's (severity, risk, whether it is a required member) by qualified name."""
    old, new = file_defs(path, before.encode()), file_defs(path, after.encode())
    out = {}
    for raw in compare(Version(path, old.defs, before.split("\n")), Version(path, new.defs, after.split("\n"))):
        c = report.assess(raw, None)
        out[c.qualified_name] = (c.structural_severity, c.behavior_change_risk, REQUIRED_MEMBER in c.delta_tags)
    return out


BREAKS = ("breaking", "medium", True)
ADDS = ("non_breaking", "low", False)


@pytest.mark.parametrize(("path", "before", "after", "expected"), [
    ("t.ts", "export interface O {\n  a: string\n}\nexport type T = {\n  a: string\n}\n",
     "export interface O {\n  a: string\n  b?: number\n  c: number\n  run(): void\n  stop?(): void\n}\n"
     "export type T = {\n  a: string\n  d?: number\n  e: number\n}\nexport interface N {\n  x: string\n}\n",
     {"O.b": ADDS, "O.c": BREAKS, "O.run": BREAKS, "O.stop": ADDS, "T.d": ADDS, "T.e": BREAKS,
      "N": ADDS, "N.x": ADDS}),  # a new interface's members are new with it: nothing used it before
    ("c.ts", "export class C {\n  x = 1\n}\nexport abstract class A {\n  abstract f(): void\n}\n",
     "export class C {\n  x = 1\n  y: number = 2\n}\nexport abstract class A {\n  abstract f(): void\n"
     "  abstract g(): void\n  h(): void {}\n}\n",
     {"C.y": ADDS, "A.g": BREAKS, "A.h": ADDS}),
    ("s.go", "package s\ntype S struct {\n\tA int\n}\ntype I interface {\n\tRun() error\n}\n",
     "package s\ntype S struct {\n\tA int\n\tB int\n}\ntype I interface {\n\tRun() error\n\tStop()\n}\n",
     {"S.B": ADDS, "I.Stop": BREAKS}),  # keyed struct literals still compile; an implementer lacks Stop
    ("I.java", "public interface I {\n  void run();\n}\nabstract class B {\n  int y;\n}\n",
     "public interface I {\n  void run();\n  void stop();\n  default void d() {}\n  static void s() {}\n}\n"
     "abstract class B {\n  int y;\n  int z;\n  abstract void f();\n  void g() {}\n}\n",
     {"I.stop": BREAKS, "I.d": ADDS, "I.s": ADDS, "B.z": ADDS, "B.f": BREAKS, "B.g": ADDS}),
    ("t.rs", "pub trait T {\n    fn f(&self);\n}\npub struct S {\n    pub a: i32,\n}\n",
     "pub trait T {\n    fn f(&self);\n    fn g(&self);\n    fn h(&self) {}\n}\npub struct S {\n    pub a: i32,\n"
     "    pub b: i32,\n}\n",
     {"T.g": BREAKS, "T.h": ADDS, "S.b": ADDS}),
    ("m.py", "@dataclass\nclass P:\n    a: int\nclass Q:\n    a: int\nclass TD(TypedDict):\n    k: int\n"
     "class TE(TypedDict, total=False):\n    k: int\nclass Abs(ABC):\n    @abstractmethod\n    def f(self): ...\n"
     "@dataclass(init=False)\nclass NI:\n    a: int\n",
     "@dataclass\nclass P:\n    a: int\n    b: int\n    c: int = 0\n    d: list = field(default_factory=list)\n"
     "    e: ClassVar[int] = 1\n    f: int = field()\nclass Q:\n    a: int\n    b: int\nclass TD(TypedDict):\n"
     "    k: int\n    j: str\nclass TE(TypedDict, total=False):\n    k: int\n    j: str\nclass Abs(ABC):\n"
     "    @abstractmethod\n    def f(self): ...\n    @abstractmethod\n    def g(self): ...\n    def h(self): ...\n"
     "@dataclass(init=False)\nclass NI:\n    a: int\n    b: int\n",
     {"P.b": BREAKS, "P.c": ADDS, "P.d": ADDS, "P.e": ADDS, "P.f": BREAKS, "Q.b": ADDS, "TD.j": BREAKS,
      "TE.j": ADDS, "Abs.g": BREAKS, "Abs.h": ADDS, "NI.b": ADDS}),
])
def test_a_member_is_breaking_only_where_the_language_makes_every_use_supply_it(
        path: str, before: str, after: str, expected: dict[str, tuple[str, str, bool]]) -> None:
    assert _assessed(path, before, after) == expected


@pytest.mark.parametrize(("after", "severity"), [
    ("export function f(a: number, b?: number): number {\n  return a\n}\n", "non_breaking"),
    ("export function f(a: number, b: number = 1, ...rest: string[]): number {\n  return a\n}\n", "non_breaking"),
    ("export function f(a: number, b: number): number {\n  return a\n}\n", "breaking"),
    ("export function f(a: string, b?: number): number {\n  return 1\n}\n", "breaking"),
])
def test_an_optional_typescript_parameter_keeps_every_call_compiling(after: str, severity: str) -> None:
    before = "export function f(a: number): number {\n  return a\n}\n"
    (sev, risk, _), = _assessed("f.ts", before, after).values()
    assert (sev, risk) == (severity, "medium")


def test_a_required_member_is_in_the_hint_when_its_uses_are_unknown() -> None:
    # Without an index the blast radius is unknown: still breaking, in the hint, and not "no reference".
    old, new = OPTIONS, OPTIONS.replace("  name: string\n", "  name: string\n  verbose: boolean\n")
    a, b = file_defs("o.ts", old.encode()), file_defs("o.ts", new.encode())
    changes = [report.assess(c, None) for c in compare(Version("o.ts", a.defs, old.split("\n")),
                                                        Version("o.ts", b.defs, new.split("\n")))]
    hint = report.agentic_hint(changes, [])
    assert hint == ("1. references unknown for 1 breaking change (the index could not be read; search their names "
                    "before relying on them): Options.verbose"), hint
