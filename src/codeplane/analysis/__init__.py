"""Analysis over the structural index: ``semantic_diff`` (§23.7), structural changes with blast radius."""

from codeplane.analysis.service import SemanticDiffService

__all__ = ["SemanticDiffService"]
