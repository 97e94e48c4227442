"""The three papers' tables and figures, one command each, from run folders."""
