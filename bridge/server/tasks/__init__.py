"""Tasks while they run and after: the live task and its subscribers, the registry, the
incremental aggregate that ``tasks/get`` reads, the task store and the states and
interruptions the server reasons about. Nothing here knows about replicas: the registry
reaches a journal only through the :class:`~trpc_bridge.server.tasks.live_task.Journal`
protocol."""
