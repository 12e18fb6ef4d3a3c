"""What outlives a restart: stream files, consumer state, snapshots."""
