"""index subsystem (see ARCHITECTURE.md)."""
