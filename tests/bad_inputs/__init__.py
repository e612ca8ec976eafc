"""The bad-input corpus: hostile and broken session files, built at test time (see build.py)."""
