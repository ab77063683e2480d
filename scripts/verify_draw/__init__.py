"""The check of scripts/verify-draw.py: the rules it recomputes (`rules`) and its steps
(`check`)."""
