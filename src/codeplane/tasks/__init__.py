"""tasks subsystem (see ARCHITECTURE.md)."""
