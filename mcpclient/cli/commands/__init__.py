"""The command families of ``mcpclient``; each module registers its sub-commands."""
