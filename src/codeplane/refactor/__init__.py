"""refactor subsystem (see ARCHITECTURE.md)."""
