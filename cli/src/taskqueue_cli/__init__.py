"""taskq: operate a taskqueue server (dead letters, tasks, queues) over gRPC."""
