"""Storage: all SQL the service runs. Functions take a connection and never commit."""
