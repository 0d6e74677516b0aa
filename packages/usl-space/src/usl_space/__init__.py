"""usl_space: the User-centric Subjective Leaderboard."""
