"""The simulated cluster: stream and consumer peers, replication, leaders and quorum."""
