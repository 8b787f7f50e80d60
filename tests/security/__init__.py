"""Encryption at rest: keys, codec, checkpoints, rotation."""
