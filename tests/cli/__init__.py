"""Tests of the command line's start-up: what each command imports before its work."""
