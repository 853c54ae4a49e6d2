"""Backend adapters: each knows one backend and imports only graphctx core."""
