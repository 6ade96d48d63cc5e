"""Foundations shared by every subsystem: paths, hashing, errors, config, logging, clock, processes.

Invariant: nothing in ``core`` imports from any other ``codeplane`` package.
"""
