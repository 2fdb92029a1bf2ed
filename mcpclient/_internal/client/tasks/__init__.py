"""A call that becomes a task, driven to its end; the task methods of Client."""
