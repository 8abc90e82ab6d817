"""The `arena` command line."""
