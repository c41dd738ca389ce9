"""The single writer: lock, schedule, safety, adoption of memory it did not write, the
commit, push and watch, and CI's check.
"""
