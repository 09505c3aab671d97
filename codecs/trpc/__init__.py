"""trpc-agent-go's A2A dialect: its wire vocabulary, the event encoder, whole runs (stream
envelope and unary packing), the request side and version negotiation, and the decoder
(``trpc/decode``)."""
