"""JetStream account and server limits: counts and storage bytes."""
