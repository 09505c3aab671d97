"""Built-in agents the CLI serves by name (``--agent demo``, ``--agent tck``)."""
