"""Histogram records for the hot path: straight into the SDK's aggregations of an
attribute set already seen, or through ``Histogram.record`` otherwise.

``Histogram.record`` cleans and copies the attributes, hashes them (sorted keys, nested
tuples) and builds a measurement on every call: about 8 µs, most of what metrics cost a
unary request, whose attribute sets are few and fixed. Here the first record of a
(histogram, attribute set) goes through ``record`` (which creates the SDK's aggregation
for it in every reader), and the aggregations found are kept; later records give them
the value directly: the same bucket counts, sum, count, min and max, which
``tests/telemetry/test_histogram_records.py`` compares with ``record``'s. With exemplars
off, an explicit-bucket aggregation reads nothing of a measurement but its value, so the
value goes in a bare holder, not the SDK's ``Measurement`` (a frozen dataclass whose
construction cost as much as the aggregation itself) stamped with a clock read.

The SDK has no public way to do this; the objects used are those of the SDK release this
project installs. Whenever they are not there or not as expected — another SDK release,
a provider that is not the SDK's, a reader that starts new aggregations at every
collection (delta temporality), exemplars switched on, a view that aggregates otherwise
than in explicit buckets — every record goes through ``record``, unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from opentelemetry.metrics import Histogram
from opentelemetry.util.types import AttributeValue

#: Not resolved yet: the first record goes through ``record``.
_UNSEEN: Any = object()


class BoundHistogram:
    """One histogram with one attribute set: :meth:`record` gives a value to the SDK's
    aggregations of that set once the first record has created them (see the module
    doc)."""

    __slots__ = ("_aggregations", "_attributes", "_histogram")

    def __init__(self, histogram: Histogram, attributes: Mapping[str, AttributeValue]) -> None:
        self._histogram = histogram
        self._attributes = attributes
        #: The ``aggregate`` of its aggregation in every reader; ``None``: every record goes
        #: through ``record``.
        self._aggregations: Sequence[Any] | None = _UNSEEN

    def record(self, value: float) -> None:
        aggregations = self._aggregations
        if aggregations is None or aggregations is _UNSEEN:
            self._histogram.record(value, self._attributes)
            if aggregations is _UNSEEN:
                self._aggregations = _aggregations(self._histogram, self._attributes)
            return
        # Exemplars are off on the fast path: ``aggregate`` reads the value only.
        measurement = SimpleNamespace(value=value)
        for aggregate in aggregations:
            aggregate(measurement, False)


class HistogramRecords:
    """Records of one set of histograms (one meter provider's); not for ever-new
    attribute sets (the bridge's are few and fixed: its attributes are low-cardinality)."""

    def __init__(self) -> None:
        self._bound: dict[tuple[int, Any], BoundHistogram] = {}

    def bind(
        self, histogram: Histogram, key: Any, attributes: Mapping[str, AttributeValue]
    ) -> BoundHistogram:
        """``histogram`` with ``attributes``, which ``key`` (hashable) stands for: one
        :class:`BoundHistogram` per (histogram, key), for a caller to keep."""
        slot = (id(histogram), key)
        bound = self._bound.get(slot)
        if bound is None:
            bound = self._bound[slot] = BoundHistogram(histogram, attributes)
        return bound

    def record(
        self,
        histogram: Histogram,
        key: Any,
        attributes: Mapping[str, AttributeValue],
        value: float,
    ) -> None:
        """Record ``value`` with ``attributes``, which ``key`` (hashable) stands for."""
        self.bind(histogram, key, attributes).record(value)


def _aggregations(
    histogram: Histogram, attributes: Mapping[str, AttributeValue]
) -> Sequence[Any] | None:
    """The ``aggregate`` of the SDK's aggregation of ``attributes`` in every reader, or
    ``None``."""
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
                if type(aggregation) is not _EXPLICIT_BUCKETS:
                    return None
                found.append(aggregation.aggregate)
        return found or None
    except (AttributeError, TypeError):
        return None


try:  # the SDK's own pieces, as the installed release names them
    from opentelemetry.sdk.metrics import AlwaysOffExemplarFilter as _ALWAYS_OFF
    from opentelemetry.sdk.metrics._internal._view_instrument_match import (
        _hash_attributes as _HASH,
    )
    from opentelemetry.sdk.metrics._internal.aggregation import (
        _ExplicitBucketHistogramAggregation as _EXPLICIT_BUCKETS,
    )

    _SDK_PIECES = True
except ImportError:  # another release: every record goes through ``record``
    _SDK_PIECES = False
