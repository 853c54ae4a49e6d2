"""graphctx: ranked, sourced, tenant-isolated context for AI agents."""

__version__ = "0.1.0"
