"""The graphctx contract suite (see docs/adapters.md)."""
