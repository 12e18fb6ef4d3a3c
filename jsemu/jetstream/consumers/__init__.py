"""Consumers: config, the delivery engine, pull requests and the features on them."""
