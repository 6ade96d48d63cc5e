"""TypeScript path aliases in a move: ``import { fmt } from '@lib/format'`` under ``"paths": {"@lib/*":
["app/lib/*"]}`` names ``app/lib/format.ts`` as surely as a relative specifier does, so moving that file rewrites
it too.

The mapping is the index's (:mod:`codeplane.index.structural.tspaths`: the nearest ``tsconfig.json`` /
``jsconfig.json`` through its ``extends`` chain, a pattern's first target). A moved file still under a ``*``
pattern's target keeps the alias style (``@lib/fmt/format``); elsewhere, or under an exact pattern
(``"@components": ["app/components/index.ts"]``, which the config itself would have to change), the importer
gets a relative specifier in the alias's style (extension as written) — unless that would cross from one
``package.json`` package into another: then :mod:`jsspecifiers` names it through the package, or keeps the old
module exporting it. An alias is location-independent: an importer that moves keeps its aliases as they are.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Set
from dataclasses import dataclass, field

from codeplane.index.structural import tspaths
from codeplane.refactor.jsimports import render_specifier, resolve_path
from codeplane.refactor.spans import SourceText


def config_paths(paths: Iterable[str]) -> list[str]:
    """The TypeScript/JavaScript project configs among ``paths``, with the bases they may ``extends``."""
    return sorted(p for p in paths if tspaths.is_config_text(p))


@dataclass(frozen=True)
class TsAliases:
    """The ``paths``/``baseUrl`` mappings of a repository's configs, by config directory."""

    configs: dict[str, tspaths.Config] = field(default_factory=dict)

    @classmethod
    def of(cls, sources: Iterable[SourceText]) -> TsAliases:
        return cls(tspaths.configs({src.path: src.text for src in sources}))

    def resolve(self, importer: str, spec: str, files: Set[str]) -> str | None:
        """The repository file a non-relative ``spec`` in ``importer`` names through an alias, or ``None``."""
        if not self.configs or spec.startswith(".") or spec.startswith("/"):
            return None
        mapped = tspaths.specifier_path(importer, spec, self.configs)
        return resolve_path(mapped, files) if mapped else None

    def render(self, importer: str, spec: str, old: str, new: str) -> str:
        """``spec`` (resolved to ``old``) rewritten for ``old`` moved to ``new`` (above)."""
        mapped = tspaths.specifier_path(importer, spec, self.configs) or spec
        return self.aliased(importer, spec, old, new) or render_specifier(importer, old, new, mapped)

    def aliased(self, importer: str, spec: str, old: str, new: str) -> str | None:
        """The alias naming ``new`` in the style of ``spec`` (naming ``old``), when a ``*`` pattern reaches it."""
        mapped = tspaths.specifier_path(importer, spec, self.configs) or spec
        # ``render_specifier`` from a file at the root gives the new path in the written style, as ``./path``.
        new_mapped = render_specifier("_", old, new, mapped).removeprefix("./")
        config = self._config_of(importer)
        if config is not None:
            base, _, patterns = config
            for pattern, target in patterns:
                prefix, star, suffix = pattern.partition("*")
                template = posixpath.normpath(posixpath.join(base, target)) if base else posixpath.normpath(target)
                head, star_in_target, tail = template.partition("*")
                if star and star_in_target and new_mapped.startswith(head) and new_mapped.endswith(tail) and \
                        len(new_mapped) > len(head) + len(tail):
                    return prefix + new_mapped[len(head):len(new_mapped) - len(tail)] + suffix
        return None

    def _config_of(self, importer: str) -> tspaths.Config | None:
        directory = importer.rpartition("/")[0]
        while directory not in self.configs:
            if not directory:
                return None
            directory = directory.rpartition("/")[0]
        return self.configs[directory]
