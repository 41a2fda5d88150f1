"""Disclosure-risk and utility assessment of a release beside its original."""
