"""A2A's own shapes, whatever the dialect: results read into one neutral form, the 0.3
JSON writer for stream frames, the streamed text delta before it is protobuf, and the
protobuf ``Struct`` filler."""
