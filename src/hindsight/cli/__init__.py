"""The `hindsight` command."""
