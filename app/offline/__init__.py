"""Offline work: reading data files, fitting and evaluating corrections, the Ray engine."""
