"""The one error every codec raises for input it cannot translate."""


class CodecError(ValueError):
    """Input that a codec cannot translate; the message says what and where."""
