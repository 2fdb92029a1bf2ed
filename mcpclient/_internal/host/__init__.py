"""The parts of :class:`mcpclient.Host`: aggregate model names, the aggregate, parallel start."""
