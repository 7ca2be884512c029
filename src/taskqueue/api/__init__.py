"""The gRPC edge: servicers, request validation, proto conversion, error mapping."""
