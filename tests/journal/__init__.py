"""The journal package's tests, one file per module of controller/journal/."""
