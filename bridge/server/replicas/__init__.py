"""Several server processes as one: the journal that writes running tasks to the database,
the bridge's own tables, the live-frame fan-out (PostgreSQL or Redis) and its factory, the
mirror of a task that runs on another replica, the heartbeat monitor, and a server's
replication wiring them together."""
