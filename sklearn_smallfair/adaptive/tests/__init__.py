"""Tests of sklearn_smallfair.adaptive."""
