"""Starting what the service needs: embedded PostgreSQL and Redis when none is configured."""
