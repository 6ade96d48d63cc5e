"""git subsystem (see ARCHITECTURE.md)."""
