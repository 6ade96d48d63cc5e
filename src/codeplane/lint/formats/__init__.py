"""Pure parsers of linters' machine formats into :class:`~codeplane.lint.models.Diagnostic` lists.

Each module reads one format: ``ruff --output-format json``, mypy ``-O json``, ``eslint -f json``,
``biome lint --reporter=json``, ``go vet -json``, cargo's ``--message-format json``, and tsc's
``--pretty false`` lines (it has no JSON). They never run anything; paths go through
:class:`~codeplane.lint.formats.paths.PathMap`, so a diagnostic outside the repository is dropped.
"""

from codeplane.lint.formats.biome import parse_biome
from codeplane.lint.formats.clippy import parse_clippy
from codeplane.lint.formats.eslint import parse_eslint
from codeplane.lint.formats.govet import parse_go_vet
from codeplane.lint.formats.mypy import parse_mypy
from codeplane.lint.formats.paths import PathMap
from codeplane.lint.formats.ruff import parse_ruff
from codeplane.lint.formats.tsc import parse_tsc

__all__ = ["PathMap", "parse_biome", "parse_clippy", "parse_eslint", "parse_go_vet", "parse_mypy", "parse_ruff",
           "parse_tsc"]
