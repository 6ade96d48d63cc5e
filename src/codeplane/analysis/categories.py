"""What kind of file a changed path is, for non-structural changes: prod, test, build, config or docs.

By name only (deterministic, free). Tests win over everything (a ``tests/conftest.py`` is test code), then
build files, docs, config; the rest is production code or data.
"""

from __future__ import annotations

from pathlib import PurePosixPath

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "testdata"})
_BUILD_NAMES = frozenset({
    "makefile", "gnumakefile", "dockerfile", "containerfile", "setup.py", "setup.cfg", "pyproject.toml",
    "package.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock", "uv.lock", "poetry.lock", "go.mod",
    "go.sum", "cargo.toml", "cargo.lock", "build.gradle", "build.gradle.kts", "settings.gradle", "pom.xml",
    "cmakelists.txt", "meson.build", "build.rs", "noxfile.py", "tox.ini", "justfile", "manifest.in",
    "gemfile", "gemfile.lock", "composer.json", "requirements.txt", "pipfile", "pipfile.lock",
})
_BUILD_DIRS = frozenset({".github", ".gitlab", ".circleci", ".ci", "ci", ".buildkite"})
_DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc", ".asciidoc"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
_DOC_STEMS = frozenset({"readme", "changelog", "changes", "license", "licence", "authors", "contributing",
                        "notice", "history", "copying"})
_CONFIG_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".toml", ".ini", ".cfg", ".conf", ".env", ".properties",
                              ".editorconfig", ".xml"})


def category(path: str) -> str:
    p = PurePosixPath(path)
    name = p.name.lower()
    dirs = [part.lower() for part in p.parts[:-1]]
    stem = name.split(".", 1)[0]
    if any(d in _TEST_DIRS for d in dirs) or stem.startswith("test_") or stem.endswith(("_test", "_tests")) \
            or ".test." in name or ".spec." in name or name == "conftest.py":
        return "test"
    if name in _BUILD_NAMES or name.endswith(".lock") or (dirs and dirs[0] in _BUILD_DIRS):
        return "build"
    if p.suffix.lower() in _DOC_SUFFIXES or stem in _DOC_STEMS or (dirs and dirs[0] in _DOC_DIRS):
        return "docs"
    if p.suffix.lower() in _CONFIG_SUFFIXES or (name.startswith(".") and "." not in name[1:]):
        return "config"
    return "prod"
