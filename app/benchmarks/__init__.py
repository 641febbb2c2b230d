"""Benchmarks, load and reports: measure the service; never imported by the server."""
