"""Tier 1 of the index (§7.3): structural facts extracted with tree-sitter and stored in SQLite."""
