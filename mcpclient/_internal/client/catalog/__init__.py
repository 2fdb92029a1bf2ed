"""Discovery, refresh passes, TTL hints and catalog generations."""
