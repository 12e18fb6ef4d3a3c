"""Streams: config, the publish path and the stream features that run on it."""
