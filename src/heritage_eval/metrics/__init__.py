"""Pure metric functions (no I/O, no model calls), shared by every benchmark."""
