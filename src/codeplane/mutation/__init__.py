"""mutation subsystem (see ARCHITECTURE.md)."""
