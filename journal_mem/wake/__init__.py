"""What an agent is given: the wake-up pack (build and fit), what a session holds, live
corrections, the session log, client formats and the reminder.
"""
