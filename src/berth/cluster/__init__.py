"""Cluster: an embedded, kubectl-compatible Kubernetes API server with simulated nodes and controllers."""
