"""Test doubles that run for real: an in-memory artifact sink and a local OpenAI-shaped server."""
