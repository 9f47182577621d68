"""Stages, the framework that runs them, and the registry of targets."""
