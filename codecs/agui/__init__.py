"""AG-UI 1.0: the translator from agent events, aggregated by ``llm_response_id``, and the
``RunAgentInput`` request side."""
