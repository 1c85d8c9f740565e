"""Tests of berth.install (a package so test modules can share helpers without name clashes)."""
