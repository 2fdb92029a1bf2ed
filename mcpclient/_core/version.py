"""The package version, kept in one place (setup.cfg and clientInfo read it)."""

VERSION = "0.1.0"
