"""Renames on real Go and Rust code from Debian's source packages, judged by the language's own build (issue 20).

Sources: ``golang-github-google-go-cmp-dev`` (``/usr/share/gocode/src/github.com/google/go-cmp``) and
``librust-semver-dev`` (``/usr/share/cargo/registry/semver-1.0.14``); install them with apt first. Each case
renames one function, type, constant or variable used across files/packages on a fresh copy (a git repo in a
temp dir), through CodePlane's index and refactor service in process, applies the default selection
(high + medium; for Rust also the doc edits, since a doc comment's code block is a doctest ``cargo test``
compiles: those mentions are ``high`` doc edits with reason ``doctest``), then judges it:
- Go: ``go build ./...``, again with ``-tags cmp_debug,purego`` (go-cmp's debug and purego files, which the
  default build leaves out), then ``go test ./...`` must give the untouched copy's result;
- Rust: ``cargo test --offline`` (lib, integration tests under ``tests/`` — they name the crate as
  ``semver::`` — and doctests; semver's optional serde dependency is dropped from the copied Cargo.toml) must
  give the untouched copy's result.
"No silent misses" is checked from outside (``_rename_listing.py``): every whole-word occurrence of the old
name in the copy must be on a line where the plan lists an edit (``unlisted`` counts those that are not), and
after apply the occurrences left must be exactly the listed edits not applied (``left``).
When Debian's ``gopls`` is installed, each Go case is also renamed by ``gopls rename -w`` on its own copy and
judged the same way (its ``high`` column is the occurrences it changed, doc comments included).

Result (at b406462, 2 cores; plan ms are wall/CPU with the index already built):
- Go: 18 renames (8 functions, 3 types, a variable, 4 methods, 2 fields), 251/251 applied edits high, 18/18
  build under both tag sets and pass the tests as before, 0 unlisted, 0 left. Method and field references link
  through the types declarations spell (receivers, parameters, ``var x T``, ``T{}``/``new(T)``, a function's
  first result, ``x.f.M`` through field types); the ``low`` candidates are same-named members of other types.
  At 6656351: 136 low candidates in all, 249 at 77c69f9 (two runs, same host, same day): for a package-level function,
  ``x.Equal`` of a value, a call or another package's import is set aside as ``other_symbol`` (cmp.Equal: 172 →
  86), counted and listed by position, so still 0 unlisted.
- gopls 0.5.0: 17/18 build (``diff.EditScript``: it leaves the references in ``debug_enable.go``, built only
  under ``cmp_debug``), 1.1-4.6 s wall per rename from a cold CLI (it also rewrites the declaration's doc
  comment, which CodePlane lists as doc edits).
- Rust: 20 renames (8 structs/enums, 4 functions, 4 methods, 4 fields), 431/431 high, 19/20 build and pass as
  before, 0 unlisted, 0 left. The one failure is ``VersionReq.matches``: semver's tests/test_version_req.rs
  imports ``VersionReq`` under opposite ``#[cfg]``s (``node::VersionReq`` or ``semver::VersionReq``), so
  ``req.matches(..)`` there has two possible types and is listed ``low`` (``unresolved``), not applied; the
  default build then misses it. A type rename of ``VersionReq`` keeps both (``use semver::Requirement as
  VersionReq``, the uses listed in ``coverage.kept``). rust-analyzer is not installed (the rustup proxy has no
  component, Debian 12 has no package), so there is no Rust comparison.

    uv run python benchmarks/rename_go_rust.py [--lang go,rust] [--limit N] [--no-gopls]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _rename_listing as listing
from _common import table
from _refactor_session import commit_base, refactor_session

GO_CMP = Path("/usr/share/gocode/src/github.com/google/go-cmp")
SEMVER = Path("/usr/share/cargo/registry/semver-1.0.14")
#: Files the default build leaves out (``debug_enable.go``, ``pointer_purego.go``, ``export_panic.go``): a second
#: ``go build`` with these tags catches a reference left there.
GO_ALT_TAGS = "cmp_debug,purego"


@dataclass(frozen=True)
class Case:
    lang: str
    symbol: str
    new_name: str
    kind: str
    #: The definition's file, to pick the candidate when a qualified name is not unique.
    path: str


CASES = [
    Case("go", "cmp.Equal", "Same", "function", "cmp/compare.go"),
    Case("go", "cmp.Diff", "Delta", "function", "cmp/compare.go"),
    Case("go", "cmp.Options", "OptionList", "type", "cmp/options.go"),
    Case("go", "cmp.Transformer", "Mapper", "function", "cmp/options.go"),
    Case("go", "cmp.Path", "Route", "type", "cmp/path.go"),
    Case("go", "diff.Difference", "Distance", "function", "cmp/internal/diff/diff.go"),
    Case("go", "diff.EditScript", "Script", "type", "cmp/internal/diff/diff.go"),
    Case("go", "flags.Deterministic", "Stable", "variable", "cmp/internal/flags/flags.go"),
    Case("go", "value.SortKeys", "OrderKeys", "function", "cmp/internal/value/sort.go"),
    Case("go", "function.IsType", "HasType", "function", "cmp/internal/function/func.go"),
    Case("go", "cmpopts.EquateEmpty", "EmptyEqual", "function", "cmp/cmpopts/equate.go"),
    Case("go", "cmpopts.SortSlices", "OrderSlices", "function", "cmp/cmpopts/sort.go"),
    Case("go", "cmp.state.compareAny", "compareValue", "method", "cmp/compare.go"),
    Case("go", "cmp.state.tryOptions", "tryOpts", "method", "cmp/compare.go"),
    Case("go", "cmp.Path.Last", "Final", "method", "cmp/path.go"),
    Case("go", "cmp.Result.ByIgnore", "Ignored", "method", "cmp/options.go"),
    Case("go", "cmp.state.curPath", "currentPath", "field", "cmp/compare.go"),
    Case("go", "diff.Result.NumSame", "SameCount", "field", "cmp/internal/diff/diff.go"),
    Case("rust", "src/lib.Version", "Release", "struct", "src/lib.rs"),
    Case("rust", "src/lib.VersionReq", "Requirement", "struct", "src/lib.rs"),
    Case("rust", "src/lib.Comparator", "Constraint", "struct", "src/lib.rs"),
    Case("rust", "src/lib.Op", "Operator", "enum", "src/lib.rs"),
    Case("rust", "src/lib.Prerelease", "PreRelease", "struct", "src/lib.rs"),
    Case("rust", "src/lib.BuildMetadata", "Build", "struct", "src/lib.rs"),
    Case("rust", "src/eval.matches_req", "req_matches", "function", "src/eval.rs"),
    Case("rust", "src/eval.matches_comparator", "comparator_matches", "function", "src/eval.rs"),
    Case("rust", "src/error.ErrorKind", "Failure", "enum", "src/error.rs"),
    Case("rust", "src/error.Position", "Place", "enum", "src/error.rs"),
    Case("rust", "src/identifier.Identifier", "Ident", "struct", "src/identifier.rs"),
    Case("rust", "src/parse.Error", "ParseError", "struct", "src/parse.rs"),
    Case("rust", "src/lib.Version.parse", "parse_text", "method", "src/lib.rs"),
    Case("rust", "src/lib.VersionReq.matches", "accepts", "method", "src/lib.rs"),
    Case("rust", "src/lib.Prerelease.as_str", "text", "method", "src/lib.rs"),
    Case("rust", "src/lib.BuildMetadata.is_empty", "is_blank", "method", "src/lib.rs"),
    Case("rust", "src/lib.Version.major", "maj", "field", "src/lib.rs"),
    Case("rust", "src/lib.Version.pre", "prerelease", "field", "src/lib.rs"),
    Case("rust", "src/lib.Comparator.op", "operator", "field", "src/lib.rs"),
    Case("rust", "src/lib.Comparator.minor", "minor_part", "field", "src/lib.rs"),
]


def _checkout(lang: str, into: Path) -> Path:
    root = into / "repo"
    if lang == "go":
        shutil.copytree(GO_CMP, root)
    else:
        shutil.copytree(SEMVER / "src", root / "src")
        shutil.copytree(SEMVER / "tests", root / "tests")
        shutil.copy(SEMVER / "build.rs", root / "build.rs")
        (root / "Cargo.toml").write_text('[package]\nname = "semver"\nversion = "1.0.14"\nedition = "2018"\n'
                                         'build = "build.rs"\n\n[dependencies]\n', encoding="utf-8")
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return commit_base(root)


def _go_env(scratch: Path) -> dict[str, str]:
    return {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
            "GOCACHE": str(scratch.parent / "gocache"), "GOPATH": str(scratch / "gopath")}


def _build(lang: str, root: Path, scratch: Path) -> tuple[bool, str, str]:
    """(builds, why not, the test run's summary): ``go build``/``go vet``-less ``go test``, ``cargo test``."""
    if lang == "go":
        env = _go_env(scratch)
        for tags in ([], ["-tags", GO_ALT_TAGS]):  # go-cmp's debug and purego files build only under tags
            done = subprocess.run(["go", "build", *tags, "./..."], cwd=root, env=env, capture_output=True,
                                  text=True, check=False)
            if done.returncode:
                first = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"
                return False, f"{' '.join(tags)} {first}".strip(), ""
        tested = subprocess.run(["go", "test", "-vet=off", "-count=1", "./..."], cwd=root, env=env,
                                capture_output=True, text=True, check=False)
        lines = tested.stdout.splitlines()
        if tested.returncode and not any(line.startswith(("ok", "FAIL\t", "---")) for line in lines):
            first = next((line for line in tested.stderr.splitlines() if line.strip()), "failed")
            return False, f"tests do not compile: {first}", ""
        ok = sum(1 for line in lines if line.startswith("ok"))
        failed = sorted(line.split()[1] for line in lines if line.startswith("FAIL\t"))
        return True, "", f"{ok} packages ok, failing: {' '.join(failed) or '-'}"
    env = {**os.environ, "CARGO_TARGET_DIR": str(scratch.parent / "target")}
    done = subprocess.run(["cargo", "test", "--offline", "--quiet", "--no-run"], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        return False, next((line for line in done.stderr.splitlines() if line.startswith("error")), "failed"), ""
    tested = subprocess.run(["cargo", "test", "--offline", "--quiet"], cwd=root, env=env, capture_output=True,
                            text=True, check=False)
    passed = failing = 0
    for result in re.finditer(r"test result: \w+\. (\d+) passed; (\d+) failed", tested.stdout):
        passed += int(result.group(1))
        failing += int(result.group(2))
    return True, "", f"{passed} passed, {failing} failed"


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _locate(root: Path, case: Case) -> tuple[int, int] | None:
    """1-based line and column of the declared name in the definition's file (for gopls), by the Go syntax."""
    name = case.symbol.rsplit(".", 1)[-1]
    lines = (root / case.path).read_text(encoding="utf-8").split("\n")
    patterns = [rf"^func\s+(?:\([^)]*\)\s*)?({name})\b", rf"^(?:type|var|const)\s+({name})\b",
                rf"^\s+({name})\b\s*(?:=|\w)", rf"^type\s+\w+\s+struct\s*{{.*?\b({name})\b\s*[,\w]"]
    for pattern in patterns:
        for number, line in enumerate(lines, 1):
            found = re.search(pattern, line)
            if found:
                return number, found.start(1) + 1
    return None


def run_gopls(case: Case, scratch: Path, baseline: str) -> list[object]:
    """``gopls rename -w`` on its own fresh copy, judged like CodePlane's (build, tests, occurrences left)."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    root = _checkout(case.lang, work)
    at = _locate(root, case)
    if at is None:
        return ["gopls", case.symbol, case.kind, "", "", "", "", "", "no position", "", "", "", ""]
    name = case.symbol.rsplit(".", 1)[-1]
    before = sum(listing.occurrences(root, name).values())
    began, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(["gopls", "rename", "-w", f"{root / case.path}:{at[0]}:{at[1]}", case.new_name],
                          cwd=root, env=_go_env(work), capture_output=True, text=True, timeout=900, check=False)
    ms, cpu_ms = (time.perf_counter() - began) * 1000, (_cpu() - cpu) * 1000
    if done.returncode:
        return ["gopls", case.symbol, case.kind, "", "", "", "", f"{ms:.0f}/{cpu_ms:.0f}",
                f"refused: {(done.stderr.strip().splitlines() or ['?'])[0][:70]}", "", "", "", ""]
    after = listing.occurrences(root, name)
    built, why, tests = _build(case.lang, root, work)
    return ["gopls", case.symbol, case.kind, before - sum(after.values()), "", "", "", f"{ms:.0f}/{cpu_ms:.0f}",
            "yes" if built else f"no: {why[:80]}", ("same" if tests == baseline else f"differs: {tests[:60]}")
            if built else "-", before, "", sum(after.values())]


def run_case(case: Case, scratch: Path, baseline: str) -> list[object]:
    work = Path(tempfile.mkdtemp(dir=scratch))
    root = _checkout(case.lang, work)
    with refactor_session(root) as session:
        service = session.service
        began, cpu = time.perf_counter(), time.process_time()
        preview = service.rename(case.symbol, case.new_name)
        candidate = None
        counts = dict(preview.counts)  # the preview's edit list is bounded; its counts are complete
        if preview.status == "needs_decision":
            chosen = [c for c in preview.candidates if c.symbol.path == case.path]
            if len(chosen) != 1:
                return [case.lang, case.symbol, case.kind, "ambiguous", "", "", "", "", "no", "", "", "", ""]
            candidate = chosen[0].candidate_id
            counts = dict(chosen[0].counts)
        plan_ms, cpu_ms = (time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000
        applied = counts["high"] + counts["medium"]
        old = case.symbol.rsplit(".", 1)[-1]
        # Rust doc comments hold doctests that ``cargo test`` compiles (``doctest`` doc edits, high): applied
        docs = case.lang == "rust"
        found, missing, kept = listing.unlisted(service, preview.refactor_id, candidate, root, old, apply_docs=docs,
                                        kept_in_plan=[*preview.coverage.kept, *preview.coverage.set_aside]
                                        if preview.coverage else ())
        service.apply(preview.refactor_id, candidate_id=candidate, apply_docs=docs)
        left = listing.left(root, old, kept)
        if missing or left:
            print(f"  {case.symbol}: unlisted {' '.join(missing[:6])}; left {' '.join(left[:6])}", flush=True)
        built, why, tests = _build(case.lang, root, work)
        share = f"{counts['high'] / applied:.0%}" if applied else "-"
        return [case.lang, case.symbol, case.kind, counts["high"], counts["medium"], counts["low"], share,
                f"{plan_ms:.0f}/{cpu_ms:.0f}", "yes" if built else f"no: {why[:80]}",
                ("same" if tests == baseline else f"differs: {tests[:60]}") if built else "-",
                found, len(missing), len(left)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="go,rust")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--no-gopls", action="store_true", help="skip the gopls comparison rows")
    args = parser.parse_args()
    langs = set(args.lang.split(","))
    cases = [c for c in CASES if c.lang in langs]
    if args.limit:
        cases = [c for lang in sorted(langs) for c in [x for x in cases if x.lang == lang][:args.limit]]
    missing = [str(p) for lang, p in (("go", GO_CMP), ("rust", SEMVER)) if lang in langs and not p.is_dir()]
    if missing:
        raise SystemExit(f"install the Debian source packages first (missing {', '.join(missing)})")
    gopls = shutil.which("gopls") is not None and not args.no_gopls
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="cpl-rename-go-rust-") as tmp:
        scratch = Path(tmp)
        baselines = {}
        for lang in sorted(langs):
            work = Path(tempfile.mkdtemp(dir=scratch))
            built, why, baselines[lang] = _build(lang, _checkout(lang, work), work)
            rows.append([lang, "(baseline, no rename)", "", "", "", "", "", "", "yes" if built else f"no: {why}",
                         baselines[lang], "", "", ""])
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
        for case in cases:
            rows.append(run_case(case, scratch, baselines[case.lang]))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
            if gopls and case.lang == "go":
                rows.append(run_gopls(case, scratch, baselines[case.lang]))
                print(" | ".join(str(c) for c in rows[-1]), flush=True)
    table("Renames on Debian's Go and Rust sources (go-cmp 0.5.9, semver 1.0.14); gopls rows: Debian's gopls "
          "on its own copy (high = occurrences it renamed)",
          ["tool/lang", "symbol", "kind", "high", "medium", "low (not applied)", "high share", "plan ms wall/cpu",
           "builds", "tests", "occurrences", "unlisted", "left"], rows)
    for tool in ("go", "rust", "gopls"):
        done = [r for r in rows if r[0] == tool and isinstance(r[3], int)]
        if not done:
            continue

        def total(column: int, rows: list[list[object]] = done) -> int:
            return sum(int(str(r[column] or 0)) for r in rows)

        high = total(3)
        print(f"{tool}: {len(done)} renames; high share {high}/{high + total(4)}; low candidates not applied "
              f"{total(5)}; builds {sum(1 for r in done if r[8] == 'yes')}/{len(done)}; "
              f"tests as before {sum(1 for r in done if r[9] == 'same')}/{len(done)}; occurrences "
              f"{total(10)}, unlisted {total(11)}, left after apply {total(12)}")


if __name__ == "__main__":
    main()
