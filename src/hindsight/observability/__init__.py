"""What an operator sees of the running service: Prometheus metrics and structured logs."""
