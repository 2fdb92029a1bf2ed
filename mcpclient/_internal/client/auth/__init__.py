"""A 401/403 answered by one authorization flow per binding, then the request again."""
