"""The era negotiation of ``protocol="auto"``: one state machine on one connection.

The connect sends ``server/discover`` (the modern era's first request) and
waits for it; when no answer has come by the *fallback instant* it sends
``initialize`` too, on the same connection, and keeps waiting for both. The
probe itself waits for the whole startup budget: a server that starts
slowly and answers it late is still taken for what it is. Every answer is
read for what it says, whenever it comes (docs/architecture.md, "Era
negotiation", has the whole table):

* a discover result listing a modern version this client speaks: modern;
* a discover result (or a -32022) listing only legacy versions this client
  speaks: ``initialize``, offering the best of them;
* any other answer to the probe (an error, a non-discover result, an HTTP
  4xx): ``initialize`` now;
* an ``initialize`` result: legacy;
* an ``initialize`` refusal naming a modern version this client speaks (a
  dual-era server locked to the era of the probe it read first): modern,
  from the probe's answer if it is still to come, else from a new probe;
* any other refusal: the probe's answer decides while it is pending, else
  the refusal is the error.

Threads:
    None of its own. The connecting thread drives it, waiting on the two
    requests' Futures; the reader completes them, and the process-wide
    watcher expires them at the startup deadline.

Locks:
    None: one thread owns a negotiation.

Shutdown:
    When it decides (or fails), a request still pending leaves the table
    locally: neither ``initialize`` nor the probe is ever cancelled on the
    wire (the spec forbids the first; a legacy server never knew the second).
"""

from __future__ import annotations

import concurrent.futures

from mcpclient._core.deadline import now
from mcpclient._internal.session import protocol as proto
from mcpclient._internal.session.context import startup_context
from mcpclient._internal.session.headers import EraHeaders
from mcpclient._internal.session.request_table import Pending
from mcpclient._internal.session.rpc import RemoteError, RpcSession
from mcpclient._internal.wire.session import client_capabilities, initialize_params
from mcpclient.calls import CancelToken
from mcpclient.definition import ClientCapabilities, Extension
from mcpclient.errors import DeadlineExceededError, Error, FailureClass, ProtocolError

__all__ = ["Negotiation"]

# How long past the deadline the connecting thread waits for the watcher to
# expire what is pending before it gives up on its own (defensive only).
_EXPIRY_GRACE = 1.0


class Negotiation:
    """The ``auto`` negotiation of one connection; :meth:`run` drives it once.

    Thread safety: one thread (the connecting one) owns it.
    """

    def __init__(
        self,
        session: RpcSession,
        *,
        client_caps: ClientCapabilities,
        extensions: tuple[Extension, ...],
        binding: str,
        deadline: float,
        cancel: CancelToken | None,
        fallback_at: float,
    ) -> None:
        self._session = session
        self._client_caps = client_caps
        self._extensions = extensions
        self._binding = binding
        self._deadline = deadline
        self._cancel = cancel
        self._fallback_at = fallback_at
        self._http = session.sends_messages
        #: Whether a probe went to this server (a death after it may be the probe's doing).
        self.probe_sent = False
        self._probe: Pending | None = None
        self._probe_version = proto.MODERN
        self._probes = 0
        self._init: Pending | None = None
        self._init_offer = proto.LATEST_LEGACY
        self._inits = 0
        self._refusal: Error | None = None  # initialize's, kept while the probe may still win
        # Set once a handshake request expired: the notes its error carried
        # (what the server wrote meanwhile), kept for the error that says why.
        self._expiry_notes: list[str] | None = None

    # -- driving ---------------------------------------------------------------

    def run(self, *, probe_first: bool = True) -> proto.Protocol:
        """Negotiate; ``probe_first=False`` starts with ``initialize`` (a cached legacy era).

        Raises:
            Error: classified (``startup_timeout``, ``cancelled``,
                ``transport_closed``, ``server_protocol``, ``unsupported_protocol``).
        """
        try:
            if probe_first:
                self._send_probe(proto.MODERN)
            else:
                self._send_initialize(proto.LATEST_LEGACY)
            while True:
                decided = self._step()
                if decided is not None:
                    return decided
        finally:
            for pending in (self._probe, self._init):
                if pending is not None:
                    pending.cancel()  # locally: neither is cancelled on the wire

    def _step(self) -> proto.Protocol | None:
        """Wait for the next answer (or the fallback instant) and act on it."""
        waiting = [p for p in (self._probe, self._init) if p is not None]
        if not waiting:
            raise self._no_agreement()
        fallback = self._probe is not None and self._inits == 0
        limit = self._fallback_at if fallback else self._deadline + _EXPIRY_GRACE
        done, _ = concurrent.futures.wait(
            waiting, timeout=max(0.0, limit - now()), return_when=concurrent.futures.FIRST_COMPLETED
        )
        if not done:
            if fallback:
                # No answer yet: a silent legacy server may be waiting for the
                # handshake. The probe stays pending: a late answer still counts.
                self._send_initialize(proto.LATEST_LEGACY)
                return None
            self._expired(None)
            raise self._no_agreement()
        # The probe first: when both are in, a modern answer wins.
        if self._probe in done:
            decided = self._probe_answered()
            if decided is not None:
                return decided
        if self._init is not None and self._init in done:
            return self._initialize_answered()
        return None

    # -- the probe ---------------------------------------------------------------

    def _send_probe(self, version: str) -> None:
        self._probes += 1
        self._probe_version = version
        self.probe_sent = True
        if self._http:
            self._session.era_headers = EraHeaders(version, modern=True)
        caps = client_capabilities(self._client_caps, version, self._extensions)
        # A legacy server never saw a request it knows: nothing to cancel on the wire.
        ctx = startup_context("server/discover", self._deadline, self._cancel, cancel_on_wire=False)
        self._probe = self._session.submit(
            "server/discover", {"_meta": proto.modern_meta(caps, version)}, ctx
        )

    def _probe_answered(self) -> proto.Protocol | None:
        pending, self._probe = self._probe, None
        assert pending is not None
        try:
            result = pending.outcome()
        except RemoteError as exc:
            retry = proto.discover_refused(
                exc,
                sent=self._probe_version,
                retried=self._probes > 1,
                pinned=False,
                binding=self._binding,
            )
            if isinstance(retry, str):
                self._send_probe(retry)
            elif isinstance(retry, proto.LegacyOffer):
                self._handshake(retry.version)
            else:
                self._handshake(None)
            return None
        except DeadlineExceededError as exc:
            self._expired(exc)
            return None
        except ProtocolError as exc:
            if not proto.refused_over_http(exc):
                raise
            self._handshake(None)
            return None
        answer = proto.read_discover_answer(
            result,
            sent=self._probe_version,
            client_caps=self._client_caps,
            extensions=self._extensions,
            binding=self._binding,
            log_level=None,
            pinned=False,
        )
        if isinstance(answer, proto.Protocol):
            if self._http:
                self._session.era_headers = EraHeaders(answer.version, modern=True)
            return answer
        self._handshake(answer.version if isinstance(answer, proto.LegacyOffer) else None)
        return None

    def _handshake(self, offer: str | None) -> None:
        """The probe says legacy: make sure ``initialize`` is (or was) asked, offering ``offer``."""
        if self._init is not None:
            return  # asked already: any legacy version it answers is taken
        if self._refusal is None and self._inits == 0:
            self._send_initialize(offer or proto.LATEST_LEGACY)
        elif offer is not None and offer != self._init_offer and self._inits < 2:
            # Refused at another version before the probe named this one.
            self._send_initialize(offer)
        # Otherwise initialize was refused already: nothing is pending, the
        # refusal is the answer (_no_agreement).

    # -- initialize --------------------------------------------------------------

    def _send_initialize(self, offer: str) -> None:
        self._inits += 1
        self._init_offer = offer
        self._refusal = None
        if self._http:
            # initialize carries no modern headers; the probe's are fixed already.
            self._session.era_headers = None
        caps = client_capabilities(self._client_caps, offer, self._extensions)
        # initialize must never be cancelled on the wire (spec).
        ctx = startup_context("initialize", self._deadline, self._cancel, cancel_on_wire=False)
        self._init = self._session.submit("initialize", initialize_params(offer, caps), ctx)

    def _initialize_answered(self) -> proto.Protocol | None:
        pending, self._init = self._init, None
        assert pending is not None
        try:
            result = pending.outcome()
        except RemoteError as exc:
            try:
                retry = proto.initialize_refused(
                    exc,
                    offer=self._init_offer,
                    pinned=False,
                    retried=self._inits > 1,
                    binding=self._binding,
                )
            except proto.ModernRefusalError as refusal:
                # Locked to the era of the probe it read first (or modern only).
                self._refusal = refusal
                if self._probe is None and self._probes < 3:
                    self._send_probe(refusal.version)
                return None
            except ProtocolError as refusal:
                self._refused(refusal)
                return None
            self._send_initialize(retry)
            return None
        except DeadlineExceededError as exc:
            self._expired(exc)
            return None
        except ProtocolError as exc:
            self._refused(exc)
            return None
        protocol = proto.initialized(
            self._session,
            result,
            offer=self._init_offer,
            pinned=False,
            client_caps=self._client_caps,
            extensions=self._extensions,
            binding=self._binding,
        )
        return protocol

    def _refused(self, refusal: ProtocolError) -> None:
        """``initialize`` was refused outright: the probe decides, if it can still."""
        self._refusal = refusal
        if self._probe is None and not self.probe_sent:
            # A cached legacy era may be stale: ask the modern way once.
            self._send_probe(proto.MODERN)

    # -- giving up ---------------------------------------------------------------

    def _no_agreement(self) -> Error:
        """Nothing is pending and nothing was agreed: the error that says why."""
        refusal = self._refusal
        if refusal is not None and not isinstance(refusal, proto.ModernRefusalError):
            return refusal
        if refusal is not None and self._expiry_notes is None:
            return refusal
        if self.probe_sent and self._inits:
            asked = "the modern era's server/discover or the legacy initialize handshake"
        elif self.probe_sent:
            asked = "the modern era's server/discover"
        else:
            asked = "the legacy initialize handshake"
        error = DeadlineExceededError(
            f"no answer to {asked}",
            failure_class=FailureClass.STARTUP_TIMEOUT,
            binding=self._binding,
            op="connect",
        )
        for note in self._expiry_notes or ():
            error.add_note(note)
        return error

    def _expired(self, exc: DeadlineExceededError | None) -> None:
        """A handshake request ran out of time; keep the first expiry's notes."""
        if not self._expiry_notes:
            self._expiry_notes = list(getattr(exc, "__notes__", ()))
