"""Renames on real Go and Rust code from Debian's source packages, judged by the language's own build (issue 20).

Sources: ``golang-github-google-go-cmp-dev`` (``/usr/share/gocode/src/github.com/google/go-cmp``) and
``librust-semver-dev`` (``/usr/share/cargo/registry/semver-1.0.14``); install them with apt first. Each case
renames one function, type, constant or variable used across files/packages on a fresh copy (a git repo in a
temp dir), through CodePlane's index and refactor service in process, applies the default selection
(high + medium), then builds: ``go build ./...`` and ``go test -run ^$ ./...`` (compiles the tests) or
``cargo check --offline --lib --tests`` (semver's optional serde dependency is dropped from the copied
Cargo.toml; its integration tests under ``tests/`` are built too: they name the crate as ``semver::``).
Reported per case: edits by certainty, the high share of applied edits, ``low`` candidates
(never applied: other spellings of the name — strings, same-named methods and fields — each with a reason),
and whether the build passed (a missed reference in compiled code fails it).

Result (go-cmp + semver with its integration tests): 24 renames, every applied edit high; 23/24 build. The one
failure is honest: semver's tests/test_version_req.rs imports ``VersionReq`` twice under opposite ``#[cfg]``s,
so the name is bound twice in that file and the index never picks one (its uses stay ``low``).

    uv run python benchmarks/rename_go_rust.py [--lang go,rust] [--limit N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _common import table
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.mutation import MutationEngine
from codeplane.refactor.service import RefactorService

GO_CMP = Path("/usr/share/gocode/src/github.com/google/go-cmp")
SEMVER = Path("/usr/share/cargo/registry/semver-1.0.14")


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
]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
                        "GIT_COMMITTER_EMAIL": "b@b"})


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
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    return root


def _build(lang: str, root: Path, scratch: Path) -> tuple[bool, str]:
    if lang == "go":
        env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
               "GOCACHE": str(scratch.parent / "gocache"), "GOPATH": str(scratch / "gopath")}
        for args in (["go", "build", "./..."], ["go", "test", "-vet=off", "-count=1", "-run", "^$", "./..."]):
            done = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=False)
            if done.returncode:
                return False, done.stderr.strip().splitlines()[0] if done.stderr.strip() else "failed"
        return True, ""
    env = {**os.environ, "CARGO_TARGET_DIR": str(scratch.parent / "target")}
    done = subprocess.run(["cargo", "check", "--offline", "--lib", "--tests", "--quiet"], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    first = next((line for line in done.stderr.splitlines() if line.startswith("error")), "failed")
    return done.returncode == 0, "" if done.returncode == 0 else first


def run_case(case: Case, scratch: Path) -> list[object]:
    work = Path(tempfile.mkdtemp(dir=scratch))
    root = _checkout(case.lang, work)
    cfg = CodePlaneConfig()
    layout = RepoLayout(root)
    layout.state_dir.mkdir(exist_ok=True)
    index = IndexService(root, layout, cfg.index.model_copy(update={"watch": False}))
    index.register_indexer(StructuralIndexer(workers=1))
    index.start()
    mutation = MutationEngine(root, cfg.mutation, after_write=index.refresh_paths)
    try:
        assert index.wait_ready(300), index.error
        service = RefactorService.for_repository(root, cfg.refactor, index, mutation)
        began = time.perf_counter()
        preview = service.rename(case.symbol, case.new_name)
        candidate = None
        counts = dict(preview.counts)  # the preview's edit list is bounded; its counts are complete
        if preview.status == "needs_decision":
            chosen = [c for c in preview.candidates if c.symbol.path == case.path]
            if len(chosen) != 1:
                return [case.lang, case.symbol, case.kind, "ambiguous", "", "", "", "", "no"]
            candidate = chosen[0].candidate_id
            counts = dict(chosen[0].counts)
        plan_ms = (time.perf_counter() - began) * 1000
        applied = counts["high"] + counts["medium"]
        service.apply(preview.refactor_id, candidate_id=candidate) if candidate else service.apply(preview.refactor_id)
        built, why = _build(case.lang, root, work)
        share = f"{counts['high'] / applied:.0%}" if applied else "-"
        return [case.lang, case.symbol, case.kind, counts["high"], counts["medium"], counts["low"], share,
                f"{plan_ms:.0f}", "yes" if built else f"no: {why[:80]}"]
    finally:
        index.stop()
        mutation.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="go,rust")
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    langs = set(args.lang.split(","))
    cases = [c for c in CASES if c.lang in langs]
    if args.limit:
        cases = [c for lang in sorted(langs) for c in [x for x in cases if x.lang == lang][:args.limit]]
    missing = [str(p) for lang, p in (("go", GO_CMP), ("rust", SEMVER)) if lang in langs and not p.is_dir()]
    if missing:
        raise SystemExit(f"install the Debian source packages first (missing {', '.join(missing)})")
    rows = []
    with tempfile.TemporaryDirectory(prefix="cpl-rename-go-rust-") as tmp:
        scratch = Path(tmp)
        for lang in sorted(langs):
            baseline = Path(tempfile.mkdtemp(dir=scratch))
            built, why = _build(lang, _checkout(lang, baseline), baseline)
            rows.append([lang, "(baseline, no rename)", "", "", "", "", "", "", "yes" if built else f"no: {why}"])
        for case in cases:
            rows.append(run_case(case, scratch))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    table("Renames on Debian's Go and Rust sources (go-cmp 0.5.9, semver 1.0.14)",
          ["lang", "symbol", "kind", "high", "medium", "low (not applied)", "high share", "plan ms", "builds"], rows)
    done = [r for r in rows if isinstance(r[3], int)]
    high = sum(int(r[3]) for r in done)
    applied = high + sum(int(r[4]) for r in done)
    low = sum(int(r[5]) for r in done)
    print(f"\n{len(done)} renames; high share {high}/{applied}; low candidates not applied {low}; "
          f"builds {sum(1 for r in done if r[8] == 'yes')}/{len(done)}")


if __name__ == "__main__":
    main()
