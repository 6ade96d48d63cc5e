"""Renames across a second real C++ project, judged by its build and its own tests: LevelDB 1.20.

Source: LevelDB 1.20 as vendored in the pinned ``leveldown`` 5.6.0 npm tarball (``deps/leveldb/leveldb-1.20``,
fetched once by ``_common.npm_package`` into ``benchmarks/.cache``; never committed). Unlike Ninja it is written
against interfaces: ``Iterator``, ``Comparator``, ``Env`` and ``FilterPolicy`` are abstract classes whose virtual
methods (``Valid``, ``Name``, ``NewWritableFile``) a dozen classes override in ``.cc`` files; names like ``Name``,
``number``, ``ok``, ``size`` and ``Valid`` belong to several unrelated classes (and ``size`` to ``std::string``);
a public header (``include/leveldb/``) is used from ``db/``, ``table/``, ``util/`` and the tests.

Each case renames one class, method, field or function on a fresh copy through CodePlane's index and refactor
service in process, applies the default selection (high + medium), compiles the library and 22 of its test
programs with ``g++`` (its own test harness, ``util/testharness.cc``; ``db_test``, ``autocompact_test`` and
``issue178_test`` are left out: the first fails one case on an untouched copy here, the others take 10-20 s each)
and runs them: every program must build and pass, as on the untouched copy. "No silent misses" is checked from
outside (``_rename_listing.py``) as in the other rename benchmarks.

    uv run python benchmarks/rename_leveldb.py [--limit N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import npm_package, require
from _refactor_session import commit_base
from _rename_judged import Case, run_all

CASES: list[Case] = [
    ("Arena", "MemoryArena", "class"),
    ("LookupKey", "KeyToFind", "class"),
    ("TableBuilder.Rep", "State", "class defined apart"),
    ("MemTable", "MemoryTable", "class"),
    ("TableCache", "TableFileCache", "class"),
    ("VersionEdit", "VersionDelta", "class"),
    ("WriteBatch", "UpdateBatch", "class"),
    ("Arena.Allocate", "Take", "method"),
    ("MemTable.ApproximateMemoryUsage", "ApproxMemory", "method"),
    ("Slice.starts_with", "has_prefix", "method"),
    ("Status.IsNotFound", "IsMissing", "method"),
    ("Status.ok", "is_ok", "method"),
    ("Slice.size", "length", "method"),
    ("Block.NumRestarts", "RestartCount", "method"),
    ("VersionSet.LastSequence", "LatestSequence", "method"),
    ("leveldb.Iterator.Valid", "IsValid", "virtual method"),
    ("Comparator.FindShortestSeparator", "ShortenSeparator", "virtual method"),
    ("Env.NewWritableFile", "OpenWritableFile", "virtual method"),
    ("Options.write_buffer_size", "memtable_budget", "field"),
    ("Version.files_", "level_files_", "field"),
    ("FileMetaData.number", "file_number", "field"),
    ("Arena.alloc_ptr_", "cursor_", "field"),
    ("EncodeFixed32", "StoreFixed32", "function"),
    ("ParseFileName", "DecodeFileName", "function"),
]

_FLAGS = ["-std=c++11", "-O0", "-I.", "-Iinclude", "-DLEVELDB_PLATFORM_POSIX", "-DOS_LINUX",
          "-DLEVELDB_ATOMIC_PRESENT", "-fno-builtin-memcmp", "-pthread", "-w"]
#: Test programs left out: ``db_test`` fails ``HiddenValuesAreRemoved`` on an untouched copy on this machine,
#: ``autocompact_test`` and ``issue178_test`` run for 10-20 s each.
_SKIPPED_TESTS = {"db_test", "autocompact_test", "issue178_test"}
_NOT_LIBRARY = ("_test.cc", "_bench.cc", "leveldbutil.cc", "env_win", "port_win")


def _source() -> Path:
    return npm_package("leveldown", "5.6.0") / "deps" / "leveldb" / "leveldb-1.20"


def _checkout(source: Path, into: Path) -> Path:
    root = into / "repo"
    shutil.copytree(source, root)
    return commit_base(root)


def _compile(root: Path, source: Path, out: Path) -> str | None:
    done = subprocess.run(["g++", *_FLAGS, "-c", str(source.relative_to(root)), "-o", str(out)], cwd=root,
                          capture_output=True, text=True, check=False)
    return None if done.returncode == 0 else next(
        (line for line in done.stderr.splitlines() if "error" in line), done.stderr[-200:]).strip()


def build(root: Path) -> tuple[bool, str]:
    """Compile the library and the test programs, run them: (builds, each program's verdict or the first error)."""
    objects = root / ".objects"
    objects.mkdir(exist_ok=True)
    library = sorted(p for d in ("db", "table", "util", "port", "helpers/memenv") for p in (root / d).glob("*.cc")
                     if not p.name.endswith(_NOT_LIBRARY))
    tests = sorted(p for d in ("db", "table", "util", "helpers/memenv", "issues") for p in (root / d).glob("*_test.cc")
                   if p.stem not in _SKIPPED_TESTS)
    with ThreadPoolExecutor(max_workers=2) as pool:
        errors = [e for e in pool.map(lambda p: _compile(root, p, objects / (p.stem + ".o")), library) if e]
        if errors:
            return False, errors[0]
        linked = list(pool.map(lambda t: subprocess.run(
            ["g++", *_FLAGS, str(t.relative_to(root)), *[str(objects / (p.stem + ".o")) for p in library],
             "-o", str(objects / t.stem)], cwd=root, capture_output=True, text=True, check=False), tests))
    for test, done in zip(tests, linked, strict=True):
        if done.returncode:
            return False, next((line for line in done.stderr.splitlines() if "error" in line),
                               f"{test.stem}: {done.stderr[-200:]}").strip()
    verdicts = []
    for test in tests:
        ran = subprocess.run([str(objects / test.stem)], cwd=root, capture_output=True, text=True, timeout=300,
                             check=False)
        verdicts.append(test.stem if ran.returncode == 0 else f"{test.stem} FAILED")
    passed = sum(1 for v in verdicts if not v.endswith("FAILED"))
    return True, f"{passed}/{len(tests)} test programs pass" + "".join(
        f"; {v}" for v in verdicts if v.endswith("FAILED"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    require("g++", "npm")
    source = _source()
    cases = CASES[:args.limit] if args.limit else CASES
    run_all("Renames across LevelDB 1.20's C++ headers and sources (leveldown 5.6.0 npm tarball; its build and 22 of "
            "its test programs judge each)", "leveldb", cases, lambda into: _checkout(source, into), build)


if __name__ == "__main__":
    main()
