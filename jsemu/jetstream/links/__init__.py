"""Mirrors and sources: a stream's internal consumers of other streams."""
