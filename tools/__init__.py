"""Developer tools of the project (code generation)."""
