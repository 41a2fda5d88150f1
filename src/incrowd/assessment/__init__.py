"""Disclosure-risk and utility measures of a release against its original."""
