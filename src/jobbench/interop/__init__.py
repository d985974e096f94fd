"""Bridges to other evaluation frameworks."""
