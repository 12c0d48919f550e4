"""The HTTP interface: FastAPI app, thin routes over the services."""
