"""§8.4.4 include specs, universal excludes and hole punches as compiled globs.

Specs are written relative to a context root. ``**/`` matches zero or more directories, a trailing ``/**``
everything below, ``*`` and ``?`` stay within one path segment. All patterns of a spec compile into one
regular expression, so a membership test is a single match.
"""

from __future__ import annotations

import re
from functools import cache

INCLUDE_SPECS: dict[str, tuple[str, ...]] = {
    "javascript": ("**/*.js", "**/*.jsx", "**/*.mjs", "**/*.cjs", "**/*.vue", "**/*.svelte", "**/*.astro",
                   "**/*.ts", "**/*.tsx", "**/*.cts", "**/*.mts"),
    "python": ("**/*.py", "**/*.pyi", "**/*.pyw", "**/*.pyx", "**/*.pxd", "**/*.pxi"),
    "go": ("**/*.go",),
    "rust": ("**/*.rs",),
    "jvm": ("**/*.java", "**/*.kt", "**/*.kts", "**/*.scala", "**/*.sc"),
    "dotnet": ("**/*.cs", "**/*.fs", "**/*.fsx", "**/*.vb"),
    "ruby": ("**/*.rb", "**/*.rake", "**/Gemfile"),
    "php": ("**/*.php",),
    "swift": ("**/*.swift",),
    "elixir": ("**/*.ex", "**/*.exs"),
    "haskell": ("**/*.hs",),
    "terraform": ("**/*.tf", "**/*.hcl"),
    "sql": ("**/*.sql",),
    "docker": ("**/Dockerfile", "**/*.Dockerfile", "**/docker-compose.yml", "**/docker-compose.yaml"),
    "markdown": ("**/*.md", "**/*.markdown", "**/*.mdx"),
    "json_yaml": ("**/*.json", "**/*.yaml", "**/*.yml", "**/*.toml", "**/*.jsonc"),
    "protobuf": ("**/*.proto",),
    "graphql": ("**/*.graphql", "**/*.gql"),
    "config": ("**/*.nix",),
}

UNIVERSAL_EXCLUDES: tuple[str, ...] = (
    "**/node_modules/**", "**/venv/**", "**/__pycache__/**", "**/.git/**", "**/target/**", "**/dist/**",
    "**/build/**", "**/vendor/**")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


@cache
def compile_spec(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for a whole spec (``None`` for an empty spec, which matches nothing)."""
    if not patterns:
        return None
    return re.compile("(?:" + "|".join(f"(?:{_translate(p)})" for p in patterns) + r")\Z")


def matches(patterns: tuple[str, ...], relative_path: str) -> bool:
    regex = compile_spec(patterns)
    return bool(regex is not None and regex.match(relative_path))


def is_inside(file_path: str, root_path: str) -> bool:
    """§8.4.1 C, segment-safe containment."""
    if root_path == "":
        return True
    if file_path == root_path:
        return True
    return file_path.startswith(root_path + "/")


def relative_to(path: str, root: str) -> str:
    return path if root == "" else path[len(root) + 1:]
