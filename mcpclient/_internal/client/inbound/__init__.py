"""Notifications, server requests, the listen stream and client-hosted tasks."""
