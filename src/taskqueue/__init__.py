"""taskqueue: a durable task queue service on PostgreSQL, served over gRPC."""

__version__ = "0.1.0"
