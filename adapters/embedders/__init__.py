"""embedders adapter."""
