"""Admission, exchange and conversion of every call (blocking and submitted)."""
