"""Histogram records for the hot path: straight into the SDK's aggregations of an
attribute set already seen, or through ``Histogram.record`` otherwise.

``Histogram.record`` cleans and copies the attributes, hashes them (sorted keys, nested
tuples) and builds a measurement on every call: about 8 µs, most of what metrics cost a
unary request, whose attribute sets are few and fixed. Here the first record of a
(histogram, attribute set) goes through ``record`` (which creates the SDK's aggregation
for it in every reader), and the aggregations found are kept; later records give them
the value directly (about 1.4 µs): the same bucket counts, sum, count, min and max,
which ``tests/telemetry/test_histogram_records.py`` compares with ``record``'s.

The SDK has no public way to do this; the objects used are those of the SDK release this
project installs. Whenever they are not there or not as expected — another SDK release,
a provider that is not the SDK's, a reader that starts new aggregations at every
collection (delta temporality), exemplars switched on — every record goes through
``record``, unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.context import Context
from opentelemetry.metrics import Histogram
from opentelemetry.util.types import AttributeValue

#: A (histogram, attribute set) → its aggregations; ``None``: use ``record``.
_Bound = Sequence[Any] | None
_UNSEEN: Any = object()
#: Exemplars are off on the fast path: the measurement's context is never read.
_NO_CONTEXT = Context()


class HistogramRecords:
    """Records of one set of histograms (one meter provider's); not for ever-new
    attribute sets (the bridge's are few and fixed: its attributes are low-cardinality)."""

    def __init__(self) -> None:
        self._bound: dict[tuple[int, Any], _Bound] = {}

    def record(
        self,
        histogram: Histogram,
        key: Any,
        attributes: Mapping[str, AttributeValue],
        value: float,
    ) -> None:
        """Record ``value`` with ``attributes``, which ``key`` (hashable) stands for."""
        slot = (id(histogram), key)
        bound = self._bound.get(slot, _UNSEEN)
        if bound is _UNSEEN:
            histogram.record(value, attributes)
            self._bound[slot] = _aggregations(histogram, attributes)
            return
        if bound is None:
            histogram.record(value, attributes)
            return
        measurement = _MEASUREMENT(value, time.time_ns(), histogram, _NO_CONTEXT, None)
        for aggregation in bound:
            aggregation.aggregate(measurement, False)


def _aggregations(histogram: Histogram, attributes: Mapping[str, AttributeValue]) -> _Bound:
    """The SDK's aggregations of ``attributes`` in every reader, or ``None``."""
    if not _SDK_PIECES:
        return None
    try:
        consumer = histogram._measurement_consumer  # type: ignore[attr-defined]
        if not isinstance(consumer._sdk_config.exemplar_filter, _ALWAYS_OFF):
            return None
        found = []
        for storage in consumer._reader_storages.values():
            for match in storage._instrument_view_instrument_matches.get(histogram, ()):
                if match._reset_on_collect or match._view._attribute_keys is not None:
                    return None
                aggregation = match._attributes_aggregation.get(_HASH(dict(attributes)))
                if aggregation is None or not callable(getattr(aggregation, "aggregate", None)):
                    return None
                found.append(aggregation)
        return found or None
    except (AttributeError, TypeError):
        return None


try:  # the SDK's own pieces, as the installed release names them
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter as _ALWAYS_OFF
    from opentelemetry.sdk.metrics._internal._view_instrument_match import (
        _hash_attributes as _HASH,
    )
    from opentelemetry.sdk.metrics._internal.measurement import Measurement

    _MEASUREMENT: Any = Measurement

    _SDK_PIECES = True
except ImportError:  # another release: every record goes through ``record``
    _SDK_PIECES = False
